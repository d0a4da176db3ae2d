package handlers

import (
	"errors"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/calendar/eventcal/app/access"
	"github.com/calendar/eventcal/app/apierr"
	"github.com/calendar/eventcal/app/calendar"
	"github.com/calendar/eventcal/app/input"
	"github.com/calendar/eventcal/app/input/values"
	"github.com/calendar/eventcal/app/present"
	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/search"
)

// items is what the handlers of events, venues and organizers share: how
// a route finds its item (by ID or slug), the single read, the delete and
// the venue and organizer lists. Writes go through the calendar service
// (cal); each resource's handler type decodes its own commands.
type items struct {
	kind       repository.Kind
	res        string // "event", "venue", "organizer": error codes and messages
	collection string // route segment
	cfg        *config.Config
	store      repository.Store
	render     *present.Renderer
	now        func() time.Time
	// search serves the lists.
	search search.Engine
	log    *slog.Logger
	cal    *calendar.Service
}

// events serves the event routes: items, writes, lists, feeds and the
// occurrence routes of series.
type events struct{ *items }

// venues serves the venue writes (reads and lists: items).
type venues struct{ *items }

// organizers serves the organizer writes (reads and lists: items).
type organizers struct{ *items }

// postTypes returns the handlers of events, venues and organizers.
func (s *API) postTypes() (*events, *venues, *organizers) {
	it := func(kind repository.Kind, collection string) *items {
		return &items{kind: kind, res: string(kind), collection: collection, cfg: s.cfg, store: s.store,
			render: s.render, now: s.now, search: s.search, log: s.log, cal: s.cal}
	}
	return &events{it(repository.KindEvent, "events")}, &venues{it(repository.KindVenue, "venues")},
		&organizers{it(repository.KindOrganizer, "organizers")}
}

// lookup says how a route addresses its item.
type lookup int

const (
	byID lookup = iota
	bySlug
)

// load finds the item a by-ID or by-slug route addresses. A missing
// item is 404 (docs/decisions.md, "Reads"); an ID of another kind is 400
// rest-invalid-event-id for events (as the original plugin answers) and
// 404 otherwise.
func (pt *items) load(r *Request, how lookup) (*repository.Record, error) {
	if how == byID {
		id, _ := strconv.ParseInt(r.c.Params("id"), 10, 64)
		p, err := pt.store.GetRecord(r.ctx, id)
		if errors.Is(err, repository.ErrNotFound) {
			return nil, apierr.NotFound(pt.res, id)
		}
		if err != nil {
			return nil, err
		}
		if p.Kind != pt.kind {
			if pt.kind == repository.KindEvent {
				return nil, apierr.New(400, "rest-invalid-event-id", "The specified ID is not a valid event.")
			}
			return nil, apierr.NotFound(pt.res, id)
		}
		return p, nil
	}
	slug, err := url.PathUnescape(r.c.Params("slug"))
	if err != nil {
		slug = r.c.Params("slug")
	}
	def := pt.cfg.DefaultLanguage
	p, err := pt.store.GetRecordBySlug(r.ctx, pt.kind, r.lang, slug)
	if errors.Is(err, repository.ErrNotFound) && r.lang != def {
		p, err = pt.store.GetRecordBySlug(r.ctx, pt.kind, def, slug)
	}
	// A record with no slug in the request language or the default one
	// shows its first language's slug (docs/decisions.md, "Languages"): that
	// slug finds it too, and only when it is the one shown.
	for _, l := range pt.cfg.Languages {
		if !errors.Is(err, repository.ErrNotFound) {
			break
		}
		if l == r.lang || l == def {
			continue
		}
		p, err = pt.store.GetRecordBySlug(r.ctx, pt.kind, l, slug)
		if err == nil && p.Slug.Get(r.lang, def, pt.cfg.Languages...) != slug {
			p, err = nil, repository.ErrNotFound
		}
	}
	if errors.Is(err, repository.ErrNotFound) {
		title := strings.ToUpper(pt.res[:1]) + pt.res[1:]
		return nil, apierr.New(404, "rest-"+pt.res+"-not-found", title+" with slug "+slug+" does not exist.")
	}
	return p, err
}

// readArgs declares the parameters of a single read.
func (pt *items) readArgs() []Arg {
	return []Arg{
		{Name: "password", Type: tString, Desc: "The password of a password-protected event."},
		{Name: "context", Type: tString, Enum: []string{"view", "edit"}, Default: "view", Desc: "edit shows protected content to callers who may edit the item."},
	}
}

// deleteArgs declares the parameters of a delete.
func (pt *items) deleteArgs() []Arg {
	return []Arg{
		{Name: "password", Type: tString, Desc: "Accepted for compatibility; irrelevant for deletes."},
		{Name: "force", Type: tBoolean, Default: false, Desc: "Delete permanently instead of moving to the trash (editors and admins)."},
	}
}

// writeArgs declares the parameters of a create (required fields
// enforced) or an update (everything optional) of the kind.
func (pt *items) writeArgs(create bool) []Arg { return writeArgs(pt.kind, create) }

// get serves GET by ID or slug with the original plugin's visibility rules
// (access.CheckReadable): a trashed item the caller may not edit is 403
// …-no-longer-available, an unpublished one the caller may not read 403
// …-not-accessible, and a password-protected one 403 …-password-protected
// without the password.
func (pt *items) get(how lookup) func(r *Request) error {
	return func(r *Request) error {
		p, err := pt.load(r, how)
		if err != nil {
			return err
		}
		if err := pt.checkReadable(r, p); err != nil {
			return err
		}
		return r.sendPost(200, p, true)
	}
}

// checkReadable applies the trash, status and password rules to a single read.
func (pt *items) checkReadable(r *Request, p *repository.Record) error {
	return access.CheckReadable(r.user, p, pt.res, r.reader.Unlocks(p))
}

// sendPost renders one post of any kind.
func (r *Request) sendPost(status int, p *repository.Record, single bool) error {
	l, err := r.loadLinked([]*repository.Record{p})
	if err != nil {
		return err
	}
	v := present.View{Lang: r.lang, Single: single}
	switch p.Kind {
	case repository.KindEvent:
		return present.SendJSON(r.c, status, r.s.render.Event(p, l, v))
	case repository.KindVenue:
		return present.SendJSON(r.c, status, r.s.render.Venue(p, l, v))
	default:
		return present.SendJSON(r.c, status, r.s.render.Organizer(p, l, v))
	}
}

// create serves POST on a collection: the caller must be one who may
// create items, then write (decode, call the calendar) makes the item,
// answered with 201.
func create(write func(r *Request) (*repository.Record, error)) func(r *Request) error {
	return func(r *Request) error {
		if !access.CanCreateRecords(r.user) {
			return access.Forbidden(r.user)
		}
		p, err := write(r)
		if err != nil {
			return err
		}
		return r.sendPost(201, p, false)
	}
}

// edit serves POST/PUT/PATCH on one item (a partial update): the item
// the caller may edit, then write (decode, call the calendar), answered
// with 200.
func (pt *items) edit(how lookup, write func(r *Request, cur *repository.Record) (*repository.Record, error)) func(r *Request) error {
	return func(r *Request) error {
		cur, err := pt.loadEditable(r, how)
		if err != nil {
			return err
		}
		p, err := write(r, cur)
		if err != nil {
			return err
		}
		return r.sendPost(200, p, false)
	}
}

// post serves POST /events.
func (ev *events) post(r *Request) error {
	return create(func(r *Request) (*repository.Record, error) {
		in, err := decodeEvent(r, r.bag)
		if err != nil {
			return nil, err
		}
		return ev.cal.CreateEvent(r.ctx, r.user, r.lang, in)
	})(r)
}

// update serves POST/PUT/PATCH on one event.
func (ev *events) update(how lookup) func(r *Request) error {
	return ev.edit(how, func(r *Request, cur *repository.Record) (*repository.Record, error) {
		in, err := decodeEvent(r, r.bag)
		if err != nil {
			return nil, err
		}
		return ev.cal.UpdateEvent(r.ctx, r.user, r.lang, cur, in)
	})
}

// post serves POST /venues: a new venue, or a duplicate reused
// (calendar.Service.CreateVenue).
func (ve *venues) post(r *Request) error {
	return create(func(r *Request) (*repository.Record, error) {
		p, _, err := ve.cal.CreateVenue(r.ctx, r.user, r.lang, decodeVenue(r.bag))
		return p, err
	})(r)
}

// update serves POST/PUT/PATCH on one venue.
func (ve *venues) update(how lookup) func(r *Request) error {
	return ve.edit(how, func(r *Request, cur *repository.Record) (*repository.Record, error) {
		return ve.cal.UpdateVenue(r.ctx, r.user, r.lang, cur, decodeVenue(r.bag))
	})
}

// post serves POST /organizers: a new organizer, or a duplicate reused
// (calendar.Service.CreateOrganizer).
func (or *organizers) post(r *Request) error {
	return create(func(r *Request) (*repository.Record, error) {
		p, _, err := or.cal.CreateOrganizer(r.ctx, r.user, r.lang, decodeOrganizer(r.bag))
		return p, err
	})(r)
}

// update serves POST/PUT/PATCH on one organizer.
func (or *organizers) update(how lookup) func(r *Request) error {
	return or.edit(how, func(r *Request, cur *repository.Record) (*repository.Record, error) {
		return or.cal.UpdateOrganizer(r.ctx, r.user, r.lang, cur, decodeOrganizer(r.bag))
	})
}

// loadEditable finds the item a write route addresses (load) and
// refuses a caller who may not edit it.
func (pt *items) loadEditable(r *Request, how lookup) (*repository.Record, error) {
	cur, err := pt.load(r, how)
	if err != nil {
		return nil, err
	}
	if !access.CanEditRecord(r.user, cur) {
		return nil, access.Forbidden(r.user)
	}
	return cur, nil
}

// delete serves DELETE: trash (200 with the trashed item), 410 when
// already trashed, or a permanent delete with force (editors and admins;
// calendar.Service.Delete).
func (pt *items) delete(how lookup) func(r *Request) error {
	return func(r *Request) error {
		cur, err := pt.loadEditable(r, how)
		if err != nil {
			return err
		}
		force, _ := input.AsBool(r.bag.Values["force"])
		p, err := pt.cal.Delete(r.ctx, r.user, cur, force)
		if err != nil {
			return err
		}
		return r.sendPost(200, p, false)
	}
}

// validURL reports whether s is an absolute http(s) URL the service
// stores (values.WebURL).
func validURL(s string) bool { return values.WebURL(s) }

// imageURLExtension is values.ImageURLExtension.
func imageURLExtension(raw string) (string, bool) { return values.ImageURLExtension(raw) }
