package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/calendar/eventcal/app/wpimport"
	"github.com/calendar/eventcal/app/wpimport/replay"
)

// TestImportedCostsReadAsTheSource (issue 34, finding 3): after an import
// of the recorded TEC 6.17.1 site, every event's cost reads here exactly
// as the source's cost field did ("$10", "$5 – $15", "€12", "Free",
// "$12.50"), with no currency configured here: the source's site currency
// comes over with each event that showed it. Every event of the
// recordings is checked.
func TestImportedCostsReadAsTheSource(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	src := replay.New(t)
	rep, err := wpimport.Run(t.Context(), e.store, wpimport.Options{Source: src.Root(), User: replay.User, AppPassword: replay.AppPassword,
		Language: "en", Rate: -1, RetryBase: time.Millisecond})
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	if rep.Failed() {
		var out strings.Builder
		rep.Print(&out)
		t.Fatalf("import failed:\n%s", out.String())
	}
	// The source's cost of every event: its authenticated single read
	// where one was recorded, else the lists.
	type seen struct {
		cost   string
		single bool
	}
	want := map[int64]seen{}
	for file, x := range replay.Load(t) {
		if x.Status != 200 || x.Request.Auth == "basic-wrong-password" || !strings.HasPrefix(file, "events-") {
			continue
		}
		single := strings.HasPrefix(file, "events-single-") || strings.HasPrefix(file, "events-by-slug-")
		if single && x.Request.Auth == "anonymous" {
			// The anonymous reads (with a password among them) are not
			// what the importer reads: the replayed WordPress route does
			// not name the passwords, so 369 comes over as listed (cost
			// ""); TestImportedProtectedCost has one that does.
			continue
		}
		var items []struct {
			ID   int64  `json:"id"`
			Cost string `json:"cost"`
		}
		if single {
			var one struct {
				ID   int64  `json:"id"`
				Cost string `json:"cost"`
			}
			if json.Unmarshal(x.Body, &one) != nil || one.ID == 0 {
				continue
			}
			items = append(items, one)
		} else {
			var list struct {
				Events json.RawMessage `json:"events"`
			}
			if json.Unmarshal(x.Body, &list) != nil || json.Unmarshal(list.Events, &items) != nil {
				continue
			}
		}
		for _, it := range items {
			if w, ok := want[it.ID]; ok && (w.single || !single) {
				if !single && w.cost != it.Cost && !w.single {
					t.Fatalf("event %d: the recorded lists disagree on its cost (%q, %q)", it.ID, w.cost, it.Cost)
				}
				continue
			}
			want[it.ID] = seen{it.Cost, single}
		}
	}
	ids := make([]int64, 0, len(want))
	for id := range want {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	if len(ids) < 170 {
		t.Fatalf("only %d events found in the recordings", len(ids))
	}
	var withCurrency int
	for _, id := range ids {
		r := e.must(200, "GET", fmt.Sprintf("events/%d?context=edit", id), "admin", nil)
		if got := r.str("cost"); got != want[id].cost {
			t.Errorf("event %d: cost %q, the source showed %q", id, got, want[id].cost)
		}
		if strings.HasPrefix(want[id].cost, "$") {
			withCurrency++
		}
	}
	if withCurrency == 0 {
		t.Error("no event showed the site currency: the recordings changed?")
	}
	t.Logf("%d events compared, %d shown with the source's site currency", len(ids), withCurrency)
}

// TestImportedImagesOnTECRoot (issue 34, finding 4): after an import of
// the recorded site, the compatibility root shows every featured image
// as the source did, byte for byte: {url, id, extension, width, height,
// filesize}. This service's root shows {url, id, extension}.
func TestImportedImagesOnTECRoot(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "TEC_COMPAT", "true")
	src := replay.New(t)
	if _, err := wpimport.Run(t.Context(), e.store, wpimport.Options{Source: src.Root(), User: replay.User, AppPassword: replay.AppPassword,
		Language: "en", Rate: -1, RetryBase: time.Millisecond}); err != nil {
		t.Fatalf("import: %v", err)
	}
	checked := 0
	for file, x := range replay.Load(t) {
		if x.Status != 200 || x.Request.Auth != "basic-application-password" || !strings.HasPrefix(file, "events-single-") {
			continue
		}
		var ev struct {
			ID    int64           `json:"id"`
			Image json.RawMessage `json:"image"`
		}
		if json.Unmarshal(x.Body, &ev) != nil || ev.ID == 0 || !strings.HasPrefix(string(ev.Image), "{") {
			continue
		}
		var want, got struct {
			Image json.RawMessage `json:"image"`
		}
		want.Image = ev.Image
		r := e.must(200, "GET", fmt.Sprintf("%s/events/%d", tecRoot, ev.ID), "admin", nil)
		if err := json.Unmarshal([]byte(r.raw), &got); err != nil {
			t.Fatal(err)
		}
		if compactJSON(t, got.Image) != compactJSON(t, want.Image) {
			t.Errorf("event %d: image %s on the TEC root, the source showed %s", ev.ID, got.Image, want.Image)
		}
		ours := e.must(200, "GET", fmt.Sprintf("%s/events/%d", root, ev.ID), "admin", nil)
		if w := ours.path("image.width"); w != nil {
			t.Errorf("event %d: this service's root shows the image width %v", ev.ID, w)
		}
		checked++
	}
	if checked < 4 {
		t.Fatalf("%d events with an image compared, want the recordings' four", checked)
	}
}

// compactJSON is JSON text without insignificant space, its keys in
// their order.
func compactJSON(t *testing.T, b []byte) string {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return buf.String()
}

// TestImportedCostFromMeta (issue 34, findings 2 and 3): where WordPress's
// route names each event's meta (the edit context), the cost comes over
// as written (decimal commas, the range's hyphen) with the event's own
// currency symbol, code and position, and reads here as the source showed
// it; a password-protected event the lists show without a cost gets its
// cost with the site currency the source showed with the others; a cost
// of 0, which the source shows as nothing, stays nothing.
func TestImportedCostFromMeta(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ev := func(id int64, cost, symbol, position string) map[string]any {
		r := replay.Event(id, fmt.Sprintf("Priced %d", id))
		r["cost"] = cost
		r["cost_details"] = map[string]any{"currency_symbol": symbol, "currency_code": "", "currency_position": position, "values": []string{}}
		return r
	}
	meta := func(cost, symbol, code, position string) map[string]any {
		return map[string]any{"_EventCost": cost, "_EventCurrencySymbol": symbol, "_EventCurrencyCode": code, "_EventCurrencyPosition": position}
	}
	site := &replay.Site{
		Events: []map[string]any{
			ev(901, "$12,50", "", ""),
			ev(902, "5€ – 7€", "€", "postfix"),
			ev(903, "", "", ""), // protected: the lists show no cost
			ev(904, "", "", ""),
			ev(905, "$5 – $15", "", ""),
			ev(906, "<b>7", "<b>", "prefix"),
		},
		Protected: map[int64]string{903: "pw"},
		Meta: map[int64]map[string]any{
			901: meta("12,50", "", "", ""),
			902: meta("5 - 7", "€", "eur", "suffix"),
			903: meta("20", "", "", ""),
			904: meta("0", "", "", ""),
			905: {"_EventCost": []any{"5 - 15"}},
			906: meta("7", "<b>", "", ""), // markup is no symbol
		},
	}
	src := replay.NewSite(t, site)
	rep, err := wpimport.Run(t.Context(), e.store, wpimport.Options{Source: src.Root(), User: "fx-admin", AppPassword: "abcd EFGH 1234 ijkl MNOP 5678",
		Language: "en", Rate: -1, RetryBase: time.Millisecond})
	if err != nil || rep.Failed() {
		t.Fatalf("import: %v, failed %v", err, rep != nil && rep.Failed())
	}
	for _, tc := range []struct {
		id         int64
		cost, code string
		stored     string
	}{
		{901, "$12,50", "", "12,50"},
		{902, "5€ – 7€", "EUR", "5 - 7"},
		{903, "$20", "", "20"},
		{904, "", "", ""},
		{905, "$5 – $15", "", "5 - 15"},
		{906, "$7", "", "7"},
	} {
		r := e.must(200, "GET", fmt.Sprintf("events/%d?context=edit", tc.id), "admin", nil)
		if got := r.str("cost"); got != tc.cost {
			t.Errorf("event %d: cost %q, want %q", tc.id, got, tc.cost)
		}
		if got := r.str("cost_details.currency_code"); got != tc.code {
			t.Errorf("event %d: currency_code %q, want %q", tc.id, got, tc.code)
		}
		p, err := e.store.GetRecord(t.Context(), tc.id)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(p.Event.Cost, "|"); got != tc.stored {
			t.Errorf("event %d: stored cost %q, want %q (as written)", tc.id, got, tc.stored)
		}
	}
}
