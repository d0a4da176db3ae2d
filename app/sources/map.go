package sources

import (
	"context"
	"errors"
	"fmt"
	"html"
	"strconv"
	"strings"
	"time"

	"github.com/calendar/eventcal/app/calendar"
	"github.com/calendar/eventcal/app/calendar/recurrence"
	"github.com/calendar/eventcal/app/datetext"
	"github.com/calendar/eventcal/app/htmlpolicy"
	"github.com/calendar/eventcal/app/sources/feed"
	"github.com/calendar/eventcal/repository"
)

// The mapping of a feed's event into the calendar's commands. The feed
// owns an imported event's title, description, website, dates, time
// zone, all-day flag, recurrence and changed occurrences, venue,
// organizer, categories and tags (the feed's by name, then the
// source's), cost, image (when the feed has one) and cancellation;
// everything else (status, featured, sticky, excerpt...) is the
// editors'.

// dayLayout is a date; startOfDay and endOfDay are the wall times of an
// all-day event's first and last day, as the API stores all-day events.
const (
	dayLayout  = "2006-01-02"
	startOfDay = " 00:00:00"
	endOfDay   = " 23:59:59"
)

// times reads a feed event's times as the calendar takes them: timed
// events at their instants in their zone; floating times (no zone) and
// dates as wall-clock times in the site's zone.
type times struct {
	loc      *time.Location
	allDay   bool
	floating bool
}

// timesOf returns how to read the times of a feed event, and the time
// zone to store: its own zone, or for floating times and dates the
// site's ("", which the calendar reads as the site zone). A zone the
// calendar does not know is a problem.
func (w *runWrite) timesOf(ev *feed.Event) (times, string, error) {
	if ev.AllDay || ev.Zone == "" {
		return times{loc: w.r.cfg.Location, allDay: ev.AllDay, floating: true}, "", nil
	}
	loc, ok := datetext.LoadZone(ev.Zone)
	if !ok {
		return times{}, "", fmt.Errorf("timezone: %q is not a time zone the calendar knows", ev.Zone)
	}
	return times{loc: loc}, ev.Zone, nil
}

// local is t as a wall-clock time "2006-01-02 15:04:05" in the event's
// zone (a date: its day at 00:00:00; a floating time: as written).
func (tm times) local(t time.Time) string {
	switch {
	case tm.allDay:
		return t.UTC().Format(dayLayout) + startOfDay
	case tm.floating:
		return t.Format(recurrence.LocalLayout)
	}
	return t.In(tm.loc).Format(recurrence.LocalLayout)
}

// date is the date field of the time t of a timed event: the instant (a
// Unix timestamp: no wall-clock reading, exact across daylight-saving
// changes), or for a floating time the wall-clock time in the site's
// zone.
func (tm times) date(t time.Time) calendar.Opt[datetext.Value] {
	if tm.floating {
		return wall(t.Format(recurrence.LocalLayout))
	}
	raw := "@" + strconv.FormatInt(t.Unix(), 10)
	v, err := datetext.Read(raw, "en", t, time.UTC)
	if err != nil { // a timestamp always reads
		panic(err)
	}
	return calendar.Opt[datetext.Value]{Set: true, Value: v, Raw: raw}
}

// key is the calendar's occurrence key of the instance a RECURRENCE-ID
// names: its original local start.
func (tm times) key(of time.Time) string {
	return strings.NewReplacer("-", "", ":", "", " ", "T").Replace(tm.local(of))
}

// span returns the start and end fields of a feed event (or a moved
// instance): timed, its times; all-day, its first day at 00:00:00 to its
// last at 23:59:59 (the feed's end is the day after the last, at
// midnight UTC).
func (tm times) span(start, end time.Time) (calendar.Opt[datetext.Value], calendar.Opt[datetext.Value]) {
	if !tm.allDay {
		return tm.date(start), tm.date(end)
	}
	last := end.AddDate(0, 0, -1)
	if last.Before(start) {
		last = start
	}
	return wall(start.UTC().Format(dayLayout) + startOfDay), wall(last.UTC().Format(dayLayout) + endOfDay)
}

// wall is a date the calendar takes as the wall-clock time s
// ("2006-01-02 15:04:05") in the event's zone.
func wall(s string) calendar.Opt[datetext.Value] {
	v, err := datetext.Read(s, "en", time.Time{}, time.UTC)
	if err != nil { // the layouts of this file always read
		panic(err)
	}
	return calendar.Opt[datetext.Value]{Set: true, Value: v, Raw: s}
}

// seriesOf is the recurrence of a feed event as the API takes it (nil
// for a single event): the rules as written, the exclusions and
// additions as local start times in the event's zone.
func seriesOf(ev *feed.Event, tm times) *repository.Recurrence {
	if len(ev.Rules) == 0 && len(ev.Additions) == 0 {
		return nil
	}
	local := func(ts []time.Time) []string {
		out := []string{}
		for _, t := range ts {
			out = append(out, tm.local(t))
		}
		return out
	}
	return &repository.Recurrence{Rules: append([]string{}, ev.Rules...), Exclusions: local(ev.Exclusions), Additions: local(ev.Additions)}
}

// plain is a feed's plain-text field as the calendar stores a plain
// field: no markup, trimmed.
func plain(s string) string { return strings.TrimSpace(htmlpolicy.Plain(strings.TrimSpace(s))) }

// description is a feed's plain-text description as the calendar
// stores an author's text: HTML-escaped, each line break kept as <br>.
func description(s string) string {
	s = strings.TrimSpace(strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n"))
	if s == "" {
		return ""
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = html.EscapeString(strings.TrimRight(l, " \t"))
	}
	return strings.Join(lines, "<br>\n")
}

// eventInput maps the feed event ev into the command that writes it:
// a create (cur nil) or the update of the imported event cur (returning:
// an event that had left the feed). link is the event's SourceLink as
// the command writes it.
func (w *runWrite) eventInput(ctx context.Context, ev *feed.Event, cur *repository.Record, returning bool, link *repository.SourceLink, tm times, zone string) (*calendar.EventInput, error) {
	src := w.src
	in := &calendar.EventInput{}
	in.Name = calendar.Some(plain(ev.Title))
	in.Description = calendar.Some(description(ev.Description))
	in.Timezone = calendar.Some(zone)
	in.AllDay = calendar.Some(ev.AllDay)
	in.StartDate, in.EndDate = tm.span(ev.Start, ev.End)
	in.Recurrence = calendar.Some(seriesOf(ev, tm))
	in.ClearOverrides = cur != nil && cur.Event != nil && len(cur.Event.Overrides) > 0
	switch {
	case ev.URL != "":
		in.Website = calendar.Some(strings.TrimSpace(ev.URL))
	case cur != nil && cur.Event != nil && cur.Event.Website != nil && *cur.Event.Website != "":
		in.Website = calendar.Some("") // the feed dropped it
	}
	if ev.Cost != "" {
		in.Cost = calendar.Some([]string{plain(ev.Cost)})
	} else if cur != nil {
		in.Cost = calendar.Some([]string{})
	}
	if ev.Image != "" {
		in.Image = calendar.Some(calendar.ImageRef{URL: ev.Image})
	}
	in.Venues = calendar.Links{Set: true, Items: []calendar.Link{}}
	if pl := ev.Location; pl != nil && plain(pl.Name) != "" {
		id, err := w.findPlace(ctx, repository.KindVenue, pl.Name)
		if err != nil {
			return nil, err
		}
		l := calendar.Link{ID: id}
		if id == 0 {
			l = calendar.Link{Venue: venueInput(pl)}
		}
		in.Venues.Items = append(in.Venues.Items, l)
	}
	in.Organizers = calendar.Links{Set: true, Items: []calendar.Link{}}
	if pe := ev.Organizer; pe != nil && plain(pe.Name) != "" {
		id, err := w.findPlace(ctx, repository.KindOrganizer, pe.Name)
		if err != nil {
			return nil, err
		}
		l := calendar.Link{ID: id}
		if id == 0 {
			l = calendar.Link{Organizer: organizerInput(pe)}
		}
		in.Organizers.Items = append(in.Organizers.Items, l)
	}
	cats, err := w.labelItems(ctx, ev.UID, repository.LabelCategory, ev.Categories, src.Categories)
	if err != nil {
		return nil, err
	}
	in.Categories = calendar.Some(cats)
	tags, err := w.labelItems(ctx, ev.UID, repository.LabelTag, ev.Tags, src.Tags)
	if err != nil {
		return nil, err
	}
	in.Tags = calendar.Some(tags)
	switch {
	case ev.Cancelled:
		in.EventStatus = calendar.Some(repository.EventCanceled)
	case cur != nil && cur.Event != nil && cur.Event.EventStatus == repository.EventCanceled:
		// the feed took the cancellation back
		in.EventStatus = calendar.Some(repository.EventScheduled)
	}
	switch {
	case cur == nil:
		in.Status = calendar.Some(w.status())
		if w.author != 0 {
			in.Author = calendar.Some(w.author)
		}
	case cur.Status == repository.StatusTrash && returning:
		// back in the feed after the run that found it gone trashed it
		// (an event an editor trashed stays trashed)
		in.Status = calendar.Some(w.status())
	}
	in.Source = calendar.Some(link)
	return in, nil
}

// status is the status the events a run creates (or restores) get: the
// source's, draft when it has none.
func (w *runWrite) status() string {
	if w.src.Status == "" {
		return repository.StatusDraft
	}
	return w.src.Status
}

// placeKey is the cache key of a venue or organizer (kind) name.
func placeKey(kind repository.Kind, name string) string {
	return string(kind) + ":" + strings.ToLower(strings.TrimSpace(name))
}

// venueInput is the inline venue of a feed's place: the name, and the
// address as the feed gave it.
func venueInput(pl *feed.Place) *calendar.VenueInput {
	v := &calendar.VenueInput{}
	v.Name = calendar.Some(plain(pl.Name))
	for _, f := range []struct {
		val string
		dst *calendar.Opt[string]
	}{{pl.Address, &v.Address}, {pl.City, &v.City}, {pl.Region, &v.StateProvince}, {pl.PostalCode, &v.Zip}, {pl.Country, &v.Country}} {
		if s := plain(f.val); s != "" {
			*f.dst = calendar.Some(s)
		}
	}
	if pl.Lat != nil && pl.Lng != nil {
		v.GeoLat, v.GeoLng = calendar.Some(pl.Lat), calendar.Some(pl.Lng)
	}
	return v
}

// organizerInput is the inline organizer of a feed's person.
func organizerInput(p *feed.Person) *calendar.OrganizerInput {
	o := &calendar.OrganizerInput{}
	o.Name = calendar.Some(plain(p.Name))
	for _, f := range []struct {
		val string
		dst *calendar.Opt[string]
	}{{p.Email, &o.Email}, {p.Phone, &o.Phone}, {p.Website, &o.Website}} {
		if s := strings.TrimSpace(f.val); s != "" {
			*f.dst = calendar.Some(plain(s))
		}
	}
	return o
}

// MaxNewLabelsPerRun bounds the categories and tags one run may create
// (distinct names no label has yet): a feed naming more has the rest
// left off its events, each noted in the run's problems.
const MaxNewLabelsPerRun = 200

// errNewLabelCap is labelItem's answer for a new name past
// MaxNewLabelsPerRun.
var errNewLabelCap = fmt.Errorf("the run created %d new categories and tags already (at most %d a run)", MaxNewLabelsPerRun, MaxNewLabelsPerRun)

// labelItems returns the labels of taxonomy tax of the event uid: those
// it names (names, as the feed has them; a new one over the cap of new
// labels is left off with a note), then the source's own (ids).
func (w *runWrite) labelItems(ctx context.Context, uid string, tax repository.LabelKind, names []string, ids []int64) ([]calendar.LabelItem, error) {
	items := []calendar.LabelItem{}
	for _, name := range names {
		if name = plain(name); name != "" {
			it, err := w.labelItem(ctx, tax, name)
			if errors.Is(err, errNewLabelCap) {
				w.note(uid, err.Error()+": "+strconv.Quote(name)+" left off")
				continue
			}
			if err != nil {
				return nil, err
			}
			items = append(items, it)
		}
	}
	for _, id := range ids {
		items = append(items, calendar.LabelItem{ID: id, IsID: true})
	}
	return items, nil
}

// labelItem returns how an event write names the category or tag (tax)
// called name: by ID when the calendar resolves the name to a term
// (calendar.Service.LookupLabel, as the write itself would), by name
// when no term has it yet (the write creates it). A resolved name is
// kept for the run's next events, so that a run of thousands of events
// looks each name up once.
func (w *runWrite) labelItem(ctx context.Context, tax repository.LabelKind, name string) (calendar.LabelItem, error) {
	key := string(tax) + ":" + name
	if id := w.labels[key]; id != 0 {
		return calendar.LabelItem{ID: id, IsID: true}, nil
	}
	t, err := w.r.d.Calendar.LookupLabel(ctx, tax, w.lang, name)
	if err != nil {
		return calendar.LabelItem{}, err
	}
	if t == nil {
		// A name no label has: the write creates it, up to
		// MaxNewLabelsPerRun distinct names a run (a feed must not
		// flood the calendar's categories and tags).
		if !w.newLabels[key] {
			if len(w.newLabels) >= MaxNewLabelsPerRun {
				return calendar.LabelItem{}, errNewLabelCap
			}
			w.newLabels[key] = true
		}
		return calendar.LabelItem{Name: name}, nil
	}
	w.labels[key] = t.ID
	return calendar.LabelItem{ID: t.ID, IsID: true}, nil
}

// findPlace returns the ID of the venue or organizer (kind) named name
// (case-insensitive, not trashed), reused as it is; 0 when there is
// none, and the event write creates it from the feed's data. Found IDs
// are kept for the run's next events.
func (w *runWrite) findPlace(ctx context.Context, kind repository.Kind, name string) (int64, error) {
	name = plain(name)
	key := placeKey(kind, name)
	if id := w.places[key]; id != 0 {
		return id, nil
	}
	found, err := w.r.d.Store.FindRecords(ctx, repository.RecordQuery{Kind: kind, Title: name, TitleLang: w.lang,
		ExcludeStatuses: []string{repository.StatusTrash}, Limit: 1})
	if err != nil || len(found) == 0 {
		return 0, err
	}
	w.places[key] = found[0].ID
	return found[0].ID, nil
}

// occurrenceInput maps a changed instance of a series into the
// occurrence change that writes it. venue is the ID of the instance's
// own venue (0: the series').
func occurrenceInput(ov *feed.Override, tm times, venue int64) *calendar.OccurrenceInput {
	in := &calendar.OccurrenceInput{}
	if ov.Cancelled {
		in.EventStatus = calendar.Some(repository.EventCanceled)
	}
	if ov.Title != nil {
		in.Title = calendar.Some(plain(*ov.Title))
	}
	if ov.Description != nil {
		in.Description = calendar.Some(description(*ov.Description))
	}
	if ov.URL != nil {
		in.Website = calendar.Some(strings.TrimSpace(*ov.URL))
	}
	switch {
	case tm.allDay && !ov.Start.IsZero():
		end := ov.End
		if end.IsZero() {
			end = ov.Start.AddDate(0, 0, 1)
		}
		in.StartDate, in.EndDate = tm.span(ov.Start, end)
	case !ov.Start.IsZero():
		in.StartDate = tm.date(ov.Start)
		if !ov.End.IsZero() {
			in.EndDate = tm.date(ov.End)
		}
	case !ov.End.IsZero():
		in.EndDate = tm.date(ov.End)
	}
	if venue != 0 {
		in.Venues = calendar.Links{Set: true, Items: []calendar.Link{{ID: venue}}}
	}
	return in
}
