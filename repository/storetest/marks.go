package storetest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/calendar/eventcal/repository"
)

// markKey identifies the item an IndexMark refers to.
type markKey struct {
	Kind repository.MarkKind
	ID   int64
}

// allMarks is a limit larger than any test's number of marks.
const allMarks = 100000

// pendingMarks returns every pending mark, keyed by item, and checks the
// invariants that hold for any list: one mark per item, oldest first.
func pendingMarks(t *testing.T, ctx context.Context, s repository.Store) map[markKey]repository.IndexMark {
	t.Helper()
	list, err := s.PendingMarks(ctx, allMarks)
	if err != nil {
		t.Fatalf("PendingMarks: %v", err)
	}
	out := make(map[markKey]repository.IndexMark, len(list))
	for i, m := range list {
		k := markKey{m.Kind, m.ID}
		if prev, dup := out[k]; dup {
			t.Errorf("PendingMarks lists %v twice: %+v and %+v", k, prev, m)
		}
		out[k] = m
		if i > 0 && m.At.Before(list[i-1].At) {
			t.Errorf("PendingMarks not oldest first: %+v after %+v", m, list[i-1])
		}
	}
	return out
}

// clearAllMarks clears every pending mark.
func clearAllMarks(t *testing.T, ctx context.Context, s repository.Store) {
	t.Helper()
	for range 100 {
		list, err := s.PendingMarks(ctx, 1000)
		if err != nil {
			t.Fatalf("PendingMarks: %v", err)
		}
		if len(list) == 0 {
			return
		}
		if err := s.ClearMarks(ctx, list); err != nil {
			t.Fatalf("ClearMarks: %v", err)
		}
	}
	t.Fatal("marks never ran out")
}

var markTests = []storeTest{
	{"EveryWrite", testMarksEveryWrite},
	{"ReadsDoNotMark", testMarksReads},
	{"OnePerItemSeqGrows", testMarksSeqGrows},
	{"OldestFirstAndLimit", testMarksOrder},
	{"ClearKeepsRenewed", testMarksClearKeepsRenewed},
	{"FailedWaitUntilDue", testMarksFailed},
}

// testMarksFailed: a failed mark keeps its attempts, error and next
// attempt; DueMarks leaves it out until then and keeps the others in
// order; a new write to the item resets it; FailMark on a renewed or
// cleared mark changes nothing.
func testMarksFailed(t *testing.T, ctx context.Context, s repository.Store) {
	clearAllMarks(t, ctx, s)
	var ids []int64
	for i := range 4 {
		p := mustCreatePost(t, ctx, s, imageFixture(fmt.Sprintf("https://img.example/fail%d.png", i)))
		ids = append(ids, p.ID)
	}
	pending := pendingMarks(t, ctx, s)
	poison := pending[markKey{repository.MarkPost, ids[1]}]
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	long := strings.Repeat("é", repository.MaxMarkErrorBytes)
	failed := poison
	failed.Attempts, failed.LastError, failed.NextAttempt = 3, long, now.Add(time.Minute)
	if err := s.FailMark(ctx, failed); err != nil {
		t.Fatalf("FailMark: %v", err)
	}
	dueIDs := func(at time.Time) []int64 {
		t.Helper()
		due, err := s.DueMarks(ctx, at, allMarks)
		if err != nil {
			t.Fatalf("DueMarks: %v", err)
		}
		var out []int64
		for _, m := range due {
			out = append(out, m.ID)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		at   time.Time
		want []int64
	}{
		{"before next attempt", now, []int64{ids[0], ids[2], ids[3]}},
		{"at next attempt", now.Add(time.Minute), ids},
		{"after next attempt", now.Add(time.Hour), ids},
	} {
		if got := dueIDs(tc.at); !slices.Equal(got, tc.want) {
			t.Errorf("%s: DueMarks = %v, want %v", tc.name, got, tc.want)
		}
	}
	if got, _ := s.DueMarks(ctx, now, 1); len(got) != 1 || got[0].ID != ids[0] {
		t.Errorf("DueMarks limit 1 = %+v, want the oldest", got)
	}
	list, n, err := s.FailingMarks(ctx, 10)
	if err != nil {
		t.Fatalf("FailingMarks: %v", err)
	}
	if n != 1 || len(list) != 1 {
		t.Fatalf("FailingMarks = %+v, %d; want the one failed mark", list, n)
	}
	got := list[0]
	if got.ID != poison.ID || got.Seq != poison.Seq || got.Attempts != 3 || !got.NextAttempt.Equal(now.Add(time.Minute)) {
		t.Errorf("FailingMarks[0] = %+v, want attempts 3, next %v", got, now.Add(time.Minute))
	}
	if len(got.LastError) > repository.MaxMarkErrorBytes || !utf8.ValidString(got.LastError) || !strings.HasPrefix(long, strings.TrimSuffix(got.LastError, "…")) {
		t.Errorf("LastError is %d bytes (%q...), want at most %d, valid UTF-8, a prefix", len(got.LastError), got.LastError[:min(20, len(got.LastError))], repository.MaxMarkErrorBytes)
	}
	if m := pendingMarks(t, ctx, s)[markKey{repository.MarkPost, poison.ID}]; m.Attempts != 3 {
		t.Errorf("PendingMarks shows %+v, want the failure too", m)
	}

	// A failure recorded for an older seq changes nothing.
	stale := poison
	stale.Seq--
	stale.Attempts, stale.LastError, stale.NextAttempt = 9, "stale", now.Add(24*time.Hour)
	if err := s.FailMark(ctx, stale); err != nil {
		t.Fatalf("FailMark stale: %v", err)
	}
	if list, _, _ := s.FailingMarks(ctx, 10); len(list) != 1 || list[0].Attempts != 3 {
		t.Errorf("after a stale FailMark: %+v", list)
	}

	// A new write resets the failure: due at once, not failing.
	mustUpdatePost(t, ctx, s, poison.ID, func(p *repository.Record) { p.Title["en"] = "fixed" })
	if got := dueIDs(now); !slices.Contains(got, poison.ID) {
		t.Errorf("after a new write DueMarks = %v, want %d", got, poison.ID)
	}
	if list, n, err := s.FailingMarks(ctx, 10); err != nil || n != 0 || len(list) != 0 {
		t.Errorf("after a new write FailingMarks = %+v, %d, %v; want none", list, n, err)
	}
	renewed := pendingMarks(t, ctx, s)[markKey{repository.MarkPost, poison.ID}]
	if renewed.Attempts != 0 || renewed.LastError != "" || !renewed.NextAttempt.IsZero() {
		t.Errorf("renewed mark = %+v, want no failure", renewed)
	}
	// The old version's failure cannot land on the new one.
	if err := s.FailMark(ctx, failed); err != nil {
		t.Fatalf("FailMark old seq: %v", err)
	}
	if _, n, _ := s.FailingMarks(ctx, 10); n != 0 {
		t.Errorf("a failure of the old seq landed on the renewed mark")
	}
	// FailMark on a cleared mark does not bring it back.
	clearAllMarks(t, ctx, s)
	if err := s.FailMark(ctx, renewed); err != nil {
		t.Fatalf("FailMark cleared: %v", err)
	}
	if left, _ := s.PendingMarks(ctx, allMarks); len(left) != 0 {
		t.Errorf("FailMark brought back %+v", left)
	}
}

func testMarksEveryWrite(t *testing.T, ctx context.Context, s repository.Store) {
	type env struct {
		venue, event, event2, other *repository.Record
		cat, child, tag             *repository.Label
	}
	// Each case performs one write on the fixture and names the marks it
	// must leave (want) and must not leave (not).
	cases := []struct {
		name string
		op   func(t *testing.T, e *env) (want, not []markKey)
	}{
		{"CreatePost", func(t *testing.T, e *env) ([]markKey, []markKey) {
			p := mustCreatePost(t, ctx, s, imageFixture("https://img.example/new.png"))
			return []markKey{{repository.MarkPost, p.ID}}, []markKey{{repository.MarkPost, e.event.ID}}
		}},
		{"UpdatePost", func(t *testing.T, e *env) ([]markKey, []markKey) {
			mustUpdatePost(t, ctx, s, e.event.ID, func(p *repository.Record) { p.Title["en"] = "Changed" })
			return []markKey{{repository.MarkPost, e.event.ID}}, []markKey{{repository.MarkPost, e.event2.ID}}
		}},
		{"UpdatePost to trash", func(t *testing.T, e *env) ([]markKey, []markKey) {
			mustUpdatePost(t, ctx, s, e.venue.ID, func(p *repository.Record) { p.Status = repository.StatusTrash })
			return []markKey{{repository.MarkPost, e.venue.ID}}, nil
		}},
		{"UnlinkPost", func(t *testing.T, e *env) ([]markKey, []markKey) {
			if _, err := s.UnlinkRecord(ctx, e.venue.ID); err != nil {
				t.Fatal(err)
			}
			return []markKey{{repository.MarkPost, e.event.ID}, {repository.MarkPost, e.event2.ID}},
				[]markKey{{repository.MarkPost, e.other.ID}}
		}},
		{"DeletePost", func(t *testing.T, e *env) ([]markKey, []markKey) {
			if err := s.DeleteRecord(ctx, e.event2.ID); err != nil {
				t.Fatal(err)
			}
			return []markKey{{repository.MarkPost, e.event2.ID}}, []markKey{{repository.MarkPost, e.event.ID}}
		}},
		{"CreateTerm", func(t *testing.T, e *env) ([]markKey, []markKey) {
			term := mustCreateTerm(t, ctx, s, termFixture(repository.LabelTag, "fresh", 0))
			return []markKey{{repository.MarkTerm, term.ID}}, []markKey{{repository.MarkTerm, e.tag.ID}}
		}},
		{"UpdateTerm", func(t *testing.T, e *env) ([]markKey, []markKey) {
			mustUpdateTerm(t, ctx, s, e.tag.ID, func(tm *repository.Label) { tm.Name["en"] = "renamed" })
			return []markKey{{repository.MarkTerm, e.tag.ID}}, []markKey{{repository.MarkTerm, e.cat.ID}}
		}},
		{"DeleteTerm", func(t *testing.T, e *env) ([]markKey, []markKey) {
			if err := s.DeleteLabel(ctx, e.cat.ID); err != nil {
				t.Fatal(err)
			}
			return []markKey{{repository.MarkTerm, e.cat.ID}, {repository.MarkTerm, e.child.ID}, {repository.MarkPost, e.event.ID}},
				[]markKey{{repository.MarkPost, e.event2.ID}, {repository.MarkTerm, e.tag.ID}}
		}},
		{"MarkForIndexing posts", func(t *testing.T, e *env) ([]markKey, []markKey) {
			if err := s.MarkForIndexing(ctx, repository.MarkPost, []int64{e.event.ID, e.other.ID}); err != nil {
				t.Fatal(err)
			}
			return []markKey{{repository.MarkPost, e.event.ID}, {repository.MarkPost, e.other.ID}},
				[]markKey{{repository.MarkPost, e.event2.ID}, {repository.MarkTerm, e.event.ID}}
		}},
		{"MarkForIndexing terms", func(t *testing.T, e *env) ([]markKey, []markKey) {
			if err := s.MarkForIndexing(ctx, repository.MarkTerm, []int64{e.cat.ID, e.tag.ID}); err != nil {
				t.Fatal(err)
			}
			return []markKey{{repository.MarkTerm, e.cat.ID}, {repository.MarkTerm, e.tag.ID}},
				[]markKey{{repository.MarkPost, e.cat.ID}, {repository.MarkTerm, e.child.ID}}
		}},
		{"MarkForIndexing nothing", func(t *testing.T, e *env) ([]markKey, []markKey) {
			if err := s.MarkForIndexing(ctx, repository.MarkPost, nil); err != nil {
				t.Fatal(err)
			}
			return nil, []markKey{{repository.MarkPost, e.event.ID}}
		}},
	}
	// One store for all cases: marks are cleared before each write.
	e := &env{}
	e.cat = mustCreateTerm(t, ctx, s, termFixture(repository.LabelCategory, "Cat", 0))
	e.child = mustCreateTerm(t, ctx, s, termFixture(repository.LabelCategory, "Child", e.cat.ID))
	e.tag = mustCreateTerm(t, ctx, s, termFixture(repository.LabelTag, "Tag", 0))
	e.venue = mustCreatePost(t, ctx, s, venueFixture("Marked venue"))
	ev := eventFixture("Marked event")
	ev.Event.Venues, ev.Event.Categories = []int64{e.venue.ID}, []int64{e.cat.ID}
	e.event = mustCreatePost(t, ctx, s, ev)
	ev2 := eventFixture("Second marked event")
	ev2.Event.Venues, ev2.Event.Tags = []int64{e.venue.ID}, []int64{e.tag.ID}
	e.event2 = mustCreatePost(t, ctx, s, ev2)
	e.other = mustCreatePost(t, ctx, s, eventFixture("Unlinked event"))
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clearAllMarks(t, ctx, s)
			before := time.Now()
			want, not := tc.op(t, e)
			after := time.Now()
			marks := pendingMarks(t, ctx, s)
			for _, k := range want {
				m, ok := marks[k]
				if !ok {
					t.Errorf("%s left no mark for %v (marks %v)", tc.name, k, marks)
					continue
				}
				// Generous bounds: the store's clock may not be ours.
				if m.At.Before(before.Add(-5*time.Minute)) || m.At.After(after.Add(5*time.Minute)) {
					t.Errorf("mark %+v: At not near the write (%v .. %v)", m, before, after)
				}
			}
			for _, k := range not {
				if _, ok := marks[k]; ok {
					t.Errorf("%s marked untouched %v", tc.name, k)
				}
			}
		})
	}
}

func testMarksReads(t *testing.T, ctx context.Context, s repository.Store) {
	ev := mustCreatePost(t, ctx, s, eventFixture("Read only"))
	term := mustCreateTerm(t, ctx, s, termFixture(repository.LabelCategory, "Read only", 0))
	u := &repository.User{Login: "reader", Role: repository.RoleAuthor, Created: baseTime}
	if err := s.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	clearAllMarks(t, ctx, s)
	mustGetPost(t, ctx, s, ev.ID)
	_, _ = s.GetRecords(ctx, []int64{ev.ID})
	_, _ = s.GetRecordBySlug(ctx, repository.KindEvent, "en", ev.Slug["en"])
	_, _ = s.FindRecords(ctx, repository.RecordQuery{})
	_, _ = s.CountRecords(ctx, repository.RecordQuery{})
	mustGetTerm(t, ctx, s, term.ID)
	_, _ = s.GetLabels(ctx, []int64{term.ID})
	_, _ = s.FindLabels(ctx, repository.LabelQuery{Taxonomy: repository.LabelCategory})
	_, _ = s.LabelCounts(ctx, repository.LabelCategory)
	_, _ = s.GetUser(ctx, u.ID)
	if err := s.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	if marks := pendingMarks(t, ctx, s); len(marks) != 0 {
		t.Errorf("reads left marks: %v", marks)
	}
}

func testMarksSeqGrows(t *testing.T, ctx context.Context, s repository.Store) {
	ev := mustCreatePost(t, ctx, s, eventFixture("Rewritten"))
	term := mustCreateTerm(t, ctx, s, termFixture(repository.LabelTag, "rewritten", 0))
	pk, tk := markKey{repository.MarkPost, ev.ID}, markKey{repository.MarkTerm, term.ID}
	// Posts and terms may share IDs: the kinds keep their marks apart.
	other := mustCreatePost(t, ctx, s, eventFixture("Other"))
	last := pendingMarks(t, ctx, s)
	for _, k := range []markKey{pk, tk, {repository.MarkPost, other.ID}} {
		if _, ok := last[k]; !ok {
			t.Fatalf("no mark for %v after create", k)
		}
	}
	writes := []struct {
		name string
		key  markKey
		op   func() error
	}{
		{"UpdatePost", pk, func() error {
			_, err := s.UpdateRecord(ctx, ev.ID, func(p *repository.Record) error { p.Status = repository.StatusDraft; return nil })
			return err
		}},
		{"UpdatePost again", pk, func() error {
			_, err := s.UpdateRecord(ctx, ev.ID, func(p *repository.Record) error { p.Status = repository.StatusPublish; return nil })
			return err
		}},
		{"MarkForIndexing post", pk, func() error { return s.MarkForIndexing(ctx, repository.MarkPost, []int64{ev.ID}) }},
		{"UpdateTerm", tk, func() error {
			_, err := s.UpdateLabel(ctx, term.ID, func(tm *repository.Label) error { tm.Name["en"] = "again"; return nil })
			return err
		}},
		{"MarkForIndexing term", tk, func() error { return s.MarkForIndexing(ctx, repository.MarkTerm, []int64{term.ID}) }},
		{"DeletePost", pk, func() error { return s.DeleteRecord(ctx, ev.ID) }},
		{"DeleteTerm", tk, func() error { return s.DeleteLabel(ctx, term.ID) }},
	}
	for _, w := range writes {
		if err := w.op(); err != nil {
			t.Fatalf("%s: %v", w.name, err)
		}
		now := pendingMarks(t, ctx, s)
		if len(now) != len(last) {
			t.Errorf("%s: %d marks, want still %d (one per item)", w.name, len(now), len(last))
		}
		if now[w.key].Seq <= last[w.key].Seq {
			t.Errorf("%s: mark Seq %d, want > %d", w.name, now[w.key].Seq, last[w.key].Seq)
		}
		if now[w.key].At.Before(last[w.key].At) {
			t.Errorf("%s: mark At went back from %v to %v", w.name, last[w.key].At, now[w.key].At)
		}
		last = now
	}
}

func testMarksOrder(t *testing.T, ctx context.Context, s repository.Store) {
	var posts []*repository.Record
	for range 6 {
		posts = append(posts, mustCreatePost(t, ctx, s, minimalEvent("ordered")))
	}
	// Re-write the first: it becomes the newest mark.
	mustUpdatePost(t, ctx, s, posts[0].ID, func(p *repository.Record) { p.Status = repository.StatusPending })
	all, err := s.PendingMarks(ctx, allMarks)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != len(posts) {
		t.Fatalf("PendingMarks: %d marks, want %d", len(all), len(posts))
	}
	pendingMarks(t, ctx, s) // checks the order by At
	for _, m := range all[:len(all)-1] {
		if m.At.After(all[len(all)-1].At) {
			t.Errorf("mark %+v is newer than the re-written item's mark %+v that is listed after it", m, all[len(all)-1])
		}
	}
	for _, limit := range []int{1, 2, 4} {
		page, err := s.PendingMarks(ctx, limit)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) != limit {
			t.Fatalf("PendingMarks(%d) returned %d marks", limit, len(page))
		}
		// The oldest come first: nothing left out is older than what was
		// returned.
		in := map[markKey]bool{}
		var newest time.Time
		for _, m := range page {
			in[markKey{m.Kind, m.ID}] = true
			if m.At.After(newest) {
				newest = m.At
			}
		}
		for _, m := range all {
			if !in[markKey{m.Kind, m.ID}] && m.At.Before(newest) {
				t.Errorf("PendingMarks(%d) left out %+v, older than a returned mark (%v)", limit, m, newest)
			}
		}
	}
	// Clearing the oldest page exposes the next ones.
	page, err := s.PendingMarks(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ClearMarks(ctx, page); err != nil {
		t.Fatal(err)
	}
	rest, err := s.PendingMarks(ctx, allMarks)
	if err != nil {
		t.Fatal(err)
	}
	if len(rest) != len(all)-2 {
		t.Errorf("after clearing 2 of %d marks, %d remain", len(all), len(rest))
	}
	for _, m := range rest {
		for _, c := range page {
			if m.Kind == c.Kind && m.ID == c.ID {
				t.Errorf("cleared mark %+v still pending", m)
			}
		}
	}
}

func testMarksClearKeepsRenewed(t *testing.T, ctx context.Context, s repository.Store) {
	a := mustCreatePost(t, ctx, s, eventFixture("A"))
	b := mustCreatePost(t, ctx, s, eventFixture("B"))
	term := mustCreateTerm(t, ctx, s, termFixture(repository.LabelCategory, "T", 0))
	read, err := s.PendingMarks(ctx, allMarks)
	if err != nil {
		t.Fatal(err)
	}
	if len(read) != 3 {
		t.Fatalf("PendingMarks: %d marks, want 3", len(read))
	}
	// a and the term are written again after the marks were read.
	mustUpdatePost(t, ctx, s, a.ID, func(p *repository.Record) { p.Title["en"] = "A2" })
	if err := s.MarkForIndexing(ctx, repository.MarkTerm, []int64{term.ID}); err != nil {
		t.Fatal(err)
	}
	if err := s.ClearMarks(ctx, read); err != nil {
		t.Fatalf("ClearMarks: %v", err)
	}
	left := pendingMarks(t, ctx, s)
	if len(left) != 2 {
		t.Errorf("marks after ClearMarks: %v, want a and the term", left)
	}
	for _, k := range []markKey{{repository.MarkPost, a.ID}, {repository.MarkTerm, term.ID}} {
		if _, ok := left[k]; !ok {
			t.Errorf("renewed mark %v was cleared with its old Seq", k)
		}
	}
	if _, ok := left[markKey{repository.MarkPost, b.ID}]; ok {
		t.Errorf("mark for b not cleared")
	}
	// Clearing with the current Seq works; clearing an unknown or
	// already cleared mark is not an error.
	var current []repository.IndexMark
	for _, m := range left {
		current = append(current, m)
	}
	if err := s.ClearMarks(ctx, append(current, read...)); err != nil {
		t.Fatalf("ClearMarks: %v", err)
	}
	if left := pendingMarks(t, ctx, s); len(left) != 0 {
		t.Errorf("marks left: %v", left)
	}
	if err := s.ClearMarks(ctx, nil); err != nil {
		t.Errorf("ClearMarks(nil): %v", err)
	}
}
