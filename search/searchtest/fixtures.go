package searchtest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/calendar/eventcal/search"
)

// FixtureNow is the instant generated data is centred on: 2025-01-01
// 00:00:00 UTC. It is fixed, not the wall clock, so that a seed always gives
// the same data.
const FixtureNow int64 = 1735689600

// Fixtures is a generated data set: events spread over two years around Now
// with overlapping filter values, and the venues and organizers they link.
type Fixtures struct {
	// Now is the centre of the generated dates (Unix seconds).
	Now int64
	// Langs are the languages every document has text in.
	Langs []string
	// Cities are the centres the geo points are scattered around. The first
	// venue of each city sits exactly on its centre.
	Cities []search.GeoPoint
	// VenueGeo holds the point of each venue that has one.
	VenueGeo map[int64]search.GeoPoint
	// Events, Venues and Organizers are the documents. Events link only the
	// first four fifths of the places, so the rest have no events.
	Events     []search.EventDocument
	Venues     []search.PlaceDocument
	Organizers []search.PlaceDocument
}

// The statuses generated documents carry.
var (
	eventStatuses = []weighted{{"publish", 55}, {"future", 10}, {"draft", 15}, {"pending", 10}, {"private", 10}}
	placeStatuses = []weighted{{"publish", 70}, {"draft", 15}, {"pending", 5}, {"private", 10}}
)

// The vocabularies are small so that text queries hit several documents.
// They hold words that Words treats specially: hyphenated words are cut
// into their parts, capitals and accented capitals are folded, and a few words are shared
// between languages so that a query in the wrong language can be told apart.
// "1990s" and "3°F" are one word each (charabia does not cut at '°'), and
// "1990s" is within one typo of the digits "19905" (disableOnNumbers
// exempts the record's digit words, not the query's).
var vocabulary = map[string][]string{
	"en": {"jazz", "concert", "night", "market", "festival", "open-air", "workshop", "kids", "theatre", "film",
		"summer", "winter", "Art", "music", "dance", "rock-n-roll", "2025", "Live", "café", "tour",
		"nightclub", "exhibition", "12345", "1990s", "3°F"},
	"fr": {"jazz", "musique", "soirée", "marché", "été", "THÉÂTRE", "danse", "atelier", "plein-air", "enfants",
		"Cinéma", "nuit", "café", "concert", "visite", "2025", "fête", "Art", "hiver", "film"},
	"nl": {"jazz", "muziek", "avond", "markt", "zomer", "theater", "dans", "workshop", "kinderen", "film",
		"openlucht", "één", "Winter", "concert", "rondleiding", "2025", "feest", "kunst", "café", "nacht"},
}

// separators join generated words; each must split words the way Words
// does (" - " among them: '-' separates, as in "open-air").
var separators = []string{" ", " ", " ", " ", ", ", " - ", "/", "! ", ": ", "'", ". ", " (", ") "}

var (
	cityNames  = []string{"Amsterdam", "Paris", "Berlin"}
	cityPoints = []search.GeoPoint{{Lat: 52.3676, Lng: 4.9041}, {Lat: 48.8566, Lng: 2.3522}, {Lat: 52.52, Lng: 13.405}}
	streets    = []string{"Avenue du Temple", "Rue de la Paix", "Prinsengracht", "Unter den Linden", "Boulevard Saint-Michel", "Keizersgracht", "Temple Street", "Avenue de la Gare"}
	placeWords = []string{"Jazz", "Temple", "Club", "Hall", "Garden", "Paris", "Studio", "Théâtre", "Zaal", "Café", "Open-Air", "Kunst"}
	zipCodes   = []string{"75003", "1015 AB", "10117", "75011", "1017", "75003"}
)

type weighted struct {
	value  string
	weight int
}

// generator wraps a seeded source with the few draws the fixtures need.
type generator struct{ r *rand.Rand }

func (g generator) chance(p float64) bool { return g.r.Float64() < p }

func (g generator) pick(s []string) string { return s[g.r.IntN(len(s))] }

func (g generator) weighted(ws []weighted) string {
	total := 0
	for _, w := range ws {
		total += w.weight
	}
	n := g.r.IntN(total)
	for _, w := range ws {
		if n < w.weight {
			return w.value
		}
		n -= w.weight
	}
	return ws[0].value
}

// ids draws up to maxN distinct values of from (which it does not modify),
// sorted.
func (g generator) ids(from []int64, maxN int) []int64 {
	n := g.r.IntN(maxN + 1)
	out := []int64{}
	for _, i := range g.r.Perm(len(from))[:min(n, len(from))] {
		out = append(out, from[i])
	}
	slices.Sort(out)
	return out
}

// sentence joins n..m words of lang's vocabulary with random separators and
// random capitalisation.
func (g generator) sentence(lang string, n, m int) string {
	count := n + g.r.IntN(m-n+1)
	var b strings.Builder
	for i := range count {
		if i > 0 {
			b.WriteString(g.pick(separators))
		}
		w := g.pick(vocabulary[lang])
		switch {
		case g.chance(0.1):
			w = strings.ToUpper(w)
		case g.chance(0.15):
			w = strings.ToUpper(w[:1]) + w[1:]
		}
		b.WriteString(w)
	}
	return b.String()
}

// Generate returns the fixtures for seed: the given numbers of events,
// venues and organizers, with IDs from one sequence (as posts share IDs in
// the store). Equal seeds give equal fixtures.
func Generate(seed uint64, events, venues, organizers int) *Fixtures {
	g := generator{rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	f := &Fixtures{
		Now:      FixtureNow,
		Langs:    []string{"en", "fr", "nl"},
		Cities:   slices.Clone(cityPoints),
		VenueGeo: map[int64]search.GeoPoint{},
	}
	nextID := int64(100)
	newID := func() int64 {
		nextID += 1 + int64(g.r.IntN(3))
		return nextID
	}
	const day = 86400
	// publishDate lands on midnights, often shared, so that sorting by
	// publish date needs its ID tie-break.
	publishDate := func() int64 { return f.Now - int64(g.r.IntN(400))*day }

	for i := range venues {
		city := i % len(cityNames)
		d := f.place(g, newID(), search.Venues, publishDate())
		d.Fields = map[string]string{
			"address": fmt.Sprintf("%d, %s", 1+g.r.IntN(120), g.pick(streets)),
			"city":    cityNames[city],
			"zip":     g.pick(zipCodes),
		}
		if g.chance(0.7) {
			d.Fields["phone"] = fmt.Sprintf("+%d %d %02d %02d", 31+g.r.IntN(3), 1+g.r.IntN(9), g.r.IntN(100), g.r.IntN(100))
		}
		if g.chance(0.3) {
			d.Fields["province"] = g.pick([]string{"Noord-Holland", "Île-de-France", "Brandenburg"})
		}
		switch {
		case i < len(cityNames):
			f.VenueGeo[d.ID] = cityPoints[city]
		case g.chance(0.85):
			c := cityPoints[city]
			f.VenueGeo[d.ID] = search.GeoPoint{Lat: c.Lat + (g.r.Float64()-0.5)*0.6, Lng: c.Lng + (g.r.Float64()-0.5)*0.9}
		}
		f.Venues = append(f.Venues, d)
	}
	for range organizers {
		d := f.place(g, newID(), search.Organizers, publishDate())
		host := strings.ToLower(g.pick(placeWords)) + "-" + strings.ToLower(g.pick(placeWords))
		d.Fields = map[string]string{
			"email":   g.pick([]string{"info", "contact", "tickets"}) + "@" + host + ".example",
			"website": "https://" + host + ".example/events",
		}
		if g.chance(0.6) {
			d.Fields["phone"] = fmt.Sprintf("+%d %d %02d %02d", 31+g.r.IntN(3), 1+g.r.IntN(9), g.r.IntN(100), g.r.IntN(100))
		}
		f.Organizers = append(f.Organizers, d)
	}

	// The last fifth of the places never get an event.
	venueIDs := placeIDs(f.Venues[:len(f.Venues)*4/5])
	organizerIDs := placeIDs(f.Organizers[:len(f.Organizers)*4/5])
	categoryIDs := []int64{1, 2, 3, 4, 5, 6, 7, 8}
	tagIDs := []int64{11, 12, 13, 14, 15, 16, 17, 18, 19, 20}
	for i := range events {
		d := search.EventDocument{
			ID:          newID(),
			Text:        map[string]search.Text{},
			Status:      g.weighted(eventStatuses),
			Author:      1 + int64(g.r.IntN(5)),
			PublishDate: publishDate(),
		}
		for _, lang := range f.Langs {
			t := search.Text{Title: g.sentence(lang, 1, 4), Description: g.sentence(lang, 3, 12)}
			if g.chance(0.6) {
				t.Excerpt = g.sentence(lang, 1, 5)
			}
			if i%4 == 1 {
				t.Description = htmlOf(t.Description)
			}
			d.Text[lang] = t
		}
		switch {
		case i > 0 && g.chance(0.2):
			// Sessions of one festival start together: ties on Start.
			prev := f.Events[g.r.IntN(len(f.Events))]
			d.Start = prev.Start
		default:
			hours := []int64{9, 10, 14, 18, 20}
			d.Start = f.Now + int64(g.r.IntN(730)-365)*day + g.pick64(hours)*3600 + int64(g.r.IntN(2))*1800
		}
		if i > 0 && g.chance(0.15) {
			d.PublishDate = f.Events[g.r.IntN(len(f.Events))].PublishDate
		}
		durations := []int64{0, 3600, 2 * 3600, 3 * 3600, day - 1, 2 * day, 7 * day}
		d.End = d.Start + durations[g.r.IntN(len(durations))]
		if g.chance(0.1) {
			d.AllDay = true
			d.Start -= d.Start % day
			d.End = d.Start + day - 1
		}
		d.StartLocal, d.EndLocal = d.Start+3600, d.End+3600
		d.Featured = g.chance(0.25)
		d.Ticketed = g.chance(0.3)
		d.Sticky = g.chance(0.05)
		d.HideFromListings = g.chance(0.1)
		d.HasPassword = g.chance(0.08)
		// Event statuses without a draw, so the stream (and every other
		// field) stays as it was: "" is a document stored before event
		// statuses existed, which reads as scheduled.
		d.EventStatus = []string{"scheduled", "", "canceled", "scheduled", "postponed", "scheduled", "moved_online", "canceled"}[i%8]
		d.CategoryIDs = g.ids(categoryIDs, 3)
		d.TagIDs = g.ids(tagIDs, 3)
		for _, id := range d.CategoryIDs {
			d.CategorySlugs = append(d.CategorySlugs, fmt.Sprintf("cat-%d", id))
		}
		for _, id := range d.TagIDs {
			d.TagSlugs = append(d.TagSlugs, fmt.Sprintf("tag-%d", id))
		}
		d.VenueIDs = []int64{}
		switch n := g.r.IntN(10); {
		case n < 7:
			d.VenueIDs = []int64{g.pick64(venueIDs)}
		case n < 8:
			d.VenueIDs = g.ids(venueIDs, 2)
		}
		d.OrganizerIDs = g.ids(organizerIDs, 3)
		for _, v := range d.VenueIDs {
			if p, ok := f.VenueGeo[v]; ok {
				d.Geo, d.HasGeo = &p, true
				break
			}
		}
		if i >= 5 && g.chance(0.1) {
			d.ParentID = f.Events[g.r.IntN(5)].ID
		}
		f.Events = append(f.Events, d)
	}
	f.linkPlaces()
	return f
}

// htmlOf writes text as the HTML a post description holds: markup whose
// tag and attribute names (p, strong, div, class, br) must never be words,
// entities for spaces and accents, and the text split by a tag.
func htmlOf(text string) string {
	text = strings.ReplaceAll(text, "é", "&eacute;")
	text = strings.ReplaceAll(text, " ", "&nbsp;")
	return `<div class="event"><p><strong>` + text + `</strong></p><br/><script>var p = "strong";</script></div>`
}

func (g generator) pick64(s []int64) int64 { return s[g.r.IntN(len(s))] }

// place makes a venue or organizer with text in every language.
func (f *Fixtures) place(g generator, id int64, kind search.PlaceKind, published int64) search.PlaceDocument {
	d := search.PlaceDocument{ID: id, Kind: kind, Status: g.weighted(placeStatuses), PublishDate: published,
		Text: map[string]search.Text{}, LastStart: map[string]int64{}}
	name := g.pick(placeWords) + " " + g.pick(placeWords)
	if g.chance(0.5) {
		name += " " + g.pick(placeWords)
	}
	for _, lang := range f.Langs {
		t := search.Text{Title: name, Description: g.sentence(lang, 2, 8)}
		if g.chance(0.3) {
			t.Excerpt = g.sentence(lang, 1, 3)
		}
		d.Text[lang] = t
	}
	return d
}

// linkPlaces sets HasEvents and LastStart of every place from the events,
// as the sync worker would.
func (f *Fixtures) linkPlaces() {
	link := func(places []search.PlaceDocument, ids func(search.EventDocument) []int64) {
		index := map[int64]*search.PlaceDocument{}
		for i := range places {
			index[places[i].ID] = &places[i]
		}
		for _, e := range f.Events {
			for _, id := range ids(e) {
				p := index[id]
				if e.Status != "draft" && e.Status != "pending" {
					p.HasEvents = true
				}
				if last, ok := p.LastStart[e.Status]; !ok || e.Start > last {
					p.LastStart[e.Status] = e.Start
				}
			}
		}
	}
	link(f.Venues, func(e search.EventDocument) []int64 { return e.VenueIDs })
	link(f.Organizers, func(e search.EventDocument) []int64 { return e.OrganizerIDs })
}

func placeIDs(docs []search.PlaceDocument) []int64 {
	ids := make([]int64, len(docs))
	for i, d := range docs {
		ids[i] = d.ID
	}
	return ids
}

// Places returns the venues and organizers together.
func (f *Fixtures) Places() []search.PlaceDocument {
	return slices.Concat(f.Venues, f.Organizers)
}
