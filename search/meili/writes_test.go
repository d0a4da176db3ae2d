package meili

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/calendar/eventcal/config/testdeadline"
	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/search/meili/meilisim"
	"github.com/calendar/eventcal/search/searchtest"
)

// simVersions are the Meilisearch versions whose task scheduling the
// simulator models (v1.18.0: a deletion by filter never shares a batch
// with additions; v1.50.0: additions queued after it join its batch); the
// write-order tests run against each.
var simVersions = []string{MinVersion, meilisim.NewestVersion}

// newEmulatingSim is newFakeMeiliAt with search emulated (lists answer
// from the stored documents).
func newEmulatingSim(t *testing.T, version string) *fakeMeili {
	f := newFakeMeiliAt(t, version)
	f.Emulate = true
	return f
}

// onEachSimVersion runs test, a subtest for each supported version, on an
// initialised engine over an emulating simulator of that version.
func onEachSimVersion(t *testing.T, test func(t *testing.T, f *fakeMeili, e *Engine)) {
	t.Helper()
	for _, version := range simVersions {
		t.Run(version, func(t *testing.T) {
			f := newEmulatingSim(t, version)
			e := f.engine(Options{Languages: testLangs})
			if err := e.Init(t.Context()); err != nil {
				t.Fatal(err)
			}
			test(t, f, e)
		})
	}
}

// lister reads the lists a reader sees and checks them.
type lister struct {
	t *testing.T
	e *Engine
}

// listQueries are the lists checked: an anonymous one, an editor's, and
// an editor's with each series once.
var listQueries = []struct {
	name     string
	q        search.EventQuery
	editor   bool
	collapse bool
}{
	{"anonymous", search.EventQuery{Lang: "en", Statuses: []string{"publish"}, Limit: 1000}, false, false},
	{"editor", search.EventQuery{Lang: "en", Limit: 1000}, true, false},
	{"editor collapsed", search.EventQuery{Lang: "en", Limit: 1000, CollapseSeries: true}, true, true},
}

// check runs every list and reports an event of mustAnon (anonymous list)
// or mustEditor (editor lists) that is missing, and any entry listed twice
// (the same occurrence, or the same series in a collapsed list).
func (l lister) check(when string, mustAnon, mustEditor map[int64]bool) {
	l.t.Helper()
	for _, lq := range listQueries {
		r, err := l.e.SearchEvents(l.t.Context(), lq.q)
		if err != nil {
			l.t.Fatalf("%s: %s list: %v", when, lq.name, err)
		}
		must := mustAnon
		if lq.editor {
			must = mustEditor
		}
		seen := map[string]int{}
		listed := map[int64]bool{}
		for i, id := range r.IDs {
			key := search.DocumentKey(id, r.Occurrence(i))
			if lq.collapse {
				key = fmt.Sprint(id)
			}
			seen[key]++
			if seen[key] == 2 {
				l.t.Errorf("%s: %s list shows %s twice", when, lq.name, key)
			}
			listed[id] = true
		}
		for id := range must {
			if !listed[id] {
				l.t.Errorf("%s: %s list misses event %d", when, lq.name, id)
			}
		}
		if r.Total != len(r.IDs) {
			l.t.Errorf("%s: %s list total %d for %d entries", when, lq.name, r.Total, len(r.IDs))
		}
	}
}

// stepThrough runs write in a goroutine with the simulator's scheduler
// paused, and processes its tasks one batch at a time, calling between
// batches (and before the first) check. Nothing is applied while check
// runs: the scheduler only moves on Step. It fails the test when write
// fails, and returns the number of batches.
func stepThrough(t *testing.T, f *fakeMeili, write func() error, check func(step int)) int {
	t.Helper()
	f.Pause()
	done := make(chan error, 1)
	go func() { done <- write() }()
	check(0)
	deadline := testdeadline.After(t)
	for step := 1; ; step++ {
		for {
			enqueued := f.Enqueued() // before the check: none is missed
			if f.hasEnqueued() {
				break
			}
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("write: %v", err)
				}
				return step - 1
			case <-deadline:
				t.Fatal("the write neither enqueued a task nor ended")
			case <-enqueued:
			}
		}
		f.Step()
		check(step)
	}
}

// hasEnqueued reports whether a task waits in the simulator's queue.
func (f *fakeMeili) hasEnqueued() bool {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	for uid := f.NextTask - 1; uid >= 0; uid-- {
		task, ok := f.Tasks[uid]
		if !ok {
			continue
		}
		if task.Status == "enqueued" {
			return true
		}
		if task.Status == "succeeded" || task.Status == "failed" {
			// Tasks run in order: an earlier one is not queued either.
			return false
		}
	}
	return false
}

// writeEvent returns the documents of an event: a single event, or a
// series of n occurrences a week apart.
func writeEvent(id int64, status, title string, n int) []search.EventDocument {
	base := search.EventDocument{ID: id, Status: status, Start: 1000 * id, End: 1000*id + 10, StartLocal: 1000 * id, EndLocal: 1000*id + 10,
		Text: map[string]search.Text{"en": {Title: title}}}
	if n == 0 {
		return []search.EventDocument{base}
	}
	return searchtest.Occurrences(base, n, 7*86400)
}

// TestEditsNeverLeaveGaps (finding 3): an edit, a status change publish →
// draft and draft → publish, and a series edit, each stepped one batch at
// a time: between any two batches, an event that stays visible in a list
// is listed, once.
func TestEditsNeverLeaveGaps(t *testing.T) {
	t.Parallel()
	onEachSimVersion(t, func(t *testing.T, f *fakeMeili, e *Engine) {
		var docs []search.EventDocument
		docs = append(docs, writeEvent(1, "publish", "jazz", 0)...)
		docs = append(docs, writeEvent(2, "publish", "blues", 0)...)
		docs = append(docs, writeEvent(3, "draft", "folk", 0)...)
		docs = append(docs, writeEvent(4, "publish", "class", 4)...)
		if err := e.IndexEvents(t.Context(), docs); err != nil {
			t.Fatal(err)
		}
		l := lister{t, e}
		all := map[int64]bool{1: true, 2: true, 3: true, 4: true}
		edits := []struct {
			name      string
			docs      []search.EventDocument
			mustAnon  map[int64]bool
			afterAnon []int64
		}{
			{"edit", writeEvent(1, "publish", "jazz night", 0), map[int64]bool{1: true, 2: true, 4: true}, []int64{1, 2, 4}},
			{"publish to draft", writeEvent(2, "draft", "blues", 0), map[int64]bool{1: true, 4: true}, []int64{1, 4}},
			{"draft to publish", writeEvent(3, "publish", "folk", 0), map[int64]bool{1: true, 4: true}, []int64{1, 3, 4}},
			{"series edit", writeEvent(4, "publish", "evening class", 2), map[int64]bool{1: true, 3: true, 4: true}, []int64{1, 3, 4}},
		}
		for _, ed := range edits {
			steps := stepThrough(t, f, func() error { return e.IndexEvents(t.Context(), ed.docs) }, func(step int) {
				l.check(fmt.Sprintf("%s, batch %d", ed.name, step), ed.mustAnon, all)
			})
			if steps < 3 {
				t.Errorf("%s: %d batches, want one per task (3 or more)", ed.name, steps)
			}
			f.Resume()
			r, err := e.SearchEvents(t.Context(), listQueries[0].q)
			if err != nil {
				t.Fatal(err)
			}
			got := slices.Compact(slices.Clone(r.IDs))
			if !slices.Equal(got, ed.afterAnon) {
				t.Errorf("%s: anonymous list afterwards %v, want %v", ed.name, r.IDs, ed.afterAnon)
			}
		}
		// The series kept only its two new occurrences, everywhere.
		for _, lq := range listQueries[:2] {
			r, err := e.SearchEvents(t.Context(), search.EventQuery{Lang: "en", Statuses: lq.q.Statuses, IDs: []int64{4}, Limit: 10})
			if err != nil || r.Total != 2 {
				t.Errorf("%s list of the series: %+v, %v; want its 2 occurrences", lq.name, r, err)
			}
		}
	})
}

// TestRetryAfterTimeoutRemovesStaleDocuments (finding 2): a draft series
// is published; the addition times out while still queued; the retry
// (the series now has one occurrence fewer) runs while that addition is
// still queued. Afterwards both lists hold exactly the current
// occurrences: no removed occurrence, no draft copy.
func TestRetryAfterTimeoutRemovesStaleDocuments(t *testing.T) {
	t.Parallel()
	onEachSimVersion(t, func(t *testing.T, f *fakeMeili, e *Engine) {
		if err := e.IndexEvents(t.Context(), writeEvent(7, "draft", "choir", 3)); err != nil {
			t.Fatal(err)
		}
		f.Pause()
		timeout := e.opts.TaskTimeout
		e.opts.TaskTimeout = 20 * time.Millisecond // the paused task cannot finish in any time
		if err := e.IndexEvents(t.Context(), writeEvent(7, "publish", "choir", 3)); err == nil {
			t.Fatal("a write whose task never ran succeeded")
		}
		e.opts.TaskTimeout = timeout
		// The retry's tasks are processed one batch per poll: the
		// first attempt's queued addition runs first.
		f.stepOnPoll()
		current := writeEvent(7, "publish", "choir", 2)
		if err := e.IndexEvents(t.Context(), current); err != nil {
			t.Fatal(err)
		}
		f.Drain()
		f.Resume()
		want := []string{current[0].Occurrence, current[1].Occurrence}
		for _, lq := range listQueries[:2] {
			r, err := e.SearchEvents(t.Context(), lq.q)
			if err != nil {
				t.Fatal(err)
			}
			var occs []string
			for i, id := range r.IDs {
				if id != 7 {
					t.Errorf("%s list holds event %d", lq.name, id)
				}
				occs = append(occs, r.Occurrence(i))
			}
			if !slices.Equal(occs, want) || r.Total != 2 {
				t.Errorf("%s list: occurrences %v (total %d), want %v", lq.name, occs, r.Total, want)
			}
		}
		drafts, err := e.SearchEvents(t.Context(), search.EventQuery{Lang: "en", Statuses: []string{"draft"}, Limit: 10})
		if err != nil || drafts.Total != 0 {
			t.Errorf("drafts after publishing: %+v, %v; want none", drafts, err)
		}
		// The indexes hold exactly the current documents.
		for _, uid := range []string{"calendar_events", "calendar_events_hidden"} {
			f.Mu.Lock()
			keys := meilisim.SortedKeys(anyMap(f.Indexes[uid].Docs))
			f.Mu.Unlock()
			if !slices.Equal(keys, []string{current[0].Key(), current[1].Key()}) {
				t.Errorf("%s holds %v", uid, keys)
			}
		}
	})
}

// anyMap turns a document map into a map[string]any for sortedKeys.
func anyMap(m map[string]map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// TestWritesDuringMigration (finding 4): while live indexes of an older
// scheme wait for the rebuild's swap, a sync batch's write succeeds and
// hides no edited event (an event no longer published leaves the
// anonymous list); after the swap the lists show the new documents.
func TestWritesDuringMigration(t *testing.T) {
	t.Parallel()
	t.Run("scheme 3: primary key id", func(t *testing.T) {
		f := newEmulatingSim(t, MinVersion)
		f.AddIndex("calendar_events", nil)
		f.AddIndex("calendar_events_hidden", nil)
		f.AddIndex("calendar_meta", nil)
		f.Mu.Lock()
		for _, d := range []map[string]any{{"id": 1.0, "status": "publish", "start": 1000.0}, {"id": 3.0, "status": "publish", "start": 3000.0}} {
			f.Indexes["calendar_events"].Put(d)
		}
		f.Indexes["calendar_events_hidden"].Put(map[string]any{"id": 2.0, "status": "draft", "start": 2000.0})
		f.Indexes["calendar_meta"].Put(map[string]any{"id": 1.0, "attribute_scheme": 3.0})
		f.Mu.Unlock()
		e := f.engine(Options{Languages: testLangs})
		if err := e.Init(t.Context()); err != nil {
			t.Fatal(err)
		}
		if o, _ := e.Outdated(t.Context()); !o {
			t.Fatal("scheme 3 not outdated")
		}
		// Another process (an API server) reads the same indexes.
		reader := f.engine(Options{Languages: testLangs})
		if err := reader.Init(t.Context()); err != nil {
			t.Fatal(err)
		}
		r, err := e.BeginRebuild(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		// The sync worker's dual write: the live indexes, then the new ones.
		batch := slices.Concat(writeEvent(1, "publish", "edited", 0), writeEvent(2, "publish", "now public", 0), writeEvent(3, "draft", "withdrawn", 0))
		if err := e.IndexEvents(t.Context(), batch); err != nil {
			t.Fatalf("sync batch during the migration: %v", err)
		}
		if err := r.IndexEvents(t.Context(), batch); err != nil {
			t.Fatal(err)
		}
		lister{t, e}.check("during the migration", map[int64]bool{1: true}, map[int64]bool{1: true, 2: true, 3: true})
		anon, err := e.SearchEvents(t.Context(), listQueries[0].q)
		if err != nil || slices.Contains(anon.IDs, 3) {
			t.Errorf("anonymous list during the migration %v, %v: the withdrawn event 3 is still public", anon.IDs, err)
		}
		if err := r.Commit(t.Context()); err != nil {
			t.Fatal(err)
		}
		anon, err = e.SearchEvents(t.Context(), listQueries[0].q)
		if err != nil || !slices.Equal(anon.IDs, []int64{1, 2}) {
			t.Errorf("anonymous list after the swap %v, %v; want [1 2]", anon.IDs, err)
		}
		lister{t, e}.check("after the swap", map[int64]bool{1: true, 2: true}, map[int64]bool{1: true, 2: true, 3: true})
		// The other process reads the new layout too: no published event
		// twice in an editor's list.
		lister{t, reader}.check("after the swap, another process", map[int64]bool{1: true, 2: true}, map[int64]bool{1: true, 2: true, 3: true})
	})

	t.Run("scheme 4: statuses split", func(t *testing.T) {
		f := newEmulatingSim(t, MinVersion)
		e := f.engine(Options{Languages: testLangs})
		if err := e.Init(t.Context()); err != nil {
			t.Fatal(err)
		}
		if err := e.IndexEvents(t.Context(), slices.Concat(writeEvent(1, "publish", "jazz", 0), writeEvent(2, "draft", "blues", 0), writeEvent(3, "publish", "folk", 0))); err != nil {
			t.Fatal(err)
		}
		// The scheme-4 layout: the hidden index without the published
		// events.
		f.Mu.Lock()
		f.Indexes["calendar_events_hidden"].Remove("1")
		f.Indexes["calendar_events_hidden"].Remove("3")
		f.Indexes["calendar_meta"].Put(map[string]any{"id": 1.0, "attribute_scheme": 4.0})
		f.Mu.Unlock()
		e = f.engine(Options{Languages: testLangs})
		if err := e.Init(t.Context()); err != nil {
			t.Fatal(err)
		}
		if o, _ := e.Outdated(t.Context()); !o {
			t.Fatal("scheme 4 not outdated")
		}
		l := lister{t, e}
		all := map[int64]bool{1: true, 2: true, 3: true}
		for _, ed := range []struct {
			name string
			docs []search.EventDocument
			anon map[int64]bool
		}{
			{"edit", writeEvent(1, "publish", "jazz night", 0), map[int64]bool{1: true, 3: true}},
			{"draft to publish", writeEvent(2, "publish", "blues", 0), map[int64]bool{1: true, 3: true}},
			{"publish to draft", writeEvent(3, "draft", "folk", 0), map[int64]bool{1: true, 2: true}},
		} {
			stepThrough(t, f, func() error { return e.IndexEvents(t.Context(), ed.docs) }, func(step int) {
				// Never missing; an event moving between the two indexes
				// may be in both for one batch (hidden.go).
				for _, lq := range listQueries {
					r, err := e.SearchEvents(t.Context(), lq.q)
					if err != nil {
						t.Fatal(err)
					}
					must := ed.anon
					if lq.editor {
						must = all
					}
					for id := range must {
						if !slices.Contains(r.IDs, id) {
							t.Errorf("%s, batch %d: %s list misses %d", ed.name, step, lq.name, id)
						}
					}
				}
			})
			f.Resume()
		}
		l.check("after the writes", map[int64]bool{1: true, 2: true}, all)
	})
}

// TestEditorDeepPagesAreBounded (finding 5): an editor's list, collapsed
// or not, is one search of one index whose page window covers the
// requested page only: the hits Meilisearch returns do not grow with the
// offset, and no request fetches every hidden hit.
func TestEditorDeepPagesAreBounded(t *testing.T) {
	t.Parallel()
	f := newEmulatingSim(t, MinVersion)
	e := f.engine(Options{Languages: testLangs})
	if err := e.Init(t.Context()); err != nil {
		t.Fatal(err)
	}
	var docs []search.EventDocument
	for i := range 300 {
		status := "publish"
		if i%2 == 1 {
			status = "draft"
		}
		docs = append(docs, writeEvent(int64(i+1), status, "gig", 0)...)
	}
	if err := e.IndexEvents(t.Context(), docs); err != nil {
		t.Fatal(err)
	}
	for _, collapse := range []bool{false, true} {
		for _, offset := range []int{0, 100, 280, 1 << 30} {
			f.Reset()
			f.Mu.Lock()
			f.Served = 0
			f.Mu.Unlock()
			r, err := e.SearchEvents(t.Context(), search.EventQuery{Lang: "en", Offset: offset, Limit: 10, CollapseSeries: collapse})
			if err != nil {
				t.Fatal(err)
			}
			if r.Total != 300 || offset < 300 && (len(r.IDs) != min(10, 300-offset) || r.IDs[0] != int64(offset+1)) {
				t.Errorf("collapse %v offset %d: %+v", collapse, offset, r)
			}
			calls := f.Calls(http.MethodPost, "*")
			if len(calls) != 1 || calls[0].Path != "/indexes/calendar_events_hidden/search" {
				t.Errorf("collapse %v offset %d: requests %+v, want one search of the editor index", collapse, offset, calls)
				continue
			}
			f.Mu.Lock()
			served := f.Served
			f.Mu.Unlock()
			if served > 10 {
				t.Errorf("collapse %v offset %d: %d hits returned for a page of 10", collapse, offset, served)
			}
		}
	}
}

// TestReaderNeverSeesGaps: 400 edits (150 with -short) (text edits,
// status changes publish ↔ draft, series growing and shrinking) stepped
// one batch at a time through the simulator: between every two batches,
// the anonymous and editor lists list every event that stays visible,
// once.
func TestReaderNeverSeesGaps(t *testing.T) {
	t.Parallel()
	onEachSimVersion(t, func(t *testing.T, f *fakeMeili, e *Engine) {
		type state struct {
			status string
			n      int // occurrences; 0: a single event
		}
		events := map[int64]state{}
		var docs []search.EventDocument
		for id := int64(1); id <= 12; id++ {
			st := state{status: "publish"}
			if id%3 == 0 {
				st.status = "draft"
			}
			if id%4 == 0 {
				st.n = 3
			}
			events[id] = st
			docs = append(docs, writeEvent(id, st.status, "start", st.n)...)
		}
		if err := e.IndexEvents(t.Context(), docs); err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(31, 3))
		l := lister{t, e}
		all := map[int64]bool{}
		for id := range events {
			all[id] = true
		}
		// Every kind of edit, each way, many times over (counted below:
		// 400 edits make each kind at least 10 times, the series'
		// changes being the rarest; 1,000 repeated the same kinds).
		edits := 400
		if testing.Short() {
			edits = 150
		}
		kinds := map[string]int{}
		defer func() {
			for _, k := range []string{"text", "publish → draft", "draft → publish", "series grows", "series shrinks"} {
				if min := edits / 40; kinds[k] < min && !t.Failed() {
					t.Errorf("%d edits of kind %q, want at least %d: %v", kinds[k], k, min, kinds)
				}
			}
		}()
		for i := range edits {
			id := int64(rng.IntN(12) + 1)
			before := events[id]
			after := before
			switch rng.IntN(3) {
			case 0: // text only
			case 1:
				after.status = map[string]string{"publish": "draft", "draft": "publish"}[before.status]
			case 2:
				if before.n > 0 {
					after.n = 1 + rng.IntN(5)
				}
			}
			switch {
			case after.status != before.status:
				kinds[before.status+" → "+after.status]++
			case after.n > before.n:
				kinds["series grows"]++
			case after.n < before.n:
				kinds["series shrinks"]++
			default:
				kinds["text"]++
			}
			events[id] = after
			mustAnon := map[int64]bool{}
			for other, st := range events {
				if st.status == "publish" && (other != id || before.status == "publish") {
					mustAnon[other] = true
				}
			}
			write := writeEvent(id, after.status, fmt.Sprintf("edit %d", i), after.n)
			stepThrough(t, f, func() error { return e.IndexEvents(t.Context(), write) }, func(step int) {
				l.check(fmt.Sprintf("edit %d of event %d (%v → %v), batch %d", i, id, before, after, step), mustAnon, all)
			})
			if t.Failed() {
				return
			}
		}
		f.Resume()
	})
}
