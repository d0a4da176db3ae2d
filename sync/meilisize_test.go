package sync

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/calendar/eventcal/config/testdeadline"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/search/meili"
	"github.com/calendar/eventcal/search/meili/meilisim"
)

// bodySizes records the size of every document addition a simulated
// Meilisearch server received.
type bodySizes struct {
	mu    gosync.Mutex
	sizes []int64
	over  int // additions refused 413 by the simulator
}

func (b *bodySizes) record(r *http.Request, n int64, status int) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/documents") {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sizes = append(b.sizes, n)
	if status == http.StatusRequestEntityTooLarge {
		b.over++
	}
}

// countingReader counts the bytes of a request body the simulator read
// (the client streams the body: there is no Content-Length).
type countingReader struct {
	r io.ReadCloser
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func (c *countingReader) Close() error { return c.r.Close() }

// statusWriter remembers the status a handler answered with.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

// meiliEngine opens a Meilisearch engine on a simulator refusing bodies
// over payloadLimit, whose document additions are recorded in sizes.
func meiliEngine(t *testing.T, payloadLimit int64, opts meili.Options, sizes *bodySizes) *meili.Engine {
	t.Helper()
	sim := meilisim.New(meilisim.Options{Version: meili.MinVersion, PayloadLimit: payloadLimit, Errorf: t.Errorf})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		body := &countingReader{r: r.Body}
		r.Body = body
		sim.ServeHTTP(sw, r)
		sizes.record(r, body.n, sw.status)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(sim.Close)
	sim.Mu.Lock()
	sim.Emulate = true
	sim.Mu.Unlock()
	go func() {
		// The simulator records every request body; a long test would
		// hold all of them. Only the sizes matter here.
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-t.Context().Done():
				return
			case <-tick.C:
				sim.Mu.Lock()
				sim.Requests = nil
				sim.Mu.Unlock()
			}
		}
	}()
	opts.TaskPollInterval = time.Millisecond
	opts.TaskTimeout = testdeadline.Timeout(t)
	e, err := meili.Open(t.Context(), srv.URL, "", opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { e.Close() })
	if err := e.Init(t.Context()); err != nil {
		t.Fatalf("Init: %v", err)
	}
	return e
}

// TestDailyTwoYearSeriesThreeLanguagesIndexes: a daily series over the
// two-year horizon (731 occurrences) with a long description in three
// languages indexes through the sync worker's own loop (Run) into the
// Meilisearch simulator, and an event written after it is listed once the
// worker reaches it. Every document addition stays within the request
// budget (recorded body sizes), none is refused 413.
//
// Scaled 1/20 so that the shared test machine holds it: a 10,000-character
// description per language (the limit is 200,000), a 1 MiB request budget
// (default 20 MiB) and a 5 MB payload limit (Meilisearch: 100 MB). The
// series is about 22 MB of JSON, four times the payload limit, as the
// full-size one (about 440 MB against 100 MB). Before additions were cut
// by size, the series went in one request of 731 documents, which the
// simulator refused with payload_too_large, and the worker retried it
// forever: the small event was never listed.
func TestDailyTwoYearSeriesThreeLanguagesIndexes(t *testing.T) {
	const (
		payloadLimit = 5_000_000
		budget       = 1 << 20
		descChars    = 10_000
	)
	sizes := &bodySizes{}
	langs := []string{"en", "fr", "de"}
	eng := meiliEngine(t, payloadLimit, meili.Options{Languages: langs, MaxRequestBytes: budget}, sizes)

	s := newStack(t)
	s.worker.Engine = eng
	s.worker.Docs.Languages, s.worker.Docs.DefaultLanguage = langs, "en"
	s.worker.Docs.Now = func() time.Time { return seriesStart }
	s.worker.PollInterval = 20 * time.Millisecond
	s.worker.Log = slog.New(slog.NewTextHandler(tWriter{t}, nil))

	long := func(word string) string {
		return strings.Repeat(word+" ", descChars/(len(word)+1))
	}
	series := s.series(t, "Daily rehearsal", "FREQ=DAILY")
	s.update(t, series, func(p *repository.Post) {
		p.Title = repository.Text{"en": "Daily rehearsal", "fr": "Répétition quotidienne", "de": "Tägliche Probe"}
		p.Content = repository.Text{"en": long("harbour"), "fr": long("lanterne"), "de": long("hafen")}
	})
	if n := s.worker.Docs.DocumentCount(mustGet(t, s, series.ID)); n < 730 {
		t.Fatalf("the series has %d occurrences, want a daily two-year series", n)
	}

	ctx, cancel := context.WithCancel(testdeadline.Context(t))
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.worker.Run(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done })
	s.worker.Notify()

	want := s.worker.Docs.DocumentCount(mustGet(t, s, series.ID))
	deadline := testdeadline.Context(t)
	wait := func(what string, done func() bool) {
		t.Helper()
		for !done() {
			select {
			case <-deadline.Done():
				sizes.mu.Lock()
				defer sizes.mu.Unlock()
				t.Fatalf("%s: never (%d additions sent, %d refused 413)", what, len(sizes.sizes), sizes.over)
			case <-time.After(5 * time.Millisecond):
			}
		}
	}
	count := func() int {
		n, err := eng.CountEvents(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	began := time.Now()
	wait("every occurrence of the series indexed", func() bool { return count() == want })
	t.Logf("the series' %d documents indexed %v after the worker started", want, time.Since(began))

	listed := func(q search.EventQuery) []int64 {
		q.Statuses, q.Limit = []string{repository.StatusPublish}, 10
		res, err := eng.SearchEvents(t.Context(), q)
		if err != nil {
			t.Fatalf("SearchEvents: %v", err)
		}
		return res.IDs
	}
	written := time.Now()
	small := s.post(t, repository.KindEvent, "Quay recital", repository.StatusPublish, baseTime)
	s.worker.Notify()
	wait("the event written after the series listed", func() bool {
		return slices.Contains(listed(search.EventQuery{Lang: "en", Query: "recital"}), small.ID)
	})
	t.Logf("the event written after the series listed %v after its write", time.Since(written))
	if n := count(); n != want+1 {
		t.Errorf("%d documents indexed, want %d (every occurrence and the small event)", n, want+1)
	}
	for _, q := range []search.EventQuery{{Lang: "en", Query: "harbour"}, {Lang: "fr", Query: "lanterne"}, {Lang: "de", Query: "hafen"}} {
		if got := listed(q); !slices.Contains(got, series.ID) {
			t.Errorf("search %q in %s = %v, want the series %d", q.Query, q.Lang, got, series.ID)
		}
	}

	sizes.mu.Lock()
	defer sizes.mu.Unlock()
	if sizes.over > 0 {
		t.Errorf("%d additions refused 413", sizes.over)
	}
	var total int64
	for _, sz := range sizes.sizes {
		total += sz
		if sz > budget {
			t.Errorf("an addition sent %d bytes, over the budget %d", sz, budget)
		}
	}
	if total <= payloadLimit {
		t.Errorf("the additions sent %d bytes in all: not over the payload limit %d, the test proves nothing", total, payloadLimit)
	}
	t.Logf("%d additions, %d bytes in all, largest %d", len(sizes.sizes), total, slices.Max(sizes.sizes))
}

// mustGet reads a post from the test stack's store.
func mustGet(t *testing.T, s *stack, id int64) *repository.Post {
	t.Helper()
	p, err := s.store.GetPost(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }
