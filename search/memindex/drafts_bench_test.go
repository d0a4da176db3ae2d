package memindex

import (
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/calendar/eventcal/search"
)

// hugeDescription returns about n characters of random words of 3 to 12
// letters, as the benchmark's large drafts have (nearly every word new to
// the index).
func hugeDescription(r *rand.Rand, n int) string {
	var b strings.Builder
	for b.Len() < n-13 {
		for range 3 + r.IntN(10) {
			b.WriteByte(byte('a' + r.IntN(26)))
		}
		b.WriteByte(' ')
	}
	return b.String()
}

// hugeDraft returns a draft of event id (occurrence occ) with description
// text in the service's seven languages, untranslated.
func hugeDraft(id int64, occ, text string) search.EventDocument {
	d := search.EventDocument{ID: id, Occurrence: occ, Status: "draft", Start: 1_800_000_000 + id, End: 1_800_003_600 + id,
		Text: map[string]search.Text{}, CategoryIDs: []int64{3}}
	for _, l := range []string{"nl", "en", "fr", "de", "it", "pl", "es"} {
		d.Text[l] = search.Text{Title: "Huge draft", Description: text}
	}
	return d
}

// draftRow is one reader row of BenchmarkReadsWhileDraftsArrive: its
// query, drawn anew for each search from the reader's random source.
type draftRow struct {
	name string
	q    func(r *rand.Rand) search.EventQuery
}

// draftRows returns the service benchmark's large-drafts rows over the
// window from now (bench/drafts.go): the default list, search= a known
// word, search= ten random letters, and the typeahead "jazz c".
func draftRows(now int64) []draftRow {
	fixed := func(q search.EventQuery) func(*rand.Rand) search.EventQuery {
		return func(*rand.Rand) search.EventQuery { return q }
	}
	w := func(f func(q *search.EventQuery)) search.EventQuery { return with(now, f) }
	return []draftRow{
		{"default", fixed(w(func(*search.EventQuery) {}))},
		{"search word", func(r *rand.Rand) search.EventQuery {
			return w(func(q *search.EventQuery) { q.Query = benchWords[r.IntN(len(benchWords))] })
		}},
		{"search random", func(r *rand.Rand) search.EventQuery {
			b := make([]byte, 10)
			for i := range b {
				b[i] = byte('a' + r.IntN(26))
			}
			return w(func(q *search.EventQuery) { q.Query = string(b) })
		}},
		{"typeahead jazz c", fixed(w(func(q *search.EventQuery) { q.Query = "jazz c" }))},
	}
}

// BenchmarkReadsWhileDraftsArrive is the service benchmark's large-drafts
// rows on the engine alone: four readers run each row of draftRows
// (MEMINDEX_DRAFT_ROWS: a comma-separated subset of their names) over
// MEMINDEX_DRAFT_EVENTS events (default 200,000; with
// SERIES_BENCH_SERIES of them weekly series of 105 occurrences) for 3 s
// quiet, then 3 s while a writer indexes a draft with a
// 200,000-character description every MEMINDEX_DRAFT_INTERVAL (default
// 500ms), and reports the readers' p50 and p99 in ms, quiet and with
// drafts, within the same run (on a shared machine only the ratio
// means much), and the most words linked and match cache entries
// checked in one hold of the lock while drafts arrive (holds): go test ./search/memindex -run XXX -bench
// ReadsWhileDraftsArrive -benchtime 1x.
func BenchmarkReadsWhileDraftsArrive(b *testing.B) {
	n, every, series := 200000, 500*time.Millisecond, 0
	if v, err := strconv.Atoi(os.Getenv("MEMINDEX_DRAFT_EVENTS")); err == nil {
		n = v
	}
	if v, err := time.ParseDuration(os.Getenv("MEMINDEX_DRAFT_INTERVAL")); err == nil {
		every = v
	}
	if v, err := strconv.Atoi(os.Getenv("SERIES_BENCH_SERIES")); err == nil {
		series = v
	}
	x, now := benchIndexSeries(n, series)
	rows := draftRows(now)
	if names := os.Getenv("MEMINDEX_DRAFT_ROWS"); names != "" {
		rows = slices.DeleteFunc(rows, func(r draftRow) bool { return !slices.Contains(strings.Split(names, ","), r.name) })
	}
	r := rand.New(rand.NewPCG(37, 2))
	id := int64(1 << 40)
	measure := func(row draftRow) []time.Duration {
		var mu sync.Mutex
		var lat []time.Duration
		var wg sync.WaitGroup
		end := time.Now().Add(3 * time.Second)
		for k := range 4 {
			wg.Go(func() {
				qr := rand.New(rand.NewPCG(uint64(k), 9))
				var mine []time.Duration
				for time.Now().Before(end) {
					q := row.q(qr)
					t0 := time.Now()
					if _, err := x.Search(b.Context(), q); err != nil {
						b.Error(err)
						return
					}
					mine = append(mine, time.Since(t0))
				}
				mu.Lock()
				lat = append(lat, mine...)
				mu.Unlock()
			})
		}
		wg.Wait()
		slices.Sort(lat)
		return lat
	}
	pct := func(lat []time.Duration, p int) float64 {
		if len(lat) == 0 {
			return 0
		}
		return float64(lat[min(len(lat)-1, len(lat)*p/100)].Microseconds()) / 1000
	}
	for b.Loop() {
		for _, row := range rows {
			quiet := measure(row)
			x.mu.Lock()
			x.maxHeld, x.maxTouched = 0, 0
			x.mu.Unlock()
			stop := make(chan struct{})
			var posted atomic.Int64
			var wg sync.WaitGroup
			wg.Go(func() {
				tick := time.NewTicker(every)
				defer tick.Stop()
				for ; ; id++ {
					// New random words each time, as the service's drafts.
					x.Apply([]search.EventDocument{hugeDraft(id, "", hugeDescription(r, 199000))})
					posted.Add(1)
					select {
					case <-stop:
						return
					case <-tick.C:
					}
				}
			})
			drafts := measure(row)
			close(stop)
			wg.Wait()
			b.Logf("%s: p50 %.2f / %.2f ms, p99 %.2f / %.2f ms (quiet / with drafts), %d / %d queries, %d drafts; in one hold at most %d words linked, %d cache entries checked",
				row.name, pct(quiet, 50), pct(drafts, 50), pct(quiet, 99), pct(drafts, 99), len(quiet), len(drafts), posted.Load(), x.maxHeld, x.maxTouched)
			name := strings.ReplaceAll(row.name, " ", "-")
			b.ReportMetric(pct(drafts, 50)/pct(quiet, 50), name+"-p50-drafts/quiet")
			b.ReportMetric(pct(drafts, 99)/pct(quiet, 99), name+"-p99-drafts/quiet")
		}
	}
}

// BenchmarkApplyDraftWithCachedQueries is the writer's side of
// BenchmarkReadsWhileDraftsArrive: the CPU of indexing one draft with a
// 200,000-character description of new words over 20,000 events while
// the match cache holds the entries of anonymous typeahead queries
// (prefixes and typos), made again before each draft: go test
// ./search/memindex -run XXX -bench ApplyDraftWithCachedQueries -cpu 1.
func BenchmarkApplyDraftWithCachedQueries(b *testing.B) {
	x, now := benchIndex(20000)
	r := rand.New(rand.NewPCG(37, 4))
	var qs []search.EventQuery
	for _, w := range benchWords {
		for _, typed := range []string{w[:1], w[:min(3, len(w))], w + " c", w + "x "} {
			qs = append(qs, with(now, func(q *search.EventQuery) { q.Query = typed }))
		}
	}
	id := int64(1 << 40)
	for b.Loop() {
		b.StopTimer()
		for _, q := range qs {
			if _, err := x.Search(b.Context(), q); err != nil {
				b.Fatal(err)
			}
		}
		d := hugeDraft(id, "", hugeDescription(r, 199000))
		id++
		b.StartTimer()
		x.Apply([]search.EventDocument{d})
	}
}
