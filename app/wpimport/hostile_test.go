package wpimport_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/calendar/eventcal/app/wpimport"
	"github.com/calendar/eventcal/app/wpimport/replay"
	"github.com/calendar/eventcal/repository"
)

// siteOptions are the import options for a replay.Site: no credentials
// unless given, no rate limit, short backoffs.
func siteOptions(src *replay.SiteServer) wpimport.Options {
	return wpimport.Options{Source: src.Root(), Language: "en", Rate: -1, Retries: -1, RetryBase: time.Millisecond}
}

// TestHostileSlugs (issue 30, finding 8): a slug WordPress could not have
// made is stored as the API normalises a slug it is sent (or, when
// nothing is left, made from the title), and the summary lists it; the
// slugs WordPress makes, non-Latin ones included, are kept.
func TestHostileSlugs(t *testing.T) {
	for _, tc := range []struct {
		name, slug, want string
		listed           bool
	}{
		{"path traversal", "../../admin", "admin", true},
		{"slashes", "a/b/c", "a-b-c", true},
		{"dot dot", "..", "fx-title", true},
		{"NUL", "ab\x00cd", "abcd", true},
		{"percent-encoded NUL and slash", "x%00y%2Fz", "xy-z", true},
		{"upper case and space", "Hello World", "hello-world", true},
		{"bidi override", "abc\u202edef", "abcdef", true},
		{"CR LF", "a\r\nb", "a-b", true},
		{"WordPress slug", "fx-jazz_night-2", "fx-jazz_night-2", false},
		{"non-Latin WordPress slug", "fx-%e6%9d%b1%e4%ba%ac-hall", "fx-東京-hall", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := replay.Event(501, "FX Title")
			ev["slug"] = tc.slug
			venue := replay.Venue(502, "FX Venue")
			venue["slug"] = tc.slug
			tag := replay.Term(503, "FX Tag", tc.slug)
			src := replay.NewSite(t, &replay.Site{Events: []map[string]any{ev}, Venues: []map[string]any{venue}, Tags: []map[string]any{tag}})
			s := openSQLite(t)
			rep := runImport(t, s, siteOptions(src))
			var out bytes.Buffer
			rep.Print(&out)
			want := map[int64]string{501: tc.want, 502: tc.want, 503: tc.want}
			if tc.want == "fx-title" {
				want[502], want[503] = "fx-venue", "fx-tag"
			}
			for _, id := range []int64{501, 502} {
				p, err := s.GetRecord(t.Context(), id)
				if err != nil {
					t.Fatalf("post %d: %v", id, err)
				}
				if p.Slug["en"] != want[id] {
					t.Errorf("post %d slug %q, want %q", id, p.Slug["en"], want[id])
				}
			}
			term, err := s.GetLabel(t.Context(), 503)
			if err != nil || term.Slug["en"] != want[503] {
				t.Errorf("tag slug %v (%v), want %q", term, err, want[503])
			}
			listed := 0
			for _, c := range rep.Sanitized {
				if c.Field == "slug" {
					listed++
				}
			}
			if tc.listed && (listed != 3 || !strings.Contains(out.String(), "sanitized: event 501: slug")) {
				t.Errorf("%d sanitised slugs listed, want 3:\n%s", listed, out.String())
			}
			if !tc.listed && listed != 0 {
				t.Errorf("a WordPress slug listed as sanitised: %+v", rep.Sanitized)
			}
			if strings.ContainsAny(out.String(), "\x00\r\u202e") {
				t.Errorf("the summary prints a control character: %q", out.String())
			}
		})
	}
}

// TestSourceErrorTextRedacted (issue 30, finding 10): a source whose error
// text echoes the Authorization header, with ANSI escapes, line breaks
// and a bidi override, is shown without the credentials in any form,
// with those characters escaped, and bounded.
func TestSourceErrorTextRedacted(t *testing.T) {
	const user, password = "fx-admin", "abcd EFGH 1234 ijkl MNOP 5678"
	src := replay.NewSite(t, &replay.Site{EchoAuth: true})
	var logs bytes.Buffer
	opts := siteOptions(src)
	opts.User, opts.AppPassword = user, password
	opts.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	opts.Retries = 2
	rep, err := wpimport.Run(t.Context(), openSQLite(t), opts)
	if err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("error %v, want the 401", err)
	}
	var out bytes.Buffer
	rep.Print(&out)
	all := err.Error() + "\n" + out.String() + logs.String()
	pair := user + ":" + password
	for _, secret := range []string{password, strings.ReplaceAll(password, " ", ""), pair, base64.StdEncoding.EncodeToString([]byte(pair))} {
		if strings.Contains(all, secret) {
			t.Errorf("%q appears in the output:\n%s", secret, all)
		}
	}
	if strings.ContainsAny(all, "\x1b\r\u202e") || strings.Contains(err.Error(), "\n") {
		t.Errorf("a control character reaches the output: %q", all)
	}
	if !strings.Contains(err.Error(), `\x1b[2J`) || !strings.Contains(err.Error(), "[redacted]") {
		t.Errorf("error %q: want the escape shown escaped and the credentials replaced", err)
	}
	if len(err.Error()) > 600 {
		t.Errorf("error text of %d bytes, want it bounded", len(err.Error()))
	}
}

// TestCaps (issue 30, finding 10): an endless source stops at a cap and the
// run says which, writing nothing: pages of a TEC list, pages of
// WordPress's own route, the run's requests, the categories and tags to
// create, the bytes read and the bytes held. The caps are small here; the
// work done is counted, never timed.
func TestCaps(t *testing.T) {
	for _, tc := range []struct {
		name     string
		site     *replay.Site
		caps     wpimport.Caps
		cap      string
		requests int // the most requests the run may send
	}{
		// The site's REST index and one page of each list before the
		// endless one: 1 + ... requests.
		{"endless event list", &replay.Site{Endless: "events"}, wpimport.Caps{Pages: 7}, wpimport.CapPages, 1 + 4 + 7},
		{"endless category list", &replay.Site{Endless: "categories"}, wpimport.Caps{Pages: 5}, wpimport.CapPages, 1 + 5},
		{"endless wp/v2 route", &replay.Site{Endless: "wp"}, wpimport.Caps{Pages: 6}, wpimport.CapPages, 1 + 5 + 6},
		{"requests", &replay.Site{Endless: "tags"}, wpimport.Caps{Requests: 9}, wpimport.CapRequests, 9},
		{"new terms", &replay.Site{Tags: terms(130)}, wpimport.Caps{NewTerms: 120}, wpimport.CapNewTerms, 1 + 5 + 2 + 1},
		{"bytes read", &replay.Site{Endless: "venues"}, wpimport.Caps{Bytes: 64 << 10, HeldBytes: 1 << 30}, wpimport.CapBytes, 50},
		{"bytes held", &replay.Site{Endless: "events"}, wpimport.Caps{HeldBytes: 256 << 10}, wpimport.CapHeldBytes, 50},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := replay.NewSite(t, tc.site)
			s := openSQLite(t)
			opts := siteOptions(src)
			opts.Caps = tc.caps
			rep, err := wpimport.Run(t.Context(), s, opts)
			var ce *wpimport.CapError
			if !errors.As(err, &ce) || ce.Cap != tc.cap {
				t.Fatalf("error %v, want the %s cap", err, tc.cap)
			}
			if !strings.Contains(err.Error(), "--max-"+tc.cap) || !strings.Contains(err.Error(), "nothing was written") {
				t.Errorf("error %q does not name the cap's flag", err)
			}
			if rep == nil || rep.Cap == nil || rep.Cap.Cap != tc.cap {
				t.Errorf("report cap = %+v", rep)
			}
			if n := src.Requests(); n > tc.requests {
				t.Errorf("%d requests, want at most %d", n, tc.requests)
			}
			if got := dumpStore(t, s); got != "" {
				t.Errorf("a run stopped by a cap wrote:\n%.500s", got)
			}
			var out bytes.Buffer
			rep.Print(&out)
			if !strings.Contains(out.String(), "stopped: ") {
				t.Errorf("the summary does not say the run stopped:\n%s", out.String())
			}
		})
	}
}

// terms returns n tags.
func terms(n int) []map[string]any {
	out := make([]map[string]any, n)
	for i := range out {
		out[i] = replay.Term(int64(100+i), fmt.Sprintf("Tag %d", i), "")
	}
	return out
}

// TestHeldBytesBelowBytesRead (issue 30, finding 10): the source's bodies
// are not held: a source whose records carry far more than is stored (a
// long field the import does not keep) reads many times its held-bytes
// cap and imports in full, while the run's own count of what it holds
// stays under the cap.
func TestHeldBytesBelowBytesRead(t *testing.T) {
	padding := strings.Repeat("x", 20<<10)
	var events []map[string]any
	for i := range 300 {
		ev := replay.Event(int64(1000+i), fmt.Sprintf("Event %d", i))
		ev["custom_fields"] = map[string]any{"padding": padding} // not stored
		events = append(events, ev)
	}
	src := replay.NewSite(t, &replay.Site{Events: events})
	s := openSQLite(t)
	opts := siteOptions(src)
	opts.Caps = wpimport.Caps{HeldBytes: 1 << 20}
	rep := runImport(t, s, opts)
	if kr := rep.Kind(wpimport.KindEvent); kr.Created != 300 {
		t.Fatalf("events %+v, want 300 created", kr)
	}
	if rep.BytesRead < 5<<20 {
		t.Fatalf("read %d bytes; the test wants more than 5 MiB", rep.BytesRead)
	}
	if rep.HeldPeak <= 0 || rep.HeldPeak > 1<<20 {
		t.Errorf("held at most %d bytes, want within the 1 MiB cap (read %d)", rep.HeldPeak, rep.BytesRead)
	}
	if p, err := s.GetRecord(t.Context(), 1299); err != nil || p.Title["en"] != "Event 299" {
		t.Errorf("last event %+v, %v", p, err)
	}
}

// TestRefusedRecordLeavesNoImage (issue 33, finding 1): the image of an
// event the import refuses (here: its end is before its start) is not
// imported, as the API writes nothing for a refused write; the image of
// an event it imports is.
func TestRefusedRecordLeavesNoImage(t *testing.T) {
	bad := replay.Event(601, "FX Backwards")
	bad["utc_start_date"], bad["utc_end_date"] = "2027-05-02 19:00:00", "2027-05-01 19:00:00"
	bad["start_date"], bad["end_date"] = "2027-05-02 19:00:00", "2027-05-01 19:00:00"
	bad["image"] = map[string]any{"id": 900, "url": "http://127.0.0.1:8088/wp-content/uploads/refused.png", "extension": "png"}
	good := replay.Event(602, "FX Fine")
	good["image"] = map[string]any{"id": 901, "url": "http://127.0.0.1:8088/wp-content/uploads/kept.png", "extension": "png"}
	src := replay.NewSite(t, &replay.Site{Events: []map[string]any{bad, good}})
	s := openSQLite(t)
	rep := runImport(t, s, siteOptions(src))
	refused := false
	for _, f := range rep.Kind(wpimport.KindEvent).Failed {
		refused = refused || f.ID == 601
	}
	if !refused {
		t.Fatalf("event 601 was not refused: %+v", rep.Kind(wpimport.KindEvent))
	}
	if _, err := s.GetRecord(t.Context(), 900); !errors.Is(err, repository.ErrNotFound) {
		t.Errorf("the refused event's image 900: %v, want not found", err)
	}
	if p, err := s.GetRecord(t.Context(), 602); err != nil || p.ImageID != 901 {
		t.Fatalf("event 602: %+v, %v", p, err)
	}
	if _, err := s.GetRecord(t.Context(), 901); err != nil {
		t.Errorf("the imported event's image 901: %v", err)
	}
}

// TestCalendarChecksImportedEvents: the calendar's own rules apply to
// what the importer maps (calendar.Service.CheckImported): an event whose
// wall-clock end is before its start is refused with the field at fault,
// though its UTC dates are in order, and nothing of it is written, its
// image included (the check runs when the event is mapped, before any
// write).
func TestCalendarChecksImportedEvents(t *testing.T) {
	bad := replay.Event(611, "FX Local Backwards")
	bad["start_date"], bad["end_date"] = "2027-05-02 19:00:00", "2027-05-01 19:00:00"
	bad["image"] = map[string]any{"id": 910, "url": "http://127.0.0.1:8088/wp-content/uploads/local.png", "extension": "png"}
	good := replay.Event(612, "FX Fine")
	src := replay.NewSite(t, &replay.Site{Events: []map[string]any{bad, good}})
	s := openSQLite(t)
	rep := runImport(t, s, siteOptions(src))
	var got *wpimport.Failure
	for i, f := range rep.Kind(wpimport.KindEvent).Failed {
		if f.ID == 611 {
			got = &rep.Kind(wpimport.KindEvent).Failed[i]
		}
	}
	if got == nil || got.Field != "end_date" || !strings.Contains(got.Reason, "must not be before the start date") {
		t.Fatalf("event 611: failure %+v, want end_date refused (%+v)", got, rep.Kind(wpimport.KindEvent))
	}
	if _, err := s.GetRecord(t.Context(), 611); !errors.Is(err, repository.ErrNotFound) {
		t.Errorf("the refused event 611: %v, want not found", err)
	}
	if _, err := s.GetRecord(t.Context(), 910); !errors.Is(err, repository.ErrNotFound) {
		t.Errorf("the refused event's image 910: %v, want not found", err)
	}
	if _, err := s.GetRecord(t.Context(), 612); err != nil {
		t.Errorf("event 612: %v", err)
	}
}
