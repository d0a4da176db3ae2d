package sources_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/calendar/eventcal/app/sources"
	"github.com/calendar/eventcal/app/sources/fetch"
	"github.com/calendar/eventcal/app/sources/tec"
	"github.com/calendar/eventcal/app/wpimport/replay"
	"github.com/calendar/eventcal/repository"
)

// feedServer serves one body at a time, with an ETag when etag is set
// (answering 304 to it), and counts what it answered.
type feedServer struct {
	mu          sync.Mutex
	status      int
	contentType string
	body        string
	etag        string
	requests    int
	notModified int
}

func (f *feedServer) serve(status int, contentType, body, etag string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.status, f.contentType, f.body, f.etag = status, contentType, body, etag
}

func (f *feedServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests++
	if f.etag != "" {
		w.Header().Set("ETag", f.etag)
		if r.Header.Get("If-None-Match") == f.etag {
			f.notModified++
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	w.Header().Set("Content-Type", f.contentType)
	w.WriteHeader(f.status)
	fmt.Fprint(w, f.body)
}

// counts returns the requests and 304 answers so far.
func (f *feedServer) counts() (int, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests, f.notModified
}

// withServer points the env's source at a local feed server and runs it
// with the service's reader (NewReader over a fetcher that may reach the
// local server).
func withServer(t *testing.T, e *env, format string) *feedServer {
	t.Helper()
	fs := &feedServer{status: 200, contentType: "text/calendar"}
	srv := httptest.NewServer(fs)
	t.Cleanup(srv.Close)
	if _, err := e.store.UpdateSource(t.Context(), e.src.ID, func(s *repository.Source) error {
		s.URL, s.Format = srv.URL+"/calendar.ics", format
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	reader := sources.NewReader(sources.ReaderOptions{Fetcher: fetch.New(fetch.Options{AllowPrivate: true, Timeout: 30 * time.Second}), MaxEvents: 100})
	e.runner.Close()
	e.runner = sources.NewRunner(sources.RunnerDeps{Store: e.store, Calendar: e.cal, Reader: reader, Config: e.cfg,
		Logger: slog.New(slog.DiscardHandler), Now: func() time.Time { return now }, WritesPerSecond: -1})
	t.Cleanup(e.runner.Close)
	return fs
}

// ics wraps VEVENT lines into a calendar, CRLF-terminated.
func ics(events ...string) string {
	lines := []string{"BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//test//EN"}
	for _, ev := range events {
		lines = append(lines, "BEGIN:VEVENT", strings.TrimSpace(ev), "END:VEVENT")
	}
	lines = append(lines, "END:VCALENDAR")
	return strings.ReplaceAll(strings.Join(lines, "\n"), "\n", "\r\n") + "\r\n"
}

const (
	concert = "UID:concert@test\nDTSTAMP:20260501T000000Z\nSUMMARY:Concert\nDTSTART;TZID=Europe/Amsterdam:20260701T200000\n" +
		"DTEND;TZID=Europe/Amsterdam:20260701T220000\nLOCATION:Hall\\, Main St 1\\, Utrecht\nCATEGORIES:Music\nDESCRIPTION:Bring <friends> & family"
	market = "UID:market@test\nDTSTAMP:20260501T000000Z\nSUMMARY:Market\nDTSTART;VALUE=DATE:20260704\nDTEND;VALUE=DATE:20260706"
)

// TestReadFeeds: feeds served by a local server, read by the service's
// reader: created, then unchanged by a 304 (ETag) or by an equal body
// (no validators), a change between runs updates that event, and
// failing reads fail the run and change nothing.
func TestReadFeeds(t *testing.T) {
	t.Parallel()
	t.Run("etag", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, nil, nil)
		fs := withServer(t, e, repository.SourceAuto)
		fs.serve(200, "text/calendar; charset=utf-8", ics(concert, market), `"v1"`)
		wantRun(t, "first", e.run(), repository.RunSucceeded, counts{created: 2})
		c := e.get("concert@test")
		if c.Event.StartLocal != "2026-07-01 20:00:00" || c.Event.Timezone != "Europe/Amsterdam" || c.Content["en"] != "Bring &lt;friends&gt; &amp; family" {
			t.Errorf("concert: %s %s %q", c.Event.StartLocal, c.Event.Timezone, c.Content["en"])
		}
		if v := record(t, e, c.Event.Venues[0]); v.Title["en"] != "Hall" || v.Venue.Address != "Main St 1, Utrecht" && v.Venue.Address != "Main St 1" {
			t.Errorf("venue %q %+v", v.Title["en"], v.Venue)
		}
		if m := e.get("market@test").Event; !m.AllDay || m.StartLocal != "2026-07-04 00:00:00" || m.EndLocal != "2026-07-05 23:59:59" {
			t.Errorf("market: %+v", m)
		}
		src, _ := e.store.GetSource(t.Context(), e.src.ID)
		if src.ETag != `"v1"` || src.DetectedFormat != repository.SourceICS || src.ContentHash == "" {
			t.Errorf("source after the run: etag %q format %q hash %q", src.ETag, src.DetectedFormat, src.ContentHash)
		}
		before := e.store.writes.Load()
		wantRun(t, "304", e.run(), repository.RunSucceeded, counts{unchanged: 2})
		if _, n304 := fs.counts(); n304 != 1 || e.store.writes.Load() != before {
			t.Errorf("%d answers 304, %d writes; want 1 and none", n304, e.store.writes.Load()-before)
		}
		fs.serve(200, "text/calendar", ics(strings.Replace(concert, "SUMMARY:Concert", "SUMMARY:Concert (sold out)", 1), market), `"v2"`)
		wantRun(t, "changed", e.run(), repository.RunSucceeded, counts{updated: 1, unchanged: 1})
		if got := e.get("concert@test").Title["en"]; got != "Concert (sold out)" {
			t.Errorf("title %q", got)
		}
		fs.serve(200, "text/calendar", ics(market), `"v3"`)
		wantRun(t, "concert gone", e.run(), repository.RunSucceeded, counts{unchanged: 1, removed: 1})
	})
	t.Run("same body", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, nil, nil)
		fs := withServer(t, e, repository.SourceICS)
		fs.serve(200, "text/plain", ics(concert), "")
		wantRun(t, "first", e.run(), repository.RunSucceeded, counts{created: 1})
		before := e.store.writes.Load()
		wantRun(t, "same body", e.run(), repository.RunSucceeded, counts{unchanged: 1})
		if e.store.writes.Load() != before {
			t.Errorf("the same body wrote")
		}
	})
	for _, tc := range []struct {
		name, format   string
		status         int
		contentType    string
		body, errorHas string
	}{
		{"http 500", repository.SourceAuto, 500, "text/plain", "oops", "HTTP 500"},
		{"html", repository.SourceAuto, 200, "text/html; charset=utf-8", "<!doctype html><title>Events</title>", "not a calendar (text/html)"},
		{"html as ics", repository.SourceICS, 200, "text/html", "<!doctype html><title>Events</title>", "not a calendar"},
		{"truncated", repository.SourceAuto, 200, "text/calendar", strings.TrimSuffix(ics(concert), "END:VCALENDAR\r\n"), "truncated"},
		{"too many events", repository.SourceAuto, 200, "text/calendar", ics(manyEvents(101)...), "too many events"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, nil, nil)
			fs := withServer(t, e, tc.format)
			fs.serve(200, "text/calendar", ics(market), "")
			e.run()
			before := dump(t, e)
			fs.serve(tc.status, tc.contentType, tc.body, "")
			run := e.run()
			wantRun(t, tc.name, run, repository.RunFailed, counts{})
			if !strings.Contains(run.Error, tc.errorHas) {
				t.Errorf("error %q, want it to say %q", run.Error, tc.errorHas)
			}
			if after := dump(t, e); after != before {
				t.Errorf("a failed read changed the store")
			}
		})
	}
}

// manyEvents returns n distinct events.
func manyEvents(n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("UID:e%d@test\nDTSTAMP:20260501T000000Z\nSUMMARY:E%d\nDTSTART:20260701T%02d0000Z", i, i, i%24))
	}
	return out
}

// TestProducerFeeds: the feeds of real producers (the ics package's
// fixtures: Google Calendar, Outlook with Windows zone names, Meetup, a
// series with changed instances across a daylight-saving change) import
// whole, and a second run changes nothing.
func TestProducerFeeds(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"google", "outlook", "meetup", "dst"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			body, err := os.ReadFile(filepath.Join("ics", "testdata", name+".ics"))
			if err != nil {
				t.Fatal(err)
			}
			e := newEnv(t, nil, nil)
			fs := withServer(t, e, repository.SourceAuto)
			fs.serve(200, "text/calendar", string(body), "")
			run := e.run()
			if run.Status != repository.RunSucceeded || run.Created == 0 || run.Failed != 0 {
				t.Errorf("first run: %s %+v %q %v", run.Status, countsOf(run), run.Error, run.Problems)
			}
			wantRun(t, "again", e.run(), repository.RunSucceeded, counts{unchanged: run.Created})
			if name == "dst" {
				checkChoir(t, e)
			}
		})
	}
}

// checkChoir checks the series of dst.ics: weekly on Wednesdays at 19:00
// in Amsterdam from March to November, one instance cancelled, one moved
// before the March change, one renamed and one moved (to another venue)
// after the October change.
func checkChoir(t *testing.T, e *env) {
	t.Helper()
	p := e.get("choir-weekly-2026@example.org")
	ams := zone(t, "Europe/Amsterdam")
	utc := func(m time.Month, d, h, min int) time.Time { return time.Date(2026, m, d, h, min, 0, 0, time.UTC) }
	for _, tc := range []struct {
		key        string
		start, end time.Time
		title      string
	}{
		{"20260311T190000", utc(3, 11, 18, 0), utc(3, 11, 20, 0), ""},                                       // CET
		{"20260401T190000", utc(4, 1, 18, 0), utc(4, 1, 20, 0), ""},                                         // moved to 20:00 CEST
		{"20261021T190000", utc(10, 21, 17, 0), utc(10, 21, 19, 0), "Choir rehearsal: concert run-through"}, // CEST
		{"20261028T190000", utc(10, 29, 18, 30), utc(10, 29, 20, 30), ""},                                   // moved to Thursday 19:30 CET
	} {
		occ, err := e.cal.FindOccurrence(p, ams, tc.key)
		if err != nil {
			t.Errorf("occurrence %s: %v", tc.key, err)
			continue
		}
		if !occ.Start.Equal(tc.start) || !occ.End.Equal(tc.end) {
			t.Errorf("occurrence %s: %s to %s, want %s to %s", tc.key, occ.Start.UTC(), occ.End.UTC(), tc.start, tc.end)
		}
		if ov := p.Event.Override(tc.key); tc.title != "" && (ov == nil || ov.Title["en"] != tc.title) {
			t.Errorf("occurrence %s: override %+v, want the title %q", tc.key, ov, tc.title)
		}
	}
	if ov := p.Event.Override("20260325T190000"); ov == nil || ov.EventStatus == nil || *ov.EventStatus != repository.EventCanceled {
		t.Errorf("the cancelled instance of 25 March: %+v", ov)
	}
	ov := p.Event.Override("20261028T190000")
	if ov == nil || ov.Venues == nil || len(*ov.Venues) != 1 {
		t.Fatalf("the moved instance of 28 October: %+v, want a venue of its own", ov)
	}
	if v := record(t, e, (*ov.Venues)[0]); v.Title["en"] != "Westerkerk" {
		t.Errorf("the moved instance's venue: %q", v.Title["en"])
	}
}

// TestReadTECSite: an "auto" source at a site running The Events
// Calendar (its REST root) is found to be one and read through its REST
// API: its events created with their categories and tags by name; the
// next runs read it as "tec" directly, find every event unchanged (the
// read's content hash is the last run's) and update the one the site
// changed.
func TestReadTECSite(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, nil)
	jazz, free := replay.Term(7, "Jazz", "jazz"), replay.Term(8, "Free entry", "free-entry")
	a, b := replay.Event(101, "Opening night"), replay.Event(102, "Matinee")
	a["categories"], a["tags"] = []any{jazz}, []any{free}
	site := &replay.Site{Events: []map[string]any{a, b}, Categories: []map[string]any{jazz}, Tags: []map[string]any{free}}
	srv := replay.NewSite(t, site)
	if _, err := e.store.UpdateSource(t.Context(), e.src.ID, func(s *repository.Source) error {
		s.URL, s.Format = srv.URL+"/wp-json/", repository.SourceAuto
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	reader := sources.NewReader(sources.ReaderOptions{Fetcher: fetch.New(fetch.Options{AllowPrivate: true, Timeout: 30 * time.Second}),
		TEC: func(o *tec.Options) { o.Rate, o.RetryBase = -1, time.Millisecond }})
	e.runner.Close()
	e.runner = sources.NewRunner(sources.RunnerDeps{Store: e.store, Calendar: e.cal, Reader: reader, Config: e.cfg,
		Logger: slog.New(slog.DiscardHandler), Now: func() time.Time { return now }, WritesPerSecond: -1})
	t.Cleanup(e.runner.Close)

	wantRun(t, "first", e.run(), repository.RunSucceeded, counts{created: 2})
	p := e.get("101")
	if p.Title["en"] != "Opening night" || p.Event.StartLocal != "2027-05-01 19:00:00" || p.Event.Timezone != "UTC" {
		t.Errorf("event 101: %q %s %q", p.Title["en"], p.Event.StartLocal, p.Event.Timezone)
	}
	if got := strings.Join(names(t, e, p.Event.Categories), ","); got != "Jazz" {
		t.Errorf("categories %q", got)
	}
	if got := strings.Join(names(t, e, p.Event.Tags), ","); got != "Free entry" {
		t.Errorf("tags %q", got)
	}
	src, _ := e.store.GetSource(t.Context(), e.src.ID)
	if src.DetectedFormat != repository.SourceTEC || src.ContentHash == "" {
		t.Errorf("detected format %q, content hash %q", src.DetectedFormat, src.ContentHash)
	}
	before := e.store.writes.Load()
	wantRun(t, "second", e.run(), repository.RunSucceeded, counts{unchanged: 2})
	if e.store.writes.Load() != before {
		t.Errorf("an unchanged site wrote")
	}
	b["title"] = "Matinee (extra show)"
	wantRun(t, "changed", e.run(), repository.RunSucceeded, counts{updated: 1, unchanged: 1})
	if got := e.get("102").Title["en"]; got != "Matinee (extra show)" {
		t.Errorf("title %q", got)
	}
}
