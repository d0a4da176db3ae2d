// Package sync moves the store's "needs indexing" marks into the search
// engine. It queues IDs, never documents: every batch re-reads the store, so
// a stale payload can never be indexed (Gitea's IndexerMetadata design).
package sync

import (
	"context"
	"time"

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
}

// text resolves the searchable text of a post in every language. Each
// distinct text is cut once (cutLongWords): the languages without a
// translation share the default language's (a 200,000-character
// description would otherwise be scanned once per language).
func (b *DocBuilder) text(p *repository.Post) map[string]search.Text {
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

// Events builds the documents of events, loading their venues and terms.
// Category IDs include every ancestor, so a parent category matches events
// of its children.
func (b *DocBuilder) Events(ctx context.Context, events []*repository.Post) ([]search.EventDocument, error) {
	var venueIDs, termIDs []int64
	for _, p := range events {
		venueIDs = append(venueIDs, p.Event.Venues...)
		termIDs = append(termIDs, p.Event.Categories...)
		termIDs = append(termIDs, p.Event.Tags...)
	}
	venues, err := b.Store.GetPosts(ctx, venueIDs)
	if err != nil {
		return nil, err
	}
	terms, err := b.Store.GetTerms(ctx, termIDs)
	if err != nil {
		return nil, err
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
		more, err := b.Store.GetTerms(ctx, missing)
		if err != nil {
			return nil, err
		}
		if len(more) == 0 {
			break
		}
		for id, t := range more {
			terms[id] = t
		}
	}
	docs := make([]search.EventDocument, 0, len(events))
	for _, p := range events {
		e := p.Event
		d := search.EventDocument{
			ID: p.ID, Text: b.text(p), Status: p.Status, Author: p.Author, PublishDate: p.Date.Unix(),
			Start: e.StartUTC.Unix(), End: e.EndUTC.Unix(),
			StartLocal: wallClock(e.StartUTC, b.Location), EndLocal: wallClock(e.EndUTC, b.Location),
			AllDay: e.AllDay, Featured: e.Featured, Ticketed: e.Ticketed, Sticky: e.Sticky,
			HideFromListings: e.HideFromListings, HasPassword: p.Password != "",
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
		for _, vid := range e.Venues {
			if v := venues[vid]; v != nil && v.Venue != nil && v.Venue.GeoLat != nil && v.Venue.GeoLng != nil {
				d.Geo = &search.GeoPoint{Lat: *v.Venue.GeoLat, Lng: *v.Venue.GeoLng}
				d.HasGeo = true
				break
			}
		}
		docs = append(docs, d)
	}
	return docs, nil
}

// Place builds the document of a venue or organizer (see Places).
func (b *DocBuilder) Place(ctx context.Context, p *repository.Post) (search.PlaceDocument, error) {
	docs, err := b.Places(ctx, []*repository.Post{p})
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
func (b *DocBuilder) Places(ctx context.Context, posts []*repository.Post) ([]search.PlaceDocument, error) {
	byKind := map[repository.PostKind][]int64{}
	for _, p := range posts {
		kind := repository.KindOrganizer
		if p.Kind == repository.KindVenue {
			kind = repository.KindVenue
		}
		byKind[kind] = append(byKind[kind], p.ID)
	}
	stats := map[repository.PostKind]map[int64]repository.PlaceEvents{}
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
