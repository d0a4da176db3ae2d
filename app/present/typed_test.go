package present

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/search"
)

// typedFixture is a renderer and one event linking everything an event
// can link (an image, a venue with every field, an organizer with every
// field, a child category and a tag), with a cost and a recurrence.
func typedFixture(t *testing.T) (*Renderer, *repository.Record, *Linked) {
	t.Helper()
	rn := &Renderer{cfg: config.Default(), siteHost: "example.test", links: linkedRecords{gen: func() int64 { return 1 }, ttl: time.Hour}}
	rn.placeRenderer = placeRenderer{rn}
	lat, lng := 52.37, 4.89
	day := time.Date(2027, 3, 18, 18, 0, 0, 0, time.UTC)
	text := func(s string) repository.Text { return repository.Text{"en": s} }
	img := &repository.Record{ID: 7, Kind: repository.KindImage, Image: &repository.ImageFields{URL: "http://example.test/a.png", Extension: "png"}}
	venue := &repository.Record{ID: 8, Kind: repository.KindVenue, Status: repository.StatusPublish, Author: 1, Date: day, Modified: day,
		Title: text("Hall"), Content: text("<p>Big</p>"), Excerpt: text("Big"), Slug: text("hall"), ImageID: 7,
		Venue: &repository.VenueFields{Address: "1 Main St", City: "Amsterdam", Country: "NL", Province: "NH", State: "NH", StateProvince: "NH",
			Zip: "1000", Phone: "123", Website: "http://hall.test", ShowMap: true, GeoLat: &lat, GeoLng: &lng}}
	org := &repository.Record{ID: 9, Kind: repository.KindOrganizer, Status: repository.StatusPublish, Author: 1, Date: day, Modified: day,
		Title: text("Org"), Content: text("About"), Excerpt: text("About"), Slug: text("org"), ImageID: 7,
		Organizer: &repository.OrganizerFields{Phone: "456", Website: "http://org.test", Email: "org@example.test"}}
	cat := &repository.Label{ID: 20, Taxonomy: repository.LabelCategory, Name: text("Music"), Slug: text("music"), Parent: 19}
	tag := &repository.Label{ID: 21, Taxonomy: repository.LabelTag, Name: text("Jazz"), Slug: text("jazz")}
	ev := &repository.Record{ID: 10, Kind: repository.KindEvent, Status: repository.StatusPublish, Author: 1, Date: day, Modified: day,
		Title: text("Concert"), Content: text("Jazz </script> night"), Excerpt: text("Jazz"), Slug: text("concert"), ImageID: 7, Password: "pw",
		Event: &repository.EventFields{StartLocal: "2027-03-18 19:00:00", EndLocal: "2027-03-18 21:00:00", StartUTC: day, EndUTC: day.Add(2 * time.Hour),
			Cost: []string{"€5", "€10"}, Venues: []int64{8}, Organizers: []int64{9}, Categories: []int64{20}, Tags: []int64{21},
			Recurrence: &repository.Recurrence{Rules: []string{"FREQ=WEEKLY;COUNT=2"}}}}
	l := &Linked{posts: map[int64]*repository.Record{7: img, 8: venue, 9: org}, terms: map[int64]*repository.Label{20: cat, 21: tag},
		counts: map[repository.LabelKind]map[int64]int{repository.LabelCategory: {20: 3}, repository.LabelTag: {21: 1}}}
	return rn, ev, l
}

// encode writes a typed value.
func encode(t *testing.T, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteJSON(&buf, v); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// keysAt returns the keys, in order, of the object at path (dotted; a
// list step takes its first item) in JSON data.
func keysAt(t *testing.T, data []byte, path string) string {
	t.Helper()
	v, err := decodeOrdered(data)
	if err != nil {
		t.Fatalf("%v in %s", err, data)
	}
	if path != "" {
		for _, step := range strings.Split(path, ".") {
			if l, ok := v.([]any); ok && len(l) > 0 {
				v = l[0]
			}
			o, ok := v.(*Obj)
			if !ok {
				t.Fatalf("%s: no object at %q in %s", path, step, data)
			}
			v = o.At(step)
		}
	}
	if l, ok := v.([]any); ok && len(l) > 0 {
		v = l[0]
	}
	o, ok := v.(*Obj)
	if !ok {
		t.Fatalf("%s: not an object in %s", path, data)
	}
	return strings.Join(o.keys, " ")
}

// TestTypedFieldOrder pins the field order of every typed response
// value to the order the recorded responses have (app/api's
// testdata/golden, which TestGolden compares byte for byte): a field
// moved in a writeJSON method fails here, named, before the goldens show
// a byte difference somewhere in a long response.
func TestTypedFieldOrder(t *testing.T) {
	const (
		eventKeys = "id global_id global_id_lineage author status date date_utc modified modified_utc url rest_url title description excerpt slug image all_day start_date start_date_details end_date end_date_details utc_start_date utc_start_date_details utc_end_date utc_end_date_details timezone timezone_abbr cost cost_details website show_map show_map_link hide_from_listings sticky featured categories tags venue organizer custom_fields ticketed language translations recurrence event_status event_status_reason source"
		venueKeys = "id author status date date_utc modified modified_utc url venue description excerpt slug image address city country province state zip phone website stateprovince geo_lat geo_lng json_ld show_map show_map_link global_id global_id_lineage language translations"
		orgKeys   = "id author status date date_utc modified modified_utc url organizer description excerpt slug image phone website email json_ld global_id global_id_lineage language translations"
	)
	rn, ev, l := typedFixture(t)
	single := encode(t, rn.Event(ev, l, View{Lang: "en", Single: true}))
	listed := encode(t, rn.ListedEvent(ev, l, View{Lang: "en"}))
	redacted := rn.ListedEvent(ev, l, View{Lang: "en"})
	RedactEvent(redacted)
	AddHighlight(redacted, search.ParseQuery("concert"))
	extras := rn.Event(ev, l, View{Lang: "en", Single: true})
	extras.Occurrence = &OccurrenceRef{Key: "k", Start: "s", RestURL: "u"}
	extras.WithParent(3).ChangedOccurrences = []ChangedOccurrence{{Key: "k"}}
	AddHighlight(extras, search.ParseQuery("jazz"))
	term := rn.Label(&repository.Label{ID: 20, Taxonomy: repository.LabelCategory, Name: repository.Text{"en": "Music"}, Parent: 19}, 3, "en")
	tag := rn.Label(&repository.Label{ID: 21, Taxonomy: repository.LabelTag, Name: repository.Text{"en": "Jazz"}}, 1, "en")
	// Under The Events Calendar's root, events have no event_status
	// fields (the original's have none).
	tecCfg := config.Default()
	tecCfg.RestRoot, tecCfg.APINamespace = "/wp-json", "tribe/events/v1"
	tec := &Renderer{cfg: tecCfg, siteHost: "example.test", links: linkedRecords{gen: func() int64 { return 1 }, ttl: time.Hour}}
	tec.placeRenderer = placeRenderer{tec}
	tecEvent := encode(t, tec.ListedEvent(ev, l, View{Lang: "en"}))
	rescheduled := &EventLD{Name: "n", URL: "u", StartDate: "s", EndDate: "e", EventStatus: "st", PreviousStartDate: "p"}
	list := NewList("events", []any{rn.ListedEvent(ev, l, View{Lang: "en"})}, Paging{Page: 2, PerPage: 1, Total: 3, Base: "http://example.test/events/"})
	list.Facets = Facets(map[string]map[string]int{"venue": {"8": 1}})
	cases := []struct {
		name string
		data []byte
		path string
		want string
	}{
		{"event", listed, "", eventKeys},
		{"event under the TEC root", tecEvent, "", strings.TrimSuffix(eventKeys, " event_status event_status_reason source")},
		{"rescheduled json_ld", encode(t, rescheduled), "", "@context @type name description url startDate endDate eventStatus previousStartDate"},
		{"single event", single, "", eventKeys + " json_ld"},
		{"event with every extra", encode(t, extras), "", eventKeys + " json_ld occurrence parent changed_occurrences highlight"},
		{"redacted event", encode(t, redacted), "", eventKeys + " highlight"},
		{"image", single, "image", "url id extension"},
		{"date details", single, "start_date_details", "year month day hour minutes seconds"},
		{"cost details", single, "cost_details", "currency_symbol currency_code currency_position values"},
		{"redacted cost details", encode(t, redacted), "cost_details", "currency_symbol currency_position currency_code values"},
		{"embedded term", single, "categories", "name slug term_group term_taxonomy_id taxonomy description parent count filter id urls language translations"},
		{"term urls", single, "categories.urls", "self collection up"},
		{"venue", single, "venue", venueKeys},
		{"organizer", single, "organizer", orgKeys},
		{"recurrence", single, "recurrence", "rules exclusions additions"},
		{"event json_ld", single, "json_ld", "@context @type name description image url eventAttendanceMode startDate endDate eventStatus location organizer offers"},
		{"place json_ld", single, "json_ld.location", "@context @type name description url address telephone geo"},
		{"postal address", single, "json_ld.location.address", "@type streetAddress addressLocality addressRegion postalCode addressCountry"},
		{"geo", single, "json_ld.location.geo", "@type latitude longitude"},
		{"person json_ld", single, "json_ld.organizer", "@context @type name description url telephone email sameAs"},
		{"offer", single, "json_ld.offers", "@type price priceCurrency url"},
		{"occurrence", encode(t, extras), "occurrence", "key start rest_url"},
		{"changed occurrence", encode(t, extras), "changed_occurrences", "key start start_date end_date title status event_status"},
		{"highlight", encode(t, extras), "highlight", "title excerpt"},
		{"category", encode(t, term), "", "id count description name slug taxonomy parent meta url urls language translations"},
		{"tag", encode(t, tag), "", "id count description name slug taxonomy meta url urls language translations"},
		{"list", encode(t, list), "", "events rest_url next_rest_url previous_rest_url total total_pages facets"},
		{"term list", encode(t, &LabelList{Key: "categories", Items: []any{term}, RestURL: "r", NextRestURL: "n", PreviousRestURL: "p", Total: 3, TotalPages: 3}),
			"", "rest_url total total_pages categories next_rest_url previous_rest_url"},
	}
	day := time.Date(2027, 3, 18, 18, 0, 0, 0, time.UTC)
	hook := &repository.Webhook{ID: 1, URL: "https://hook.test", Events: []string{"event.created"}, Created: day, Updated: day,
		DisabledReason: "failing", FailingSince: day, Secret: "whsec_x"}
	token := NewToken(&repository.Token{UserID: 1, Name: "ci", Created: day})
	const (
		sourceKeys = "id name url format detected_format schedule status categories tags on_removed author created updated last_run"
		runKeys    = "id source_id status trigger started finished created updated unchanged removed failed error problems"
	)
	src := &repository.Source{ID: 2, URL: "https://feed.test/a.ics", Format: "auto", Created: day, Updated: day}
	run := &repository.SourceRun{ID: 3, SourceID: 2, Status: "failed", Trigger: "api", Started: day, Finished: day, Error: "e",
		Problems: []repository.RunProblem{{UID: "u", Problem: "p"}}}
	withNext := NewSource(src, nil)
	withNext.NextRun = "2027-03-18T19:00:00Z"
	imported := *ev
	imported.Source = &repository.SourceLink{SourceID: 2, UID: "u@feed.test", Hash: "h"}
	linked := rn.Event(&imported, l, View{Lang: "en"})
	index := &NamespaceIndex{Namespace: "ns", Up: "http://x/", Routes: []*RouteDoc{{Path: "/ns/events", Namespace: "ns", Methods: []string{"GET"}, Self: "http://x/ns/events",
		Endpoints: []EndpointDoc{{Methods: []string{"GET"}, Args: []ArgDoc{{Name: "tags", Type: "array", Format: "f", Description: "d", Default: "x", Enum: []string{"x"}, Array: true, ItemsType: "string"}}}}}}}
	cases = append(cases, []struct {
		name string
		data []byte
		path string
		want string
	}{
		{"namespace index", encode(t, index), "", "namespace routes _links"},
		{"route", encode(t, index), "routes./ns/events", "namespace methods endpoints _links"},
		{"endpoint", encode(t, index), "routes./ns/events.endpoints", "methods args"},
		{"argument", encode(t, index), "routes./ns/events.endpoints.args.tags", "type format description default enum items required"},
		{"user", encode(t, NewUser(&repository.User{ID: 1, Login: "a", Role: repository.RoleAdmin, Created: day})), "", "id login role disabled created"},
		{"token", encode(t, token), "", "id user name created last_used expires"},
		{"created token", encode(t, token.WithSecret("s")), "", "id user name created last_used expires token"},
		{"webhook", encode(t, NewWebhook(&repository.Webhook{ID: 1, Created: day, Updated: day}, false)), "", "id url description events active created updated"},
		{"webhook with every field", encode(t, NewWebhook(hook, true)), "", "id url description events active disabled_reason failing_since created updated secret"},
		{"source", encode(t, NewSource(src, nil)), "", sourceKeys},
		{"source with its last run", encode(t, NewSource(src, run)), "", sourceKeys},
		{"source with next_run", encode(t, withNext), "", sourceKeys + " next_run"},
		{"run", encode(t, NewSourceRun(run)), "", runKeys},
		{"last run", encode(t, NewSource(src, run)), "last_run", runKeys},
		{"run problem", encode(t, NewSourceRun(run)), "problems", "uid problem"},
		{"event source", encode(t, linked), "source", "id uid"},
	}...)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := keysAt(t, c.data, c.path); got != c.want {
				t.Errorf("keys\n got %s\nwant %s", got, c.want)
			}
		})
	}
}

// TestKeptRenderingsWriteTheSame checks that the kept encodings (an
// event's head, venues, organizers and terms reused from the
// linked-record cache) write exactly what a fresh rendering does, and
// that completing or redacting a copy of a kept head leaves the kept one
// as it was.
func TestKeptRenderingsWriteTheSame(t *testing.T) {
	rn, ev, l := typedFixture(t)
	v := View{Lang: "en"}
	fresh := encode(t, rn.Event(ev, l, v))
	first := rn.ListedEvent(ev, l, v)
	if first.head == nil || first.Venue[0].enc == nil || first.Organizer[0].enc == nil || first.Categories[0].enc == nil {
		t.Fatal("ListedEvent kept no encoding: the test no longer covers it")
	}
	RedactEvent(first)
	if got := encode(t, first); bytes.Equal(got, fresh) || bytes.Contains(got, []byte("Jazz <")) {
		t.Errorf("redacted event writes protected text: %s", got)
	}
	for i := range 2 {
		if got := encode(t, rn.ListedEvent(ev, l, v)); !bytes.Equal(got, fresh) {
			t.Errorf("kept rendering %d:\n got %s\nwant %s", i, got, fresh)
		}
	}
	if got, want := encode(t, rn.LinkedVenue(l.posts[8], l, v)), encode(t, rn.Venue(l.posts[8], l, v)); !bytes.Equal(got, want) {
		t.Errorf("kept venue %s, want %s", got, want)
	}
	if got, want := encode(t, rn.LinkedOrganizer(l.posts[9], l, v)), encode(t, rn.Organizer(l.posts[9], l, v)); !bytes.Equal(got, want) {
		t.Errorf("kept organizer %s, want %s", got, want)
	}
}

// TestPlaceDropsEmptyValues checks the original plugin's rule for venues
// and organizers: empty and "0" values are left out (before show_map for
// venues), and an event's json_ld reads the venue as written.
func TestPlaceDropsEmptyValues(t *testing.T) {
	rn, ev, l := typedFixture(t)
	sparse := *l.posts[8]
	sparse.ImageID, sparse.Content, sparse.Excerpt = 0, nil, nil
	sparse.Venue = &repository.VenueFields{City: "Amsterdam", Zip: "0"}
	l.posts[8] = &sparse
	got := keysAt(t, encode(t, rn.Venue(&sparse, l, View{Lang: "en"})), "")
	if want := "id author status date date_utc modified modified_utc url venue slug city show_map show_map_link global_id global_id_lineage language translations"; got != want {
		t.Errorf("venue keys\n got %s\nwant %s", got, want)
	}
	single := encode(t, rn.Event(ev, l, View{Lang: "en", Single: true}))
	if got := keysAt(t, single, "json_ld.location.address"); got != "@type addressLocality" {
		t.Errorf("event json_ld address of a venue with zip 0: %s", got)
	}
	if got := keysAt(t, single, "venue.json_ld.address"); got != "@type addressLocality postalCode" {
		t.Errorf("venue's own json_ld address: %s", got)
	}
	if !slices.Contains(strings.Fields(keysAt(t, single, "")), "json_ld") {
		t.Error("single event without json_ld")
	}
}
