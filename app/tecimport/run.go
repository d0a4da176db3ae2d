package tecimport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/calendar/eventcal/config/limits"
	"github.com/calendar/eventcal/repository"
)

// lookupBatch is how many IDs one GetPosts/GetTerms call asks for.
const lookupBatch = 500

// record is one source record mapped to its store form.
type record struct {
	kind  string
	id    int64
	post  *repository.Post
	term  *repository.Term
	depth int // categories: 0 for a root
	// action is what the write phase does: create, update or nothing.
	action action
}

type action int

const (
	actNone action = iota
	actCreate
	actUpdate
)

// importRun is one import.
type importRun struct {
	c        *client
	store    repository.Store
	opts     Options
	m        *mapper
	rep      *Report
	progress Progress
	log      *slog.Logger

	// raw holds the source records read, per kind and ID.
	raw map[string]map[int64]json.RawMessage
	// recs holds the mapped records, per kind and ID.
	recs map[string]map[int64]*record
	// own holds the IDs of the store's records imported earlier from
	// this source, per kind.
	own map[string]map[int64]bool
	// unseen holds own records the source neither listed nor denied
	// (a single read answered neither 200 nor "no such record"): kept.
	unseen map[string]map[int64]bool
	// protected are the password-protected events.
	protected map[int64]bool
}

// listOf is the source list of each kind read from lists.
var listOf = map[string]listKind{
	KindCategory: listCategories, KindTag: listTags, KindVenue: listVenues,
	KindOrganizer: listOrganizers, KindEvent: listEvents,
}

func (r *importRun) run(ctx context.Context) error {
	r.raw, r.recs, r.own, r.unseen = map[string]map[int64]json.RawMessage{}, map[string]map[int64]*record{}, map[string]map[int64]bool{}, map[string]map[int64]bool{}
	r.protected = map[int64]bool{}
	r.m.images = map[int64]*tecImage{}
	for _, k := range kinds {
		r.raw[k], r.recs[k], r.own[k], r.unseen[k] = map[int64]json.RawMessage{}, map[int64]*record{}, map[int64]bool{}, map[int64]bool{}
	}
	if err := r.fetch(ctx); err != nil {
		return err
	}
	r.mapAll()
	r.resolveLinks()
	if err := r.stamp(); err != nil {
		return err
	}
	if err := r.classify(ctx); err != nil {
		return err
	}
	if r.opts.DryRun {
		return nil
	}
	if err := r.write(ctx); err != nil {
		return err
	}
	if r.opts.Prune {
		return r.prune(ctx)
	}
	return nil
}

// fetch reads every list, the hidden events, the store's own records the
// lists lack, and the password-protected events.
func (r *importRun) fetch(ctx context.Context) error {
	if r.m.zone == nil {
		zone, err := r.c.siteZone(ctx)
		if err != nil {
			return err
		}
		if zone == nil {
			zone = time.UTC
			r.log.Info("the site's time zone is not readable from its REST index; the dates of drafts are read in UTC")
		}
		r.m.zone = zone
	}
	for _, kind := range []string{KindCategory, KindTag, KindVenue, KindOrganizer, KindEvent} {
		l := listOf[kind]
		r.progress.Start("read "+l.name, -1)
		items, total, err := r.c.fetchList(ctx, l, func(total, n int) {
			if total > 0 {
				r.progress.Total(total)
			}
			r.progress.Add(n)
		})
		r.progress.Finish()
		if err != nil {
			return err
		}
		for _, it := range items {
			if it.id <= 0 {
				r.fail(kind, 0, fieldErr("id", "missing or not a positive number"))
				continue
			}
			r.raw[kind][it.id] = it.raw
		}
		if total >= 0 && total != len(items) {
			r.rep.warnf("the %s list announced %d records (X-TEC-Total) and gave %d (records changed while it was read?); run the import again", l.name, total, len(items))
		}
		r.log.Info("read", "list", l.name, "records", len(items))
	}

	// Events hidden from listings are in no TEC list; WordPress's own
	// route enumerates every event ID.
	var probe []int64
	wp, ok, err := r.c.wpEventIDs(ctx)
	if err != nil {
		return err
	}
	wpIDs := wp.ids
	if !ok {
		r.rep.warnf("WordPress's wp/v2/tribe_events route is not reachable from %s: events hidden from listings (which no TEC list shows) are imported only if an earlier import has them", r.rep.Source)
	}
	for _, id := range wpIDs {
		if _, listed := r.raw[KindEvent][id]; !listed {
			probe = append(probe, id)
		}
	}

	if err := r.scanOwn(ctx); err != nil {
		return err
	}
	// Records imported earlier that the lists lack: hidden events, or
	// records the source deleted. A single read tells them apart.
	probes := map[string][]int64{KindEvent: probe}
	for _, kind := range []string{KindCategory, KindTag, KindVenue, KindOrganizer, KindEvent} {
		for id := range r.own[kind] {
			if _, listed := r.raw[kind][id]; !listed && !slices.Contains(probes[kind], id) {
				probes[kind] = append(probes[kind], id)
			}
		}
	}
	for _, kind := range []string{KindCategory, KindTag, KindVenue, KindOrganizer, KindEvent} {
		ids := probes[kind]
		if len(ids) == 0 {
			continue
		}
		slices.Sort(ids)
		r.progress.Start("read unlisted "+listOf[kind].name, len(ids))
		for _, id := range ids {
			if err := r.probe(ctx, kind, id); err != nil {
				r.progress.Finish()
				return err
			}
			r.progress.Add(1)
		}
		r.progress.Finish()
	}
	return r.findProtected(ctx, wp, ok)
}

// probe reads one record the lists did not show.
func (r *importRun) probe(ctx context.Context, kind string, id int64) error {
	body, res, err := r.c.fetchSingle(ctx, listOf[kind], id)
	if err != nil {
		return err
	}
	switch {
	case body != nil:
		r.raw[kind][id] = body
	case gone(res):
		// No such record (any more): disappeared if imported before.
	case kind == KindEvent && res.status == http.StatusForbidden && res.code() == "event-password-protected":
		r.protected[id] = true
		if r.own[kind][id] {
			r.unseen[kind][id] = true
		} else {
			r.fail(kind, id, fieldErr("password", "hidden from listings and password-protected: the source gives nothing of it without the password"))
		}
	default:
		if r.own[kind][id] {
			r.unseen[kind][id] = true
			r.rep.warnf("%s %d: the source did not list it and a read answered %s; kept as imported before", kind, id, res.describe())
		} else {
			r.rep.warnf("%s %d: WordPress lists it but a read answered %s; not imported", kind, id, res.describe())
		}
	}
	return nil
}

// findProtected finds the password-protected events. WordPress's own
// route says which they are (content.protected); the events it did not
// list that look redacted (no description, excerpt, terms, venue or
// organizer: what the TEC lists show of a protected event) are read one
// by one: a protected one answers 403 event-password-protected, even to
// an admin.
func (r *importRun) findProtected(ctx context.Context, wp wpEvents, wpOK bool) error {
	listed := map[int64]bool{}
	for _, id := range wp.ids {
		listed[id] = true
		if wp.protected[id] {
			r.protected[id] = true
		}
	}
	var ids []int64
	for id, raw := range r.raw[KindEvent] {
		if wpOK && listed[id] {
			continue
		}
		var e struct {
			Description, Excerpt string
			Categories, Tags     []json.RawMessage
			Venue, Organizer     json.RawMessage
		}
		if json.Unmarshal(raw, &e) != nil {
			continue
		}
		empty := func(raw json.RawMessage) bool {
			s := strings.TrimSpace(string(raw))
			return s == "" || s == "[]" || s == "null" || s == "false"
		}
		if e.Description == "" && e.Excerpt == "" && len(e.Categories) == 0 && len(e.Tags) == 0 && empty(e.Venue) && empty(e.Organizer) {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	slices.Sort(ids)
	r.progress.Start("check events without text", len(ids))
	defer r.progress.Finish()
	for _, id := range ids {
		_, res, err := r.c.fetchSingle(ctx, listEvents, id)
		if err != nil {
			return err
		}
		if res.status == http.StatusForbidden && res.code() == "event-password-protected" {
			r.protected[id] = true
		}
		r.progress.Add(1)
	}
	return nil
}

// scanOwn finds the store's records imported earlier from this source.
func (r *importRun) scanOwn(ctx context.Context) error {
	site := r.m.site
	var after int64
	for {
		ps, err := r.store.FindPosts(ctx, repository.PostQuery{AfterID: after, Limit: 1000})
		if err != nil {
			return fmt.Errorf("read the store: %w", err)
		}
		for _, p := range ps {
			if p.Origin != nil && p.Origin.Site == site {
				r.own[string(p.Kind)][p.ID] = true
			}
		}
		if len(ps) < 1000 {
			break
		}
		after = ps[len(ps)-1].ID
	}
	for _, tax := range []repository.Taxonomy{repository.TaxCategory, repository.TaxTag} {
		ts, err := r.store.FindTerms(ctx, repository.TermQuery{Taxonomy: tax})
		if err != nil {
			return fmt.Errorf("read the store: %w", err)
		}
		for _, t := range ts {
			if t.Origin != nil && t.Origin.Site == site {
				r.own[string(tax)][t.ID] = true
			}
		}
	}
	return nil
}

// fail records a failed record.
func (r *importRun) fail(kind string, id int64, err error) {
	f := Failure{Kind: kind, ID: id, Reason: err.Error()}
	var fe *fieldError
	if errors.As(err, &fe) {
		f.Field, f.Reason = fe.field, fe.problem
	}
	r.rep.kind(kind).Failed = append(r.rep.kind(kind).Failed, f)
}

// mapAll maps every record read; the images come from the posts' image
// objects. Post IDs are shared by every post kind (as in WordPress): an
// ID given to two kinds fails the second.
func (r *importRun) mapAll() {
	postIDs := map[int64]string{}
	claim := func(kind string, id int64) bool {
		if other, ok := postIDs[id]; ok && other != kind {
			r.fail(kind, id, fieldErr("id", "the source also has a %s with this ID", other))
			return false
		}
		postIDs[id] = kind
		return true
	}
	for _, kind := range []string{KindCategory, KindTag} {
		for _, id := range sortedKeys(r.raw[kind]) {
			t, err := r.m.term(repository.Taxonomy(kind), r.raw[kind][id])
			if err != nil {
				r.fail(kind, id, err)
				continue
			}
			if t.ID != id {
				r.fail(kind, id, fieldErr("id", "a read of %d answered with record %d", id, t.ID))
				continue
			}
			r.recs[kind][id] = &record{kind: kind, id: id, term: t}
		}
	}
	mappers := map[string]func(json.RawMessage) (*repository.Post, error){
		KindVenue: r.m.venue, KindOrganizer: r.m.organizer, KindEvent: r.m.event,
	}
	for _, kind := range []string{KindVenue, KindOrganizer, KindEvent} {
		for _, id := range sortedKeys(r.raw[kind]) {
			p, err := mappers[kind](r.raw[kind][id])
			if err != nil {
				r.fail(kind, id, err)
				continue
			}
			if p.ID != id {
				r.fail(kind, id, fieldErr("id", "a read of %d answered with record %d", id, p.ID))
				continue
			}
			if !claim(kind, id) {
				continue
			}
			r.recs[kind][id] = &record{kind: kind, id: id, post: p}
		}
	}
	for _, id := range sortedKeys(r.m.images) {
		img := r.m.images[id]
		if !claim(KindImage, id) {
			continue
		}
		p, err := r.m.image(img)
		if err != nil {
			r.fail(KindImage, id, err)
			continue
		}
		r.recs[KindImage][id] = &record{kind: KindImage, id: id, post: p}
	}
}

// resolveLinks keeps the links to records this import has (a link to a
// record the source did not give, or that failed, is dropped with a
// warning), orders categories parents first and bounds link counts as
// the API does.
func (r *importRun) resolveLinks() {
	cats := r.recs[KindCategory]
	for _, id := range sortedKeys(cats) {
		rec := cats[id]
		if p := rec.term.Parent; p != 0 && cats[p] == nil {
			r.rep.warnf("category %d: its parent %d is not imported; imported as a top-level category", id, p)
			rec.term.Parent = 0
		}
	}
	for _, id := range sortedKeys(cats) {
		rec := cats[id]
		depth, p := 0, rec.term.Parent
		for p != 0 && depth <= len(cats) {
			depth++
			p = cats[p].term.Parent
		}
		if depth > len(cats) {
			r.fail(KindCategory, id, fieldErr("parent", "the parents form a cycle"))
			delete(cats, id)
			continue
		}
		rec.depth = depth
	}
	keep := func(kind string, id int64, field string, ids []int64, target string, max int) ([]int64, error) {
		out := []int64{}
		for _, t := range ids {
			switch {
			case slices.Contains(out, t):
			case r.recs[target][t] == nil:
				r.rep.warnf("%s %d: %s %d is not imported (the source did not give it, or it failed); link dropped", kind, id, field, t)
			default:
				out = append(out, t)
			}
		}
		if len(out) > max {
			return nil, fieldErr(field, "%d links; this service accepts at most %d", len(out), max)
		}
		return out, nil
	}
	for _, kind := range []string{KindVenue, KindOrganizer, KindEvent} {
		for _, id := range sortedKeys(r.recs[kind]) {
			p := r.recs[kind][id].post
			if p.ImageID != 0 && r.recs[KindImage][p.ImageID] == nil {
				r.rep.warnf("%s %d: image %d is not imported; link dropped", kind, id, p.ImageID)
				p.ImageID = 0
			}
			e := p.Event
			if e == nil {
				continue
			}
			var err error
			for _, l := range []struct {
				field, target string
				ids           *[]int64
				max           int
			}{
				{"categories", KindCategory, &e.Categories, limits.MaxTermsPerField},
				{"tags", KindTag, &e.Tags, limits.MaxTermsPerField},
				{"venue", KindVenue, &e.Venues, limits.MaxLinksPerEvent},
				{"organizer", KindOrganizer, &e.Organizers, limits.MaxLinksPerEvent},
			} {
				if err == nil {
					*l.ids, err = keep(kind, id, l.field, *l.ids, l.target, l.max)
				}
			}
			if err != nil {
				r.fail(kind, id, err)
				delete(r.recs[kind], id)
			}
		}
	}
}

// stamp sets every record's Origin, with the hash of the record as it
// will be stored.
func (r *importRun) stamp() error {
	for _, kind := range kinds {
		for _, rec := range r.recs[kind] {
			var err error
			if rec.term != nil {
				rec.term.Origin = nil
				rec.term.Origin, err = r.m.origin(rec.id, time.Time{}, rec.term)
			} else {
				rec.post.Origin = nil
				rec.post.Origin, err = r.m.origin(rec.id, rec.post.Modified, rec.post)
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// classify compares every record with the store: new, changed at the
// source, unchanged, or colliding with another record under its ID. It
// also reports the records that disappeared from the source.
func (r *importRun) classify(ctx context.Context) error {
	var collisions []Collision
	for _, kind := range kinds {
		ids := sortedKeys(r.recs[kind])
		for start := 0; start < len(ids); start += lookupBatch {
			batch := ids[start:min(start+lookupBatch, len(ids))]
			var here map[int64]existing
			var err error
			if kind == KindCategory || kind == KindTag {
				here, err = r.existingTerms(ctx, batch)
			} else {
				here, err = r.existingPosts(ctx, batch)
			}
			if err != nil {
				return err
			}
			for _, id := range batch {
				rec := r.recs[kind][id]
				cur, ok := here[id]
				want := rec.origin()
				switch {
				case !ok:
					rec.action = actCreate
					r.rep.kind(kind).Created++
				case cur.kind != kind || !cur.origin.SameSource(want):
					collisions = append(collisions, Collision{Kind: kind, ID: id, Here: cur.describe()})
				case cur.origin.Hash == want.Hash:
					r.rep.kind(kind).Unchanged++
				default:
					rec.action = actUpdate
					r.rep.kind(kind).Updated++
				}
			}
		}
	}
	if len(collisions) > 0 {
		r.rep.Collisions = collisions
		for _, kind := range kinds {
			kr := r.rep.kind(kind)
			kr.Created, kr.Updated, kr.Unchanged = 0, 0, 0
		}
		return &CollisionError{Collisions: collisions}
	}
	for _, kind := range kinds {
		kr := r.rep.kind(kind)
		for _, id := range sortedKeys(r.own[kind]) {
			if r.recs[kind][id] == nil && r.raw[kind][id] == nil && !r.unseen[kind][id] && !r.failed(kind, id) {
				if kind == KindImage && r.m.images[id] != nil {
					continue
				}
				kr.Disappeared = append(kr.Disappeared, id)
			}
		}
	}
	for id := range r.protected {
		if r.recs[KindEvent][id] != nil || r.unseen[KindEvent][id] {
			r.rep.Protected = append(r.rep.Protected, id)
		}
	}
	slices.Sort(r.rep.Protected)
	return nil
}

// failed reports whether the record failed in this run.
func (r *importRun) failed(kind string, id int64) bool {
	for _, f := range r.rep.kind(kind).Failed {
		if f.ID == id {
			return true
		}
	}
	return false
}

// existing is what classify needs of a stored record.
type existing struct {
	kind   string
	title  string
	origin *repository.Origin
}

func (e existing) describe() string {
	from := "created in this service"
	if e.origin != nil {
		from = fmt.Sprintf("imported from %s (record %d there)", e.origin.Site, e.origin.ID)
	}
	return fmt.Sprintf("a %s %q, %s", e.kind, e.title, from)
}

func (r *importRun) existingPosts(ctx context.Context, ids []int64) (map[int64]existing, error) {
	ps, err := r.store.GetPosts(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("read the store: %w", err)
	}
	out := make(map[int64]existing, len(ps))
	for id, p := range ps {
		out[id] = existing{kind: string(p.Kind), title: p.Title.Get(r.m.lang, r.m.lang), origin: p.Origin}
	}
	return out, nil
}

func (r *importRun) existingTerms(ctx context.Context, ids []int64) (map[int64]existing, error) {
	ts, err := r.store.GetTerms(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("read the store: %w", err)
	}
	out := make(map[int64]existing, len(ts))
	for id, t := range ts {
		out[id] = existing{kind: string(t.Taxonomy), title: t.Name.Get(r.m.lang, r.m.lang), origin: t.Origin}
	}
	return out, nil
}

// origin returns the record's Origin.
func (rec *record) origin() *repository.Origin {
	if rec.term != nil {
		return rec.term.Origin
	}
	return rec.post.Origin
}

// write creates and updates the records, kind by kind in write order,
// categories parents first, each kind in ID order (so that a run and
// its restart assign taken slugs alike).
func (r *importRun) write(ctx context.Context) error {
	for _, kind := range kinds {
		var todo []*record
		for _, id := range sortedKeys(r.recs[kind]) {
			if rec := r.recs[kind][id]; rec.action != actNone {
				todo = append(todo, rec)
			}
		}
		if kind == KindCategory {
			slices.SortStableFunc(todo, func(a, b *record) int { return a.depth - b.depth })
		}
		if len(todo) == 0 {
			continue
		}
		r.progress.Start("write "+kind+"s", len(todo))
		for _, rec := range todo {
			if err := r.writeOne(ctx, rec); err != nil {
				r.progress.Finish()
				return err
			}
			r.progress.Add(1)
		}
		r.progress.Finish()
		r.log.Info("written", "kind", kind, "records", len(todo))
	}
	return nil
}

// writeOne creates or updates one record. A store failure stops the run
// (a restart resumes it); an ID taken meanwhile fails the record.
func (r *importRun) writeOne(ctx context.Context, rec *record) error {
	var err error
	var slugs repository.Text
	want := rec.slug(r.m.lang)
	switch {
	case rec.term != nil && rec.action == actCreate:
		t := cloneTerm(rec.term)
		err = r.store.CreateTerm(ctx, t)
		slugs = t.Slug
	case rec.term != nil:
		var t *repository.Term
		t, err = r.store.UpdateTerm(ctx, rec.id, func(t *repository.Term) error {
			rev := t.Revision
			*t = *cloneTerm(rec.term)
			t.Revision = rev
			return nil
		})
		if t != nil {
			slugs = t.Slug
		}
	case rec.action == actCreate:
		p := clonePost(rec.post)
		err = r.store.CreatePost(ctx, p)
		slugs = p.Slug
	default:
		var p *repository.Post
		p, err = r.store.UpdatePost(ctx, rec.id, func(p *repository.Post) error {
			rev := p.Revision
			*p = *clonePost(rec.post)
			p.Revision = rev
			return nil
		})
		if p != nil {
			slugs = p.Slug
		}
	}
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, repository.ErrDuplicate), errors.Is(err, repository.ErrNotFound):
		kr := r.rep.kind(rec.kind)
		if rec.action == actCreate {
			kr.Created--
		} else {
			kr.Updated--
		}
		r.fail(rec.kind, rec.id, fieldErr("id", "another record took or removed this ID during the import: %v", err))
		return nil
	default:
		return fmt.Errorf("write %s %d: %w", rec.kind, rec.id, err)
	}
	if got := slugs[r.m.lang]; want != "" && got != want {
		r.rep.warnf("%s %d: slug %q is taken by another record here; stored as %q", rec.kind, rec.id, want, got)
	}
	return nil
}

// slug is the record's slug in lang.
func (rec *record) slug(lang string) string {
	if rec.term != nil {
		return rec.term.Slug[lang]
	}
	return rec.post.Slug[lang]
}

// prune deletes the records that disappeared from the source, events
// first and categories last (children before parents).
func (r *importRun) prune(ctx context.Context) error {
	for i := len(kinds) - 1; i >= 0; i-- {
		kind := kinds[i]
		kr := r.rep.kind(kind)
		ids := slices.Clone(kr.Disappeared)
		if kind == KindCategory {
			slices.Reverse(ids) // children have larger IDs as a rule; DeleteTerm moves others up
		}
		for _, id := range ids {
			var err error
			switch kind {
			case KindCategory, KindTag:
				err = r.store.DeleteTerm(ctx, id)
			case KindVenue, KindOrganizer:
				if _, err = r.store.UnlinkPost(ctx, id); err == nil {
					err = r.store.DeletePost(ctx, id)
				}
			default:
				err = r.store.DeletePost(ctx, id)
			}
			if err != nil && !errors.Is(err, repository.ErrNotFound) {
				return fmt.Errorf("delete %s %d: %w", kind, id, err)
			}
			kr.Deleted++
		}
	}
	return nil
}

// clonePost returns a deep copy of p (the store may change what it is
// given, and an update function may run more than once).
func clonePost(p *repository.Post) *repository.Post {
	b, err := json.Marshal(p)
	if err != nil {
		panic(err) // a Post always encodes
	}
	var c repository.Post
	if err := json.Unmarshal(b, &c); err != nil {
		panic(err)
	}
	return &c
}

func cloneTerm(t *repository.Term) *repository.Term {
	c := *t
	c.Name, c.Description, c.Slug = t.Name.Clone(), t.Description.Clone(), t.Slug.Clone()
	if t.Origin != nil {
		o := *t.Origin
		c.Origin = &o
	}
	return &c
}

func sortedKeys[V any](m map[int64]V) []int64 {
	return slices.Sorted(maps.Keys(m))
}
