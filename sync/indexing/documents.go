package indexing

import (
	"context"
	"maps"
	"time"

	"github.com/calendar/eventcal/app/calendar/recurrence"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/search"
)

// DocBuilder turns stored records into search documents.
type DocBuilder struct {
	Store repository.Store
	// Languages and DefaultLanguage drive the per-language text with
	// fallback to the default language, field by field.
	Languages       []string
	DefaultLanguage string
	// Location is the site time zone, for the wall-clock fields.
	Location *time.Location
	// Horizon is how far ahead of now a series is expanded
	// (RECURRENCE_HORIZON; 0: recurrence.DefaultHorizon), MaxOccurrences
	// the most occurrences a series gets (0:
	// recurrence.DefaultMaxOccurrences), and Now the clock (nil:
	// time.Now).
	Horizon        time.Duration
	MaxOccurrences int
	Now            func() time.Time

	// linked, when set (forScan), keeps the venues and terms read for
	// earlier events, so a full scan reads each once.
	linked *linkedCache
}

// linkedCache holds the venues and terms a full scan has read. A venue or
// term that changes during the scan has its events marked (dependents.go)
// and indexed again after the scan, as for any other write the scan
// races with (reindex.go).
type linkedCache struct {
	venues map[int64]*repository.Record
	terms  map[int64]*repository.Label
}

// forScan returns a copy of b that reads each venue and term once over
// all its calls (see linkedCache), for one full scan. It is for one
// goroutine.
func (b *DocBuilder) forScan() *DocBuilder {
	c := *b
	c.linked = &linkedCache{venues: map[int64]*repository.Record{}, terms: map[int64]*repository.Label{}}
	return &c
}

// getVenues returns the records among ids, through the scan's cache when
// there is one.
func (b *DocBuilder) getVenues(ctx context.Context, ids []int64) (map[int64]*repository.Record, error) {
	if b.linked == nil {
		return b.Store.GetRecords(ctx, ids)
	}
	return cachedRead(ctx, b.linked.venues, ids, b.Store.GetRecords)
}

// getTerms returns the labels among ids, through the scan's cache when
// there is one.
func (b *DocBuilder) getTerms(ctx context.Context, ids []int64) (map[int64]*repository.Label, error) {
	if b.linked == nil {
		return b.Store.GetLabels(ctx, ids)
	}
	return cachedRead(ctx, b.linked.terms, ids, b.Store.GetLabels)
}

// cachedRead returns the items among ids, reading those not in cache
// with read and remembering every ID read (nil: it does not exist).
func cachedRead[T any](ctx context.Context, cache map[int64]*T, ids []int64, read func(context.Context, []int64) (map[int64]*T, error)) (map[int64]*T, error) {
	var missing []int64
	for _, id := range ids {
		if _, ok := cache[id]; !ok {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		got, err := read(ctx, missing)
		if err != nil {
			return nil, err
		}
		for _, id := range missing {
			cache[id] = got[id]
		}
	}
	out := make(map[int64]*T, len(ids))
	for _, id := range ids {
		if v := cache[id]; v != nil {
			out[id] = v
		}
	}
	return out, nil
}

// limits returns the bounds of an expansion now.
func (b *DocBuilder) limits() recurrence.Limits {
	now := time.Now
	if b.Now != nil {
		now = b.Now
	}
	return recurrence.Limits{Now: now(), Horizon: b.Horizon, MaxOccurrences: b.MaxOccurrences}
}

// occurrences returns the occurrences of a series as the index holds
// them: from the series' first (past occurrences stay listable) to the
// horizon, at most MaxOccurrences (recurrence.Expand). A series the
// expansion refuses (a stored rule it cannot read) is indexed as its first
// occurrence, so that the event stays findable.
func (b *DocBuilder) occurrences(e *repository.EventFields) []recurrence.Occurrence {
	s := recurrence.SeriesOf(e, e.Zone(b.Location))
	occs, err := recurrence.Expand(s, time.Time{}, time.Time{}, b.limits())
	if err != nil || len(occs) == 0 {
		return []recurrence.Occurrence{{Key: recurrence.Key(s.Start, s.Zone), Original: s.Start, Start: s.Start, End: s.End}}
	}
	return occs
}

// DocumentCount returns the number of documents the index holds for an
// event: one, or one per occurrence of a series.
func (b *DocBuilder) DocumentCount(p *repository.Record) int {
	if p.Event == nil || p.Event.Recurrence == nil {
		return 1
	}
	return len(b.occurrences(p.Event))
}

// text resolves the searchable text of a post in every language. Each
// distinct text is cut once (cutLongWords): the languages without a
// translation share the default language's (a 200,000-character
// description would otherwise be scanned once per language).
func (b *DocBuilder) text(p *repository.Record) map[string]search.Text {
	out := make(map[string]search.Text, len(b.Languages))
	cut := map[string]string{}
	once := func(s string) string {
		c, ok := cut[s]
		if !ok {
			c = cutLongWords(s)
			cut[s] = c
		}
		return c
	}
	for _, l := range b.Languages {
		out[l] = search.Text{
			Title:       once(p.Title.Get(l, b.DefaultLanguage, b.Languages...)),
			Description: once(p.Content.Get(l, b.DefaultLanguage, b.Languages...)),
			Excerpt:     once(p.Excerpt.Get(l, b.DefaultLanguage, b.Languages...)),
		}
	}
	return out
}

// wallClock returns t's wall-clock reading in loc written as if it were UTC.
func wallClock(t time.Time, loc *time.Location) int64 {
	l := t.In(loc)
	y, m, d := l.Date()
	return time.Date(y, m, d, l.Hour(), l.Minute(), l.Second(), 0, time.UTC).Unix()
}

// Events builds the documents of events, loading their venues and terms:
// one per single event, one per occurrence of a series (Occurrences).
// Category IDs include every ancestor, so a parent category matches events
// of its children.
func (b *DocBuilder) Events(ctx context.Context, events []*repository.Record) ([]search.EventDocument, error) {
	var out []search.EventDocument
	err := b.EventBatches(ctx, events, 0, func(docs []search.EventDocument) error {
		out = append(out, docs...)
		return nil
	})
	return out, err
}

// EventBatches builds the documents of events as Events does and hands
// them to fn in batches of at most maxDocs documents (0: one batch), never
// splitting the documents of one event (search.Engine.IndexEvents replaces
// all of an event's documents with those of one call), so a batch of
// series holds at most maxDocs documents plus one series' occurrences.
// fn may keep the slice.
func (b *DocBuilder) EventBatches(ctx context.Context, events []*repository.Record, maxDocs int, fn func([]search.EventDocument) error) error {
	var venueIDs, termIDs []int64
	for _, p := range events {
		venueIDs = append(venueIDs, p.Event.Venues...)
		termIDs = append(termIDs, p.Event.Categories...)
		termIDs = append(termIDs, p.Event.Tags...)
		for _, o := range p.Event.Overrides {
			if o.Venues != nil {
				venueIDs = append(venueIDs, *o.Venues...)
			}
		}
	}
	venues, err := b.getVenues(ctx, venueIDs)
	if err != nil {
		return err
	}
	terms, err := b.getTerms(ctx, termIDs)
	if err != nil {
		return err
	}
	// Load ancestors of categories until none is missing.
	for range 32 {
		var missing []int64
		for _, t := range terms {
			if t.Parent != 0 && terms[t.Parent] == nil {
				missing = append(missing, t.Parent)
			}
		}
		if len(missing) == 0 {
			break
		}
		more, err := b.getTerms(ctx, missing)
		if err != nil {
			return err
		}
		if len(more) == 0 {
			break
		}
		for id, t := range more {
			terms[id] = t
		}
	}
	var docs []search.EventDocument
	for _, p := range events {
		e := p.Event
		d := search.EventDocument{
			ID: p.ID, Text: b.text(p), Status: p.Status, Author: p.Author, PublishDate: p.Date.Unix(),
			Start: e.StartUTC.Unix(), End: e.EndUTC.Unix(),
			StartLocal: wallClock(e.StartUTC, b.Location), EndLocal: wallClock(e.EndUTC, b.Location),
			AllDay: e.AllDay, Featured: e.Featured, Ticketed: e.Ticketed, Sticky: e.Sticky,
			HideFromListings: e.HideFromListings, HasPassword: p.Password != "", EventStatus: e.Status(),
			CategoryIDs: []int64{}, CategorySlugs: []string{}, TagIDs: []int64{}, TagSlugs: []string{},
			VenueIDs: append([]int64{}, e.Venues...), OrganizerIDs: append([]int64{}, e.Organizers...),
			ParentID: e.Parent,
		}
		seen := map[int64]bool{}
		for _, id := range e.Categories {
			for cur, depth := terms[id], 0; cur != nil && !seen[cur.ID] && depth < 64; cur, depth = terms[cur.Parent], depth+1 {
				seen[cur.ID] = true
				d.CategoryIDs = append(d.CategoryIDs, cur.ID)
				d.CategorySlugs = append(d.CategorySlugs, cur.Slug.Get(b.DefaultLanguage, b.DefaultLanguage, b.Languages...))
				if cur.Parent == 0 {
					break
				}
			}
		}
		for _, id := range e.Tags {
			if t := terms[id]; t != nil {
				d.TagIDs = append(d.TagIDs, t.ID)
				d.TagSlugs = append(d.TagSlugs, t.Slug.Get(b.DefaultLanguage, b.DefaultLanguage, b.Languages...))
			}
		}
		d.Geo, d.HasGeo = geoOf(e.Venues, venues)
		if e.Recurrence == nil {
			docs = append(docs, d)
		} else {
			docs = append(docs, b.occurrenceDocs(p, d, venues)...)
		}
		if maxDocs > 0 && len(docs) >= maxDocs {
			if err := fn(docs); err != nil {
				return err
			}
			docs = nil
		}
	}
	if len(docs) > 0 || maxDocs == 0 {
		return fn(docs)
	}
	return nil
}

// geoOf returns the point of the first of the venues that has one.
func geoOf(ids []int64, venues map[int64]*repository.Record) (*search.GeoPoint, bool) {
	for _, vid := range ids {
		if v := venues[vid]; v != nil && v.Venue != nil && v.Venue.GeoLat != nil && v.Venue.GeoLng != nil {
			return &search.GeoPoint{Lat: *v.Venue.GeoLat, Lng: *v.Venue.GeoLng}, true
		}
	}
	return nil, false
}

// occurrenceDocs returns the documents of series p, whose document (as a
// single event) is d: one per occurrence, each d with the occurrence's
// key, start and end, and the fields its override changes (text by
// language, status, venues and their point, organizers, featured, event
// status).
// Occurrences without an override share d's Text map, so an engine can
// tell at once that their text is the series' (search/memindex tokenizes
// it once).
func (b *DocBuilder) occurrenceDocs(p *repository.Record, d search.EventDocument, venues map[int64]*repository.Record) []search.EventDocument {
	occs := b.occurrences(p.Event)
	out := make([]search.EventDocument, 0, len(occs))
	for _, o := range occs {
		od := d
		od.Occurrence = o.Key
		od.Start, od.End = o.Start.Unix(), o.End.Unix()
		od.StartLocal, od.EndLocal = wallClock(o.Start, b.Location), wallClock(o.End, b.Location)
		if v := o.Override; v != nil {
			if len(v.Title) > 0 || len(v.Content) > 0 || len(v.Excerpt) > 0 {
				changed := *p
				changed.Title, changed.Content, changed.Excerpt = overText(p.Title, v.Title), overText(p.Content, v.Content), overText(p.Excerpt, v.Excerpt)
				od.Text = b.text(&changed)
			}
			// Never more visible than the series: the index filters
			// on this status for anonymous lists and search.
			od.Status = repository.OccurrenceStatus(p.Status, v)
			if v.Venues != nil {
				od.VenueIDs = append([]int64{}, *v.Venues...)
				od.Geo, od.HasGeo = geoOf(*v.Venues, venues)
			}
			if v.Organizers != nil {
				od.OrganizerIDs = append([]int64{}, *v.Organizers...)
			}
			if v.Featured != nil {
				od.Featured = *v.Featured
			}
			if v.EventStatus != nil {
				od.EventStatus, _ = repository.StatusOf(*v.EventStatus)
			}
		}
		out = append(out, od)
	}
	return out
}

// overText returns base with the languages of over replaced.
func overText(base, over repository.Text) repository.Text {
	if len(over) == 0 {
		return base
	}
	out := maps.Clone(base)
	if out == nil {
		out = repository.Text{}
	}
	maps.Copy(out, over)
	return out
}

// Place builds the document of a venue or organizer (see Places).
func (b *DocBuilder) Place(ctx context.Context, p *repository.Record) (search.PlaceDocument, error) {
	docs, err := b.Places(ctx, []*repository.Record{p})
	if err != nil {
		return search.PlaceDocument{}, err
	}
	return docs[0], nil
}

// Places builds the documents of venues and organizers. has_events and the
// latest start per status come from the store's aggregate of their linked
// events (repository.EventLinks.PlaceEvents): one query per kind for the
// whole list (on SQLite its cost does not depend on how many events a
// place has).
// Posts of other kinds get a document of kind Organizers with no fields,
// as before; callers pass venues and organizers only.
func (b *DocBuilder) Places(ctx context.Context, posts []*repository.Record) ([]search.PlaceDocument, error) {
	byKind := map[repository.Kind][]int64{}
	for _, p := range posts {
		kind := repository.KindOrganizer
		if p.Kind == repository.KindVenue {
			kind = repository.KindVenue
		}
		byKind[kind] = append(byKind[kind], p.ID)
	}
	stats := map[repository.Kind]map[int64]repository.PlaceEvents{}
	for kind, ids := range byKind {
		m, err := b.Store.PlaceEvents(ctx, kind, ids)
		if err != nil {
			return nil, err
		}
		stats[kind] = m
	}
	docs := make([]search.PlaceDocument, 0, len(posts))
	for _, p := range posts {
		d := search.PlaceDocument{ID: p.ID, Status: p.Status, PublishDate: p.Date.Unix(), Text: b.text(p),
			Fields: map[string]string{}, LastStart: map[string]int64{}}
		kind := repository.KindOrganizer
		switch p.Kind {
		case repository.KindVenue:
			kind, d.Kind = repository.KindVenue, search.Venues
			if v := p.Venue; v != nil {
				for k, val := range map[string]string{"address": v.Address, "city": v.City, "province": v.Province, "state": v.State,
					"stateprovince": v.StateProvince, "zip": v.Zip, "phone": v.Phone} {
					d.Fields[k] = cutLongWords(val)
				}
			}
		default:
			d.Kind = search.Organizers
			if o := p.Organizer; o != nil {
				d.Fields["phone"], d.Fields["email"], d.Fields["website"] = cutLongWords(o.Phone), cutLongWords(o.Email), cutLongWords(o.Website)
			}
		}
		pe := stats[kind][p.ID]
		d.HasEvents = pe.HasEvents
		for status, start := range pe.LatestStart {
			d.LastStart[status] = start
		}
		docs = append(docs, d)
	}
	return docs, nil
}
