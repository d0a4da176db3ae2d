package searchtest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/calendar/eventcal/search"
)

// This file holds the tables of queries the suite runs over the fixtures,
// and the helpers that read boundary values from them.

// eventCases is the table of event queries over the fixtures. Values that
// must sit exactly on a boundary (a start, an end, a distance) are read
// from the fixtures, so the table stays right when the generator changes.
func eventCases(f *Fixtures) []eventCase {
	const lang = "en"
	q := func(mod func(q *search.EventQuery)) search.EventQuery {
		out := search.EventQuery{Lang: lang}
		mod(&out)
		return out
	}
	ev := f.Events
	const day = 86400
	start := mostCommon(ev, func(d search.EventDocument) int64 { return d.Start })
	end := ev[len(ev)/2].End
	parent := mostCommon(ev, func(d search.EventDocument) int64 { return d.ParentID }, 0)
	venue := mostCommon(ev, func(d search.EventDocument) int64 { return firstOr(d.VenueIDs) }, 0)
	organizer := mostCommon(ev, func(d search.EventDocument) int64 { return firstOr(d.OrganizerIDs) }, 0)
	amsterdam, paris, berlin := f.Cities[0], f.Cities[1], f.Cities[2]
	edge := nthDistance(ev, paris, 5)
	window := func(q *search.EventQuery) {
		q.Statuses = []string{"publish"}
		q.StartGTE = search.Some(f.Now)
		q.EndLTE = search.Some(f.Now + 2*365*day - 1)
		q.ExcludeHidden = true
	}
	publishTotal := ExpectedEvents(ev, q(func(q *search.EventQuery) { q.Statuses = []string{"publish"} })).Total

	cases := []eventCase{
		{name: "no filter", q: q(func(*search.EventQuery) {}), expect: all},
		{name: "status publish", q: q(func(q *search.EventQuery) { q.Statuses = []string{"publish"} })},
		{name: "statuses draft or pending", q: q(func(q *search.EventQuery) { q.Statuses = []string{"draft", "pending"} })},
		{name: "status unknown", q: q(func(q *search.EventQuery) { q.Statuses = []string{"trash"} }), expect: none},
		{name: "ids with a missing one", q: q(func(q *search.EventQuery) { q.IDs = []int64{ev[3].ID, ev[40].ID, ev[41].ID, ev[250].ID, 1} })},
		{name: "one category", q: q(func(q *search.EventQuery) { q.CategoryIDs = []int64{3} })},
		{name: "two categories", q: q(func(q *search.EventQuery) { q.CategoryIDs = []int64{2, 7} })},
		{name: "unknown category", q: q(func(q *search.EventQuery) { q.CategoryIDs = []int64{99} }), expect: none},
		{name: "one tag", q: q(func(q *search.EventQuery) { q.TagIDs = []int64{12} })},
		{name: "two tags", q: q(func(q *search.EventQuery) { q.TagIDs = []int64{14, 19} })},
		{name: "category and tag", q: q(func(q *search.EventQuery) { q.CategoryIDs, q.TagIDs = []int64{1, 2}, []int64{15} })},
		{name: "one venue", q: q(func(q *search.EventQuery) { q.VenueIDs = []int64{venue} })},
		{name: "two venues", q: q(func(q *search.EventQuery) { q.VenueIDs = []int64{venue, f.Venues[4].ID} })},
		{name: "one organizer", q: q(func(q *search.EventQuery) { q.OrganizerIDs = []int64{organizer} })},
		{name: "organizers and venue", q: q(func(q *search.EventQuery) {
			q.OrganizerIDs, q.VenueIDs = []int64{f.Organizers[0].ID, f.Organizers[1].ID, f.Organizers[2].ID}, []int64{venue, f.Venues[1].ID, f.Venues[2].ID}
		})},
		{name: "featured", q: q(func(q *search.EventQuery) { q.Featured = search.Some(true) })},
		{name: "not featured", q: q(func(q *search.EventQuery) { q.Featured = search.Some(false) })},
		{name: "ticketed", q: q(func(q *search.EventQuery) { q.Ticketed = search.Some(true) })},
		{name: "not ticketed", q: q(func(q *search.EventQuery) { q.Ticketed = search.Some(false) })},
		{name: "has geo", q: q(func(q *search.EventQuery) { q.HasGeo = search.Some(true) })},
		{name: "has no geo", q: q(func(q *search.EventQuery) { q.HasGeo = search.Some(false) })},
		{name: "parent", q: q(func(q *search.EventQuery) { q.ParentID = search.Some(parent) })},
		{name: "parent zero", q: q(func(q *search.EventQuery) { q.ParentID = search.Some(int64(0)) })},
		{name: "event status canceled", q: q(func(q *search.EventQuery) { q.EventStatuses = []string{"canceled"} })},
		{name: "event status scheduled, unset included", q: q(func(q *search.EventQuery) { q.EventStatuses = []string{"scheduled"} })},
		{name: "event statuses postponed or moved online", q: q(func(q *search.EventQuery) { q.EventStatuses = []string{"postponed", "moved_online"} })},
		{name: "event status unknown", q: q(func(q *search.EventQuery) { q.EventStatuses = []string{"rescheduled"} }), expect: none},
		{name: "event status canceled in the list window", q: q(func(q *search.EventQuery) {
			window(q)
			q.EventStatuses = []string{"canceled", "postponed"}
		})},
		{name: "exclude hidden", q: q(func(q *search.EventQuery) { q.ExcludeHidden = true })},
		{name: "exclude protected", q: q(func(q *search.EventQuery) { q.ExcludeProtected = true })},
		{name: "exclude hidden and protected", q: q(func(q *search.EventQuery) { q.ExcludeHidden, q.ExcludeProtected = true, true })},

		// Bounds sit exactly on a value that several events share.
		{name: "start on or after boundary", q: q(func(q *search.EventQuery) { q.StartGTE = search.Some(start) })},
		{name: "start after boundary", q: q(func(q *search.EventQuery) { q.StartGT = search.Some(start) })},
		{name: "start before boundary", q: q(func(q *search.EventQuery) { q.StartLT = search.Some(start) })},
		{name: "end on or before boundary", q: q(func(q *search.EventQuery) { q.EndLTE = search.Some(end) })},
		{name: "end before boundary", q: q(func(q *search.EventQuery) { q.EndLT = search.Some(end) })},
		{name: "end after boundary", q: q(func(q *search.EventQuery) { q.EndGT = search.Some(end) })},
		{name: "start window on one value", q: q(func(q *search.EventQuery) { q.StartGTE, q.StartLT = search.Some(start), search.Some(start+1) })},
		{name: "empty start window", q: q(func(q *search.EventQuery) { q.StartGT, q.StartLT = search.Some(start), search.Some(start+1) }), expect: none},
		{name: "starts between", q: q(func(q *search.EventQuery) {
			q.StartGT, q.StartLT = search.Some(f.Now-30*day), search.Some(f.Now+60*day)
		})},
		{name: "running in a month", q: q(func(q *search.EventQuery) { q.StartLT, q.EndGT = search.Some(f.Now+30*day), search.Some(f.Now+2*day) })},
		{name: "inside one year", q: q(func(q *search.EventQuery) { q.StartGTE, q.EndLTE = search.Some(f.Now), search.Some(f.Now+365*day) })},
		{name: "negative bounds", q: q(func(q *search.EventQuery) { q.StartGT, q.EndLT = search.Some(int64(-86400)), search.Some(int64(0)) }), expect: none},
		{name: "default list window", q: q(window)},
		{name: "typical list", q: q(func(q *search.EventQuery) {
			window(q)
			q.CategoryIDs, q.Featured = []int64{3}, search.Some(false)
		})},
		{name: "include by publish date", q: q(func(q *search.EventQuery) {
			q.IDs, q.Sort = []int64{ev[1].ID, ev[10].ID, ev[100].ID, ev[200].ID, ev[299].ID, ev[150].ID}, search.ByPublishDate
		})},
		{name: "all by publish date", q: q(func(q *search.EventQuery) { q.Sort = search.ByPublishDate }), expect: all},
		{name: "publish by publish date", q: q(func(q *search.EventQuery) { q.Statuses, q.Sort = []string{"publish"}, search.ByPublishDate })},

		// Geo: the reference is search.GeoCircle.Contains (Meilisearch's rule).
		{name: "near paris 10 km", q: q(func(q *search.EventQuery) { q.Near = search.Some(search.GeoCircle{Center: paris, RadiusKm: 10}) })},
		{name: "near amsterdam 25 km", q: q(func(q *search.EventQuery) { q.Near = search.Some(search.GeoCircle{Center: amsterdam, RadiusKm: 25}) })},
		{name: "near berlin 1000 km", q: q(func(q *search.EventQuery) { q.Near = search.Some(search.GeoCircle{Center: berlin, RadiusKm: 1000}) })},
		{name: "near paris radius zero", q: q(func(q *search.EventQuery) { q.Near = search.Some(search.GeoCircle{Center: paris}) })},
		{name: "near paris on the edge", q: q(func(q *search.EventQuery) { q.Near = search.Some(search.GeoCircle{Center: paris, RadiusKm: edge}) })},
		{name: "near paris just inside the edge", q: q(func(q *search.EventQuery) {
			q.Near = search.Some(search.GeoCircle{Center: paris, RadiusKm: math.Nextafter(edge, 0)})
		})},
		{name: "near and no geo", q: q(func(q *search.EventQuery) {
			q.Near, q.HasGeo = search.Some(search.GeoCircle{Center: paris, RadiusKm: 50}), search.Some(false)
		}), expect: none},
		{name: "near with filters", q: q(func(q *search.EventQuery) {
			q.Near = search.Some(search.GeoCircle{Center: amsterdam, RadiusKm: 30})
			q.Statuses, q.ExcludeHidden = []string{"publish", "private"}, true
		})},
		{name: "near the middle of nowhere", q: q(func(q *search.EventQuery) {
			q.Near = search.Some(search.GeoCircle{Center: search.GeoPoint{Lat: -45, Lng: 170}, RadiusKm: 100})
		}), expect: none},

		// Text: whole words, case-insensitive, in the query's language.
		{name: "text word", q: q(func(q *search.EventQuery) { q.Query = "jazz" })},
		{name: "text capitals and punctuation", q: q(func(q *search.EventQuery) { q.Query = "JAZZ!" })},
		{name: "text two words", q: q(func(q *search.EventQuery) { q.Query = "jazz concert" })},
		{name: "text three words", q: q(func(q *search.EventQuery) { q.Query = "Music, night; festival" })},
		{name: "text hyphenated word", q: q(func(q *search.EventQuery) { q.Query = "open-air" })},
		{name: "text part of a hyphenated word", q: q(func(q *search.EventQuery) { q.Query = "open " })},
		{name: "text other part of a hyphenated word", q: q(func(q *search.EventQuery) { q.Query = "air " })},
		{name: "text hyphenated word as a prefix", q: q(func(q *search.EventQuery) { q.Query = "rock-n-ro" })},
		{name: "text prefix followed by a space is a word", q: q(func(q *search.EventQuery) { q.Query = "jaz " }), expect: none},
		// '-' separates words, so a lone "-" is a query without words.
		{name: "text lone hyphen", q: q(func(q *search.EventQuery) { q.Query = "-" }), expect: all},
		{name: "text number", q: q(func(q *search.EventQuery) { q.Query = "2025 jazz" })},
		{name: "text accented", q: q(func(q *search.EventQuery) { q.Lang, q.Query = "fr", "café" })},
		{name: "text accented capitals", q: q(func(q *search.EventQuery) { q.Lang, q.Query = "fr", "CAFÉ THÉÂTRE" })},
		{name: "text other language", q: q(func(q *search.EventQuery) { q.Lang, q.Query = "nl", "muziek één" })},
		{name: "text word of another language", q: q(func(q *search.EventQuery) { q.Query = "muziek" }), expect: none},
		{name: "text unknown language", q: q(func(q *search.EventQuery) { q.Lang, q.Query = "de", "jazz" }), expect: none},
		{name: "text no match", q: q(func(q *search.EventQuery) { q.Query = "zzzqqq" }), expect: none},
		{name: "text only punctuation", q: q(func(q *search.EventQuery) { q.Query = " !? ... " }), expect: all},
		{name: "text with filters", q: q(func(q *search.EventQuery) {
			q.Query, q.Statuses, q.Featured = "jazz", []string{"publish"}, search.Some(true)
		})},
		{name: "text with window", q: q(func(q *search.EventQuery) { window(q); q.Query = "concert" })},

		// Paging over a known total.
		{name: "first page", paged: true, q: q(func(q *search.EventQuery) { q.Statuses, q.Limit = []string{"publish"}, 8 })},
		{name: "second page", paged: true, q: q(func(q *search.EventQuery) { q.Statuses, q.Offset, q.Limit = []string{"publish"}, 8, 8 })},
		{name: "last partial page", paged: true, q: q(func(q *search.EventQuery) { q.Statuses, q.Offset, q.Limit = []string{"publish"}, publishTotal-3, 8 })},
		{name: "page just past the end", paged: true, q: q(func(q *search.EventQuery) { q.Statuses, q.Offset, q.Limit = []string{"publish"}, publishTotal, 8 })},
		{name: "page far past the end", paged: true, q: q(func(q *search.EventQuery) { q.Statuses, q.Offset, q.Limit = []string{"publish"}, 100000, 8 })},
		{name: "total only", paged: true, q: q(func(q *search.EventQuery) { q.Statuses = []string{"publish"} })},
		{name: "total only with offset", paged: true, q: q(func(q *search.EventQuery) { q.Statuses, q.Offset = []string{"publish"}, 5 })},
		{name: "limit one", paged: true, q: q(func(q *search.EventQuery) { q.Limit = 1 }), expect: all},
		{name: "page by publish date", paged: true, q: q(func(q *search.EventQuery) { q.Sort, q.Offset, q.Limit = search.ByPublishDate, 5, 10 }), expect: all},
		{name: "total only matching nothing", paged: true, q: q(func(q *search.EventQuery) { q.Query = "zzzqqq" }), expect: none},
	}
	cases = append(cases, textCases(f)...)
	return append(cases, randomEventCases(f, 30)...)
}

// randomEventCases combines 2 to 4 filters drawn from a pool, with a fixed
// seed: combinations nobody would think to write.
func randomEventCases(f *Fixtures, n int) []eventCase {
	r := rand.New(rand.NewPCG(fixtureSeed, 7))
	ev := f.Events
	pool := []func(q *search.EventQuery){
		func(q *search.EventQuery) { q.Statuses = []string{"publish", "future", "private"}[:1+r.IntN(3)] },
		func(q *search.EventQuery) { q.CategoryIDs = []int64{1 + r.Int64N(8)} },
		func(q *search.EventQuery) { q.TagIDs = []int64{11 + r.Int64N(10), 11 + r.Int64N(10)} },
		func(q *search.EventQuery) { q.VenueIDs = []int64{f.Venues[r.IntN(len(f.Venues))].ID} },
		func(q *search.EventQuery) { q.OrganizerIDs = []int64{f.Organizers[r.IntN(len(f.Organizers))].ID} },
		func(q *search.EventQuery) { q.Featured = search.Some(r.IntN(2) == 0) },
		func(q *search.EventQuery) { q.Ticketed = search.Some(r.IntN(2) == 0) },
		func(q *search.EventQuery) { q.HasGeo = search.Some(r.IntN(2) == 0) },
		func(q *search.EventQuery) { q.StartGTE = search.Some(ev[r.IntN(len(ev))].Start) },
		func(q *search.EventQuery) { q.StartLT = search.Some(ev[r.IntN(len(ev))].Start) },
		func(q *search.EventQuery) { q.EndGT = search.Some(ev[r.IntN(len(ev))].End) },
		func(q *search.EventQuery) { q.EndLTE = search.Some(ev[r.IntN(len(ev))].End) },
		func(q *search.EventQuery) { q.ExcludeHidden, q.ExcludeProtected = true, r.IntN(2) == 0 },
		func(q *search.EventQuery) { q.Query = vocabulary["en"][r.IntN(len(vocabulary["en"]))] },
		func(q *search.EventQuery) {
			q.Near = search.Some(search.GeoCircle{Center: f.Cities[r.IntN(len(f.Cities))], RadiusKm: 5 + 40*r.Float64()})
		},
		func(q *search.EventQuery) { q.Sort = search.ByPublishDate },
		func(q *search.EventQuery) {
			q.EventStatuses = [][]string{{"canceled"}, {"scheduled"}, {"postponed", "moved_online"}}[r.IntN(3)]
		},
	}
	var cases []eventCase
	for i := range n {
		q := search.EventQuery{Lang: "en"}
		for _, j := range r.Perm(len(pool))[:2+r.IntN(3)] {
			pool[j](&q)
		}
		cases = append(cases, eventCase{name: fmt.Sprintf("random %02d", i), q: q, expect: any})
	}
	return cases
}

// placeCases is the table of venue and organizer queries over the fixtures.
func placeCases(f *Fixtures) []placeCase {
	venue := func(mod func(q *search.PlaceQuery)) search.PlaceQuery {
		out := search.PlaceQuery{Kind: search.Venues, Lang: "en"}
		mod(&out)
		return out
	}
	organizer := func(mod func(q *search.PlaceQuery)) search.PlaceQuery {
		out := search.PlaceQuery{Kind: search.Organizers, Lang: "en"}
		mod(&out)
		return out
	}
	// A boundary exactly on one venue's latest published start.
	var lastPublished int64
	for _, v := range f.Venues {
		if s, ok := v.LastStart["publish"]; ok && s > f.Now {
			lastPublished = s
			break
		}
	}
	allStatuses := []string{"publish", "future", "draft", "pending", "private"}
	venuesTotal := countKind(f.Places(), search.Venues)
	return []placeCase{
		{name: "all venues", q: venue(func(*search.PlaceQuery) {}), expect: all},
		{name: "all organizers", q: organizer(func(*search.PlaceQuery) {}), expect: all},
		{name: "published venues", q: venue(func(q *search.PlaceQuery) { q.Statuses = []string{"publish"} })},
		{name: "draft or private organizers", q: organizer(func(q *search.PlaceQuery) { q.Statuses = []string{"draft", "private"} })},
		{name: "venue ids with an organizer's", q: venue(func(q *search.PlaceQuery) {
			q.IDs = []int64{f.Venues[0].ID, f.Venues[7].ID, f.Venues[8].ID, f.Organizers[0].ID}
		})},
		{name: "venues with events", q: venue(func(q *search.PlaceQuery) { q.HasEvents = search.Some(true) })},
		{name: "venues without events", q: venue(func(q *search.PlaceQuery) { q.HasEvents = search.Some(false) })},
		{name: "organizers with events", q: organizer(func(q *search.PlaceQuery) { q.HasEvents = search.Some(true) })},
		{name: "upcoming published", q: venue(func(q *search.PlaceQuery) {
			q.UpcomingAfter, q.UpcomingStatuses = search.Some(f.Now), []string{"publish"}
		})},
		{name: "upcoming any status", q: venue(func(q *search.PlaceQuery) {
			q.UpcomingAfter, q.UpcomingStatuses = search.Some(f.Now), allStatuses
		})},
		{name: "upcoming on the boundary", q: venue(func(q *search.PlaceQuery) {
			q.UpcomingAfter, q.UpcomingStatuses = search.Some(lastPublished), []string{"publish"}
		})},
		{name: "upcoming just past the boundary", q: venue(func(q *search.PlaceQuery) {
			q.UpcomingAfter, q.UpcomingStatuses = search.Some(lastPublished+1), []string{"publish"}
		})},
		{name: "upcoming with no statuses", q: venue(func(q *search.PlaceQuery) { q.UpcomingAfter = search.Some(f.Now) }), expect: none},
		{name: "upcoming organizers", q: organizer(func(q *search.PlaceQuery) {
			q.UpcomingAfter, q.UpcomingStatuses = search.Some(f.Now+300*86400), []string{"publish", "private"}
		})},

		// Text: all words in one field (title, description, excerpt in the
		// language, or one of the other fields).
		{name: "text in the address", q: venue(func(q *search.PlaceQuery) { q.Query = "temple" })},
		{name: "text prefix in the address", q: venue(func(q *search.PlaceQuery) { q.Query = "templ" })},
		{name: "text typo in the city", q: venue(func(q *search.PlaceQuery) { q.Query = "amsterdma " })},
		{name: "text typo and prefix in one field", q: venue(func(q *search.PlaceQuery) { q.Query = "tmeple ave" })},
		{name: "text folded province", q: venue(func(q *search.PlaceQuery) { q.Query = "ILE-DE-FRANCE" })},
		{name: "text two words in the address", q: venue(func(q *search.PlaceQuery) { q.Query = "Temple avenue" })},
		{name: "text hyphenated street", q: venue(func(q *search.PlaceQuery) { q.Query = "saint-michel" })},
		{name: "text part of a hyphenated street", q: venue(func(q *search.PlaceQuery) { q.Query = "michel " })},
		{name: "text zip", q: venue(func(q *search.PlaceQuery) { q.Query = "75003" })},
		{name: "text city", q: venue(func(q *search.PlaceQuery) { q.Query = "AMSTERDAM" })},
		{name: "text words split over two fields", q: venue(func(q *search.PlaceQuery) { q.Query = "jazz amsterdam" }), expect: none},
		{name: "text in the name", q: venue(func(q *search.PlaceQuery) { q.Lang, q.Query = "fr", "CLUB" })},
		{name: "text in the description", q: venue(func(q *search.PlaceQuery) { q.Lang, q.Query = "nl", "muziek" })},
		{name: "text province", q: venue(func(q *search.PlaceQuery) { q.Query = "île-de-france" })},
		{name: "text with filters", q: venue(func(q *search.PlaceQuery) {
			q.Query, q.Statuses, q.HasEvents = "temple", []string{"publish"}, search.Some(true)
		})},
		{name: "organizer email", q: organizer(func(q *search.PlaceQuery) { q.Query = "info example" })},
		{name: "organizer website", q: organizer(func(q *search.PlaceQuery) { q.Query = "https events" }), expect: all},
		{name: "organizer text no match", q: organizer(func(q *search.PlaceQuery) { q.Query = "avenue" }), expect: none},

		{name: "venues first page", paged: true, q: venue(func(q *search.PlaceQuery) { q.Limit = 8 }), expect: all},
		{name: "venues last partial page", paged: true, q: venue(func(q *search.PlaceQuery) { q.Offset, q.Limit = venuesTotal-2, 8 }), expect: all},
		{name: "venues past the end", paged: true, q: venue(func(q *search.PlaceQuery) { q.Offset, q.Limit = venuesTotal, 8 }), expect: all},
		{name: "venues total only", paged: true, q: venue(func(q *search.PlaceQuery) { q.Statuses = []string{"publish"} })},
		{name: "organizers middle page", paged: true, q: organizer(func(q *search.PlaceQuery) { q.Offset, q.Limit = 5, 5 }), expect: all},
	}
}

// mostCommon returns the most frequent key of docs (the smallest on ties),
// ignoring the skip values.
func mostCommon(docs []search.EventDocument, key func(search.EventDocument) int64, skip ...int64) int64 {
	counts := map[int64]int{}
	for _, d := range docs {
		if k := key(d); !slices.Contains(skip, k) {
			counts[k]++
		}
	}
	best, bestN := int64(0), 0
	for k, n := range counts {
		if n > bestN || n == bestN && k < best {
			best, bestN = k, n
		}
	}
	return best
}

func firstOr(ids []int64) int64 {
	if len(ids) == 0 {
		return 0
	}
	return ids[0]
}

// nthDistance returns the n-th smallest distance from center to an event
// point, so that a radius can sit exactly on a document.
func nthDistance(docs []search.EventDocument, center search.GeoPoint, n int) float64 {
	var ds []float64
	for _, d := range docs {
		if d.HasGeo && d.Geo != nil {
			if km := search.DistanceKm(*d.Geo, center); km > 0 {
				ds = append(ds, km)
			}
		}
	}
	slices.Sort(ds)
	ds = slices.Compact(ds)
	return ds[min(n, len(ds)-1)]
}
