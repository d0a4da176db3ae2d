package api_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/calendar/eventcal/app/wpimport"
	"github.com/calendar/eventcal/app/wpimport/replay"
	"github.com/calendar/eventcal/repository"
)

// TestImportStoresWhatTheAPIStores (issue 30, finding 7): a hostile
// source's records are stored exactly as an author's POST of the same
// fields is stored, or refused when the API refuses that POST with 400
// (which it does for editors too). The source shows titles and names
// entity-encoded (WordPress's rendering); the API is sent the text they
// stand for.
func TestImportStoresWhatTheAPIStores(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	type fields = map[string]any
	const hostileDesc = `<p onclick="steal()">Hi</p><script>alert(1)</script><a href="javascript:alert(1)">x</a>` +
		`<img src="https://e.test/a.png" onerror="alert(1)"><strong>ok</strong>`
	cases := []struct {
		name string
		kind string // "events", "venues", "organizers"
		src  fields // over the record replay makes
		api  fields // the same fields, as a POST sends them
		// refused names the field both refuse ("" when both store).
		refused string
	}{
		{"script in a title", "events", fields{"title": `<script>alert(1)</script>Concert`}, fields{"title": `<script>alert(1)</script>Concert`}, ""},
		{"entity-encoded script in a title", "events", fields{"title": `&lt;script&gt;alert(1)&lt;/script&gt;Night &#038; Day`},
			fields{"title": `<script>alert(1)</script>Night & Day`}, ""},
		{"markup in a title", "events", fields{"title": `<b>Jazz</b> <img src=x onerror=alert(1)>Night`}, fields{"title": `<b>Jazz</b> <img src=x onerror=alert(1)>Night`}, ""},
		{"script, onerror and javascript: in a description", "events", fields{"title": "D", "description": hostileDesc, "excerpt": `<em>e</em><iframe src="https://evil.test"></iframe>`},
			fields{"title": "D", "description": hostileDesc, "excerpt": `<em>e</em><iframe src="https://evil.test"></iframe>`}, ""},
		{"markup in a cost", "events", fields{"title": "C", "cost": `<i>5</i>`, "cost_details": fields{"currency_symbol": "", "values": []string{}}},
			fields{"title": "C", "cost": `<i>5</i>`}, ""},
		{"javascript: website", "events", fields{"title": "W", "website": "javascript:alert(1)"}, fields{"title": "W", "website": "javascript:alert(1)"}, "website"},
		{"quote in a website", "events", fields{"title": "W2", "website": `https://e.test/"onmouseover="alert(1)`}, fields{"title": "W2", "website": `https://e.test/"onmouseover="alert(1)`}, "website"},
		{"quote in an image URL", "events", fields{"title": "I", "image": fields{"id": 9100, "url": `https://e.test/a".png`, "extension": "png"}},
			fields{"title": "I", "image": `https://e.test/a".png`}, "image"},
		{"percent-encoded markup in an image URL", "events", fields{"title": "I2", "image": fields{"id": 9200, "url": "https://e.test/up/%3Cscript%3Ex.png", "extension": "png"}},
			fields{"title": "I2", "image": "https://e.test/up/%3Cscript%3Ex.png"}, ""},
		{"onerror in a venue name and address", "venues", fields{"venue": `<img src=x onerror=alert(1)>Hall`, "address": `<b>1</b> Main St<script>x</script>`, "description": hostileDesc},
			fields{"venue": `<img src=x onerror=alert(1)>Hall`, "address": `<b>1</b> Main St<script>x</script>`, "description": hostileDesc}, ""},
		{"CR/LF in a venue phone", "venues", fields{"venue": "P", "phone": "555\r\nX-Injected: 1"}, fields{"venue": "P", "phone": "555\r\nX-Injected: 1"}, "phone"},
		{"script in an organizer name and phone", "organizers", fields{"organizer": `Acme<script>x</script>`, "phone": `<a href="javascript:x">1</a>`},
			fields{"organizer": `Acme<script>x</script>`, "phone": `<a href="javascript:x">1</a>`}, ""},
		{"CR/LF in an organizer e-mail", "organizers", fields{"organizer": "E", "email": "a@example.org\r\nBcc: x@evil.test"}, fields{"organizer": "E", "email": "a@example.org\r\nBcc: x@evil.test"}, "email"},
		{"CR/LF in an organizer phone", "organizers", fields{"organizer": "F", "phone": "1\n2"}, fields{"organizer": "F", "phone": "1\n2"}, "phone"},
	}
	site := &replay.Site{}
	for i, tc := range cases {
		id := int64(9001 + i)
		var rec map[string]any
		switch tc.kind {
		case "events":
			rec = replay.Event(id, "")
			site.Events = append(site.Events, rec)
		case "venues":
			rec = replay.Venue(id, "")
			site.Venues = append(site.Venues, rec)
		default:
			rec = replay.Organizer(id, "")
			site.Organizers = append(site.Organizers, rec)
		}
		rec["description"] = ""
		for k, v := range tc.src {
			rec[k] = v
		}
	}
	src := replay.NewSite(t, site)
	// The import writes into a store of its own, so that nothing it
	// stored (an image registered under a URL) is reused by the API.
	into := newEnv(t).store
	rep, err := wpimport.Run(t.Context(), into, wpimport.Options{Source: src.Root(), Language: "en", Rate: -1, RetryBase: time.Millisecond})
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	failed := map[int64]string{}
	for _, kr := range rep.Kinds {
		for _, f := range kr.Failed {
			failed[f.ID] = f.Field
		}
	}
	imported := map[int64]*repository.Record{}
	for i := range cases {
		if p, err := into.GetRecord(t.Context(), int64(9001+i)); err == nil {
			imported[p.ID] = p
		}
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id := int64(9001 + i)
			body := fields{}
			for k, v := range tc.api {
				body[k] = v
			}
			if tc.kind == "events" {
				body["start_date"], body["end_date"] = "2027-05-01 19:00:00", "2027-05-01 22:00:00"
			}
			if tc.refused != "" {
				for _, role := range []string{"author", "editor"} {
					if r := e.do("POST", tc.kind, role, body); r.status != 400 {
						t.Errorf("the API as %s: %d %s; want 400", role, r.status, r.raw)
					}
				}
				if failed[id] != tc.refused {
					t.Errorf("the import: failed field %q, want %q refused", failed[id], tc.refused)
				}
				if imported[id] != nil {
					t.Errorf("the import stored the record the API refuses")
				}
				return
			}
			if f, ok := failed[id]; ok {
				t.Fatalf("the import refused it (%s); the API stores it", f)
			}
			viaAPI := e.must(201, "POST", tc.kind, "author", body).id()
			want, err := e.store.GetRecord(t.Context(), viaAPI)
			if err != nil {
				t.Fatal(err)
			}
			got := imported[id]
			if got == nil {
				t.Fatal("the import stored nothing")
			}
			if g, w := storedText(got), storedText(want); g != w {
				t.Errorf("imported:\n%s\nvia the API:\n%s", g, w)
			}
			if (got.ImageID == 0) != (want.ImageID == 0) {
				t.Fatalf("image %d imported, %d via the API", got.ImageID, want.ImageID)
			}
			if got.ImageID != 0 {
				gi, err1 := into.GetRecord(t.Context(), got.ImageID)
				wi, err2 := e.store.GetRecord(t.Context(), want.ImageID)
				if err1 != nil || err2 != nil {
					t.Fatal(err1, err2)
				}
				g := []any{gi.Title["en"], gi.Slug["en"], gi.Image.URL, gi.Image.Extension}
				w := []any{wi.Title["en"], wi.Slug["en"], wi.Image.URL, wi.Image.Extension}
				if fmt.Sprint(g) != fmt.Sprint(w) {
					t.Errorf("image imported as %q, via the API %q", g, w)
				}
			}
		})
	}
}

// storedText is what a post stores of the fields the hostile cases send:
// its texts and kind-specific text fields.
func storedText(p *repository.Record) string {
	v := map[string]any{"title": p.Title["en"], "content": p.Content["en"], "excerpt": p.Excerpt["en"]}
	switch {
	case p.Event != nil:
		v["cost"], v["website"] = p.Event.Cost, p.Event.Website
	case p.Venue != nil:
		v["address"], v["phone"], v["website"] = p.Venue.Address, p.Venue.Phone, p.Venue.Website
	case p.Organizer != nil:
		v["phone"], v["email"], v["website"] = p.Organizer.Phone, p.Organizer.Email, p.Organizer.Website
	}
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

// TestImportHugeIDThenCreate (issue 30, finding 9): importing an event
// with ID 2^63−1 (above the store's range) refuses that record, lists it,
// and every create after the import still succeeds.
func TestImportHugeIDThenCreate(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	huge := int64(1<<63 - 1)
	site := &replay.Site{Events: []map[string]any{replay.Event(huge, "Huge"), replay.Event(repository.MaxExplicitID+1, "Just above"), replay.Event(77, "Fine")},
		Venues: []map[string]any{replay.Venue(huge-1, "Huge venue")}}
	src := replay.NewSite(t, site)
	rep, err := wpimport.Run(t.Context(), e.store, wpimport.Options{Source: src.Root(), Language: "en", Rate: -1, RetryBase: time.Millisecond})
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	refused := map[int64]bool{}
	for _, kr := range rep.Kinds {
		for _, f := range kr.Failed {
			if f.Field == "id" {
				refused[f.ID] = true
			}
		}
	}
	for _, id := range []int64{huge, repository.MaxExplicitID + 1, huge - 1} {
		if !refused[id] {
			t.Errorf("ID %d not listed as refused: %+v", id, rep.Kinds)
		}
	}
	if kr := rep.Kind(wpimport.KindEvent); kr.Created != 1 {
		t.Errorf("events created %d, want the one in range", kr.Created)
	}
	e.must(200, "GET", "events/77", "", nil)
	ev := e.must(201, "POST", "events", "editor", map[string]any{"title": "After", "start_date": "2027-01-01 10:00", "end_date": "2027-01-01 11:00"})
	if ev.id() <= 77 || ev.id() > repository.MaxID {
		t.Errorf("event created after the import got ID %d", ev.id())
	}
	e.must(201, "POST", "venues", "editor", map[string]any{"venue": "After"})
	e.must(200, "GET", "events/"+strconv.FormatInt(ev.id(), 10), "", nil)
}
