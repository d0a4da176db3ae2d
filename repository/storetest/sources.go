package storetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/calendar/eventcal/repository"
)

var sourceTests = []storeTest{
	{"CRUD", testSourceCRUD},
	{"ConcurrentUpdates", testSourceConcurrentUpdates},
	{"Delete", testSourceDelete},
	{"Runs", testSourceRuns},
	{"Prune", testSourcePrune},
	{"Items", testSourceItems},
	{"RecordLinkRoundTrip", testSourceLinkRoundTrip},
}

// sourceFixture returns a source with every field set.
func sourceFixture(url string) *repository.Source {
	return &repository.Source{
		URL: url, Format: repository.SourceICS, Name: "Feed " + url, Schedule: "@hourly",
		Status: repository.StatusDraft, Categories: []int64{3, 4}, Tags: []int64{9},
		OnRemoved: repository.OnRemovedTrash, Author: 7,
		ETag: `"v1"`, LastModified: "Fri, 13 Mar 2031 10:00:00 GMT", ContentHash: "abc", DetectedFormat: repository.SourceICS,
		RunClaim: "claim-1", RunClaimUntil: baseTime.Add(time.Minute), LastRun: 0,
		Created: baseTime, Updated: baseTime,
	}
}

func mustCreateSource(t *testing.T, ctx context.Context, s repository.Store, src *repository.Source) *repository.Source {
	t.Helper()
	if err := s.CreateSource(ctx, src); err != nil {
		t.Fatalf("CreateSource(%s): %v", src.URL, err)
	}
	if src.ID <= 0 {
		t.Fatalf("CreateSource(%s) assigned ID %d", src.URL, src.ID)
	}
	return src
}

// normSource returns src in comparable form (times to the second, nil
// and empty lists alike).
func normSource(src *repository.Source) repository.Source {
	c := *src
	c.Created, c.Updated, c.RunClaimUntil = normTime(c.Created), normTime(c.Updated), normTime(c.RunClaimUntil)
	c.Categories, c.Tags = normIDs(c.Categories), normIDs(c.Tags)
	return c
}

func checkSource(t *testing.T, what string, want, got *repository.Source) {
	t.Helper()
	if w, g := normSource(want), normSource(got); !reflect.DeepEqual(w, g) {
		t.Errorf("%s: source differs\nwant %+v\ngot  %+v", what, w, g)
	}
}

func normRun(r *repository.SourceRun) repository.SourceRun {
	c := *r
	c.Started, c.Finished = normTime(c.Started), normTime(c.Finished)
	if len(c.Problems) == 0 {
		c.Problems = nil
	}
	return c
}

func checkRun(t *testing.T, what string, want, got *repository.SourceRun) {
	t.Helper()
	if w, g := normRun(want), normRun(got); !reflect.DeepEqual(w, g) {
		t.Errorf("%s: run differs\nwant %+v\ngot  %+v", what, w, g)
	}
}

// testSourceCRUD: sources are created with increasing IDs, read back
// with every field (the run claim included), listed by ID, updated with
// a new revision, and an error from the update's fn changes nothing.
func testSourceCRUD(t *testing.T, ctx context.Context, s repository.Store) {
	if list, err := s.ListSources(ctx); err != nil || len(list) != 0 {
		t.Fatalf("ListSources of an empty store = %v, %v", list, err)
	}
	a := mustCreateSource(t, ctx, s, sourceFixture("https://a.example/cal.ics"))
	b := mustCreateSource(t, ctx, s, &repository.Source{URL: "https://b.example/", Format: repository.SourceAuto,
		Status: repository.StatusPublish, OnRemoved: repository.OnRemovedKeep, Created: baseTime, Updated: baseTime})
	if b.ID <= a.ID {
		t.Errorf("IDs %d then %d: want increasing", a.ID, b.ID)
	}
	if a.Revision <= 0 {
		t.Errorf("created at revision %d", a.Revision)
	}
	got, err := s.GetSource(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	checkSource(t, "read back", a, got)
	gotB, err := s.GetSource(ctx, b.ID)
	if err != nil {
		t.Fatal(err)
	}
	checkSource(t, "read back (minimal)", b, gotB)
	if _, err := s.GetSource(ctx, b.ID+100); !errors.Is(err, repository.ErrNotFound) {
		t.Errorf("GetSource of a missing ID: %v", err)
	}

	later := baseTime.Add(time.Hour)
	up, err := s.UpdateSource(ctx, a.ID, func(src *repository.Source) error {
		src.Name, src.Schedule, src.Tags = "Renamed", "", []int64{}
		src.RunClaim, src.RunClaimUntil = "", time.Time{}
		src.LastRun, src.ETag, src.Updated = 12, `"v2"`, later
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if up.Revision <= a.Revision || up.ID != a.ID {
		t.Errorf("after update: ID %d revision %d (was %d)", up.ID, up.Revision, a.Revision)
	}
	want := *a
	want.Name, want.Schedule, want.Tags, want.RunClaim, want.RunClaimUntil = "Renamed", "", nil, "", time.Time{}
	want.LastRun, want.ETag, want.Updated, want.Revision = 12, `"v2"`, later, up.Revision
	got, _ = s.GetSource(ctx, a.ID)
	checkSource(t, "after update", &want, got)

	stop := errors.New("stop")
	if _, err := s.UpdateSource(ctx, a.ID, func(src *repository.Source) error {
		src.Name = "never stored"
		return stop
	}); !errors.Is(err, stop) {
		t.Errorf("UpdateSource with a failing fn: %v, want its error", err)
	}
	got, _ = s.GetSource(ctx, a.ID)
	checkSource(t, "after an aborted update", &want, got)
	if _, err := s.UpdateSource(ctx, b.ID+100, func(*repository.Source) error { return nil }); !errors.Is(err, repository.ErrNotFound) {
		t.Errorf("UpdateSource of a missing ID: %v", err)
	}

	list, err := s.ListSources(ctx)
	if err != nil || len(list) != 2 || list[0].ID != a.ID || list[1].ID != b.ID {
		t.Fatalf("ListSources = %v, %v", list, err)
	}
	checkSource(t, "listed", &want, list[0])
}

// testSourceConcurrentUpdates: updates of one source from several
// goroutines at once all apply (compare-and-swap, retried): none is lost.
func testSourceConcurrentUpdates(t *testing.T, ctx context.Context, s repository.Store) {
	src := mustCreateSource(t, ctx, s, sourceFixture("https://a.example/cal.ics"))
	const workers, each = 4, 5
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				_, err := s.UpdateSource(ctx, src.ID, func(x *repository.Source) error {
					x.LastRun++
					x.Categories = append(x.Categories, int64(1000*w+i))
					return nil
				})
				if err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	got, err := s.GetSource(ctx, src.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.LastRun != workers*each || len(got.Categories) != 2+workers*each {
		t.Errorf("after %d concurrent updates: LastRun %d, %d categories; updates were lost", workers*each, got.LastRun, len(got.Categories))
	}
	if got.Revision != src.Revision+workers*each {
		t.Errorf("revision %d, want %d", got.Revision, src.Revision+workers*each)
	}
}

func newRun(sourceID int64, minute int) *repository.SourceRun {
	return &repository.SourceRun{SourceID: sourceID, Status: repository.RunRunning, Trigger: "schedule",
		Started: baseTime.Add(time.Duration(minute) * time.Minute)}
}

func mustCreateRun(t *testing.T, ctx context.Context, s repository.Store, r *repository.SourceRun) *repository.SourceRun {
	t.Helper()
	if err := s.CreateSourceRun(ctx, r); err != nil {
		t.Fatalf("CreateSourceRun(source %d): %v", r.SourceID, err)
	}
	return r
}

func runIDs(rs []*repository.SourceRun) []int64 {
	out := make([]int64, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	return out
}

// testSourceRuns: runs get increasing IDs, are listed newest first up to
// the limit, only the source's own, and a saved run reads back as saved.
func testSourceRuns(t *testing.T, ctx context.Context, s repository.Store) {
	a := mustCreateSource(t, ctx, s, sourceFixture("https://a.example/cal.ics"))
	b := mustCreateSource(t, ctx, s, sourceFixture("https://b.example/cal.ics"))
	var ofA []int64
	for i := range 5 {
		r := mustCreateRun(t, ctx, s, newRun(a.ID, i))
		if len(ofA) > 0 && r.ID <= ofA[len(ofA)-1] {
			t.Fatalf("run IDs not increasing: %d after %d", r.ID, ofA[len(ofA)-1])
		}
		ofA = append(ofA, r.ID)
		mustCreateRun(t, ctx, s, newRun(b.ID, i))
	}
	got, err := s.ListSourceRuns(ctx, a.ID, 3)
	if err != nil {
		t.Fatal(err)
	}
	checkIDs(t, "3 newest runs", []int64{ofA[4], ofA[3], ofA[2]}, runIDs(got))
	for _, r := range got {
		if r.SourceID != a.ID {
			t.Errorf("run %d of source %d listed for source %d", r.ID, r.SourceID, a.ID)
		}
	}
	all, err := s.ListSourceRuns(ctx, a.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkIDs(t, "every run (limit 0)", []int64{ofA[4], ofA[3], ofA[2], ofA[1], ofA[0]}, runIDs(all))
	if got, _ := s.ListSourceRuns(ctx, b.ID+100, 10); len(got) != 0 {
		t.Errorf("runs of a missing source: %d", len(got))
	}

	// A run finishes: saved as it is, read back the same.
	r := all[0]
	r.Status, r.Finished, r.Error = repository.RunFailed, r.Started.Add(90*time.Second), "the source answered HTTP 500"
	r.Created, r.Updated, r.Unchanged, r.Removed, r.Failed = 1, 2, 3, 4, 5
	r.Problems = []repository.RunProblem{{UID: "u1@example", Problem: "no start date"}, {Problem: "no UID"}}
	if err := s.SaveSourceRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	got, _ = s.ListSourceRuns(ctx, a.ID, 1)
	if len(got) != 1 {
		t.Fatalf("newest run: %d runs", len(got))
	}
	checkRun(t, "saved run", r, got[0])
	first := all[len(all)-1]
	want := newRun(a.ID, 0)
	want.ID = first.ID
	checkRun(t, "a run never saved", want, first)

	// A run that does not exist (or of a source that does not) is refused.
	if err := s.SaveSourceRun(ctx, &repository.SourceRun{ID: r.ID + 1000, SourceID: a.ID, Status: repository.RunSucceeded}); !errors.Is(err, repository.ErrNotFound) {
		t.Errorf("SaveSourceRun of a missing run: %v", err)
	}
	if err := s.CreateSourceRun(ctx, newRun(b.ID+100, 0)); !errors.Is(err, repository.ErrNotFound) {
		t.Errorf("CreateSourceRun of a missing source: %v", err)
	}
	if got, _ := s.ListSourceRuns(ctx, b.ID+100, 10); len(got) != 0 {
		t.Errorf("a refused run was stored: %d runs", len(got))
	}
}

// testSourcePrune: PruneSourceRuns keeps the newest runs of that source
// only.
func testSourcePrune(t *testing.T, ctx context.Context, s repository.Store) {
	a := mustCreateSource(t, ctx, s, sourceFixture("https://a.example/cal.ics"))
	b := mustCreateSource(t, ctx, s, sourceFixture("https://b.example/cal.ics"))
	var ofA, ofB []int64
	for i := range 6 {
		ofA = append(ofA, mustCreateRun(t, ctx, s, newRun(a.ID, i)).ID)
		ofB = append(ofB, mustCreateRun(t, ctx, s, newRun(b.ID, i)).ID)
	}
	list := func(id int64) []int64 {
		t.Helper()
		rs, err := s.ListSourceRuns(ctx, id, 0)
		if err != nil {
			t.Fatal(err)
		}
		return runIDs(rs)
	}
	for _, tc := range []struct {
		keep int
		want []int64
	}{
		{10, []int64{ofA[5], ofA[4], ofA[3], ofA[2], ofA[1], ofA[0]}}, // fewer than keep: none removed
		{6, []int64{ofA[5], ofA[4], ofA[3], ofA[2], ofA[1], ofA[0]}},
		{2, []int64{ofA[5], ofA[4]}},
		{2, []int64{ofA[5], ofA[4]}}, // again: nothing more
		{1, []int64{ofA[5]}},
		{0, nil},
	} {
		if err := s.PruneSourceRuns(ctx, a.ID, tc.keep); err != nil {
			t.Fatalf("PruneSourceRuns(keep %d): %v", tc.keep, err)
		}
		checkIDs(t, fmt.Sprintf("runs after keeping %d", tc.keep), tc.want, list(a.ID))
	}
	checkIDs(t, "the other source's runs", []int64{ofB[5], ofB[4], ofB[3], ofB[2], ofB[1], ofB[0]}, list(b.ID))
	if err := s.PruneSourceRuns(ctx, b.ID+100, 1); err != nil {
		t.Errorf("PruneSourceRuns of a missing source: %v", err)
	}
}

// importedEvent returns an event imported from source id as uid.
func importedEvent(slug string, id int64, uid, hash string) *repository.Record {
	p := minimalEvent(slug)
	p.Source = &repository.SourceLink{SourceID: id, UID: uid, Hash: hash}
	return p
}

// testSourceDelete: deleting a source removes it and its runs; the events
// it imported stay, with their link.
func testSourceDelete(t *testing.T, ctx context.Context, s repository.Store) {
	a := mustCreateSource(t, ctx, s, sourceFixture("https://a.example/cal.ics"))
	b := mustCreateSource(t, ctx, s, sourceFixture("https://b.example/cal.ics"))
	for i := range 3 {
		mustCreateRun(t, ctx, s, newRun(a.ID, i))
	}
	keptRun := mustCreateRun(t, ctx, s, newRun(b.ID, 0))
	ev := mustCreatePost(t, ctx, s, importedEvent("imported", a.ID, "u1@example", "h1"))
	if err := s.DeleteSource(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetSource(ctx, a.ID); !errors.Is(err, repository.ErrNotFound) {
		t.Errorf("GetSource of a deleted source: %v", err)
	}
	if runs, err := s.ListSourceRuns(ctx, a.ID, 0); err != nil || len(runs) != 0 {
		t.Errorf("runs of a deleted source: %d, %v", len(runs), err)
	}
	if runs, _ := s.ListSourceRuns(ctx, b.ID, 0); len(runs) != 1 || runs[0].ID != keptRun.ID {
		t.Errorf("the other source's runs: %v", runIDs(runs))
	}
	got := mustGetPost(t, ctx, s, ev.ID)
	if got.Source == nil || got.Source.SourceID != a.ID || got.Source.UID != "u1@example" {
		t.Errorf("the imported event's link after the delete: %+v", got.Source)
	}
	if items, err := s.SourceItems(ctx, a.ID); err != nil || len(items) != 1 || items[0].RecordID != ev.ID {
		t.Errorf("SourceItems of a deleted source = %+v, %v; want the event, still linked", items, err)
	}
	if list, _ := s.ListSources(ctx); len(list) != 1 || list[0].ID != b.ID {
		t.Errorf("ListSources after the delete: %d sources", len(list))
	}
	if err := s.DeleteSource(ctx, a.ID); !errors.Is(err, repository.ErrNotFound) {
		t.Errorf("second DeleteSource: %v", err)
	}
	if err := s.CreateSourceRun(ctx, newRun(a.ID, 9)); !errors.Is(err, repository.ErrNotFound) {
		t.Errorf("CreateSourceRun of a deleted source: %v", err)
	}
	// A new source never gets the deleted one's ID.
	c := mustCreateSource(t, ctx, s, sourceFixture("https://c.example/cal.ics"))
	if c.ID == a.ID || c.ID <= b.ID {
		t.Errorf("new source ID %d after %d and %d (deleted %d)", c.ID, a.ID, b.ID, a.ID)
	}
}

// testSourceItems: SourceItems returns the events of one source, of every
// status, by record ID, with their link's fields and status; records
// move between sources' results as UpdateRecord changes or clears their
// link, and a deleted record leaves.
func testSourceItems(t *testing.T, ctx context.Context, s repository.Store) {
	const a, b = 5, 6 // source IDs: the records only name them
	a1 := mustCreatePost(t, ctx, s, importedEvent("a1", a, "one@a", "h1"))
	plain := mustCreatePost(t, ctx, s, minimalEvent("plain"))
	a2 := importedEvent("a2", a, "two@a", "h2")
	a2.Status = repository.StatusTrash
	mustCreatePost(t, ctx, s, a2)
	b1 := mustCreatePost(t, ctx, s, importedEvent("b1", b, "one@b", "hb"))
	a3 := importedEvent("a3", a, "series@a", "h3")
	a3.Status, a3.Source.RecurrenceID = repository.StatusPublish, "20310316T190000"
	mustCreatePost(t, ctx, s, a3)
	mustCreatePost(t, ctx, s, venueFixture("Hall"))

	items := func(id int64) []repository.SourceItem {
		t.Helper()
		got, err := s.SourceItems(ctx, id)
		if err != nil {
			t.Fatalf("SourceItems(%d): %v", id, err)
		}
		return got
	}
	check := func(what string, want, got []repository.SourceItem) {
		t.Helper()
		if len(want) == 0 && len(got) == 0 {
			return
		}
		if !reflect.DeepEqual(want, got) {
			t.Errorf("%s:\ngot  %+v\nwant %+v", what, got, want)
		}
	}
	it := func(p *repository.Record, uid, rid, hash, status string) repository.SourceItem {
		return repository.SourceItem{RecordID: p.ID, UID: uid, RecurrenceID: rid, Hash: hash, Status: status}
	}
	check("source a", []repository.SourceItem{
		it(a1, "one@a", "", "h1", repository.StatusDraft),
		it(a2, "two@a", "", "h2", repository.StatusTrash),
		it(a3, "series@a", "20310316T190000", "h3", repository.StatusPublish),
	}, items(a))
	check("source b", []repository.SourceItem{it(b1, "one@b", "", "hb", repository.StatusDraft)}, items(b))
	check("a source with no events", nil, items(99))

	// a2 moves to source b (and is restored), a3 loses its link, a1 gets
	// a new hash and status.
	mustUpdatePost(t, ctx, s, a2.ID, func(p *repository.Record) {
		p.Source = &repository.SourceLink{SourceID: b, UID: "moved@b", Hash: "hm"}
		p.Status = repository.StatusDraft
	})
	mustUpdatePost(t, ctx, s, a3.ID, func(p *repository.Record) { p.Source = nil })
	mustUpdatePost(t, ctx, s, a1.ID, func(p *repository.Record) {
		p.Source.Hash, p.Status = "removed", repository.StatusPublish
	})
	mustUpdatePost(t, ctx, s, plain.ID, func(p *repository.Record) { p.Title["en"] = "still plain" })
	check("source a after the updates", []repository.SourceItem{
		it(a1, "one@a", "", "removed", repository.StatusPublish),
	}, items(a))
	check("source b after the updates", []repository.SourceItem{
		it(a2, "moved@b", "", "hm", repository.StatusDraft),
		it(b1, "one@b", "", "hb", repository.StatusDraft),
	}, items(b))

	// A link given to a plain event later counts too.
	mustUpdatePost(t, ctx, s, plain.ID, func(p *repository.Record) {
		p.Source = &repository.SourceLink{SourceID: a, UID: "late@a", Hash: "hl"}
	})
	if err := s.DeleteRecord(ctx, a1.ID); err != nil {
		t.Fatal(err)
	}
	check("source a after a delete", []repository.SourceItem{it(plain, "late@a", "", "hl", repository.StatusDraft)}, items(a))
}

// testSourceLinkRoundTrip: Record.Source is kept by CreateRecord and
// UpdateRecord and read back by GetRecord, GetRecords and FindRecords;
// an event without one reads back without one.
func testSourceLinkRoundTrip(t *testing.T, ctx context.Context, s repository.Store) {
	p := eventFixture("Imported concert")
	p.Source = &repository.SourceLink{SourceID: 3, UID: "abc-123@calendar.example", RecurrenceID: "20310316T193005Z", Hash: "sha256:00ff"}
	mustCreatePost(t, ctx, s, p)
	checkPost(t, "GetRecord", p, mustGetPost(t, ctx, s, p.ID))
	plain := mustCreatePost(t, ctx, s, eventFixture("Made here"))
	if got := mustGetPost(t, ctx, s, plain.ID); got.Source != nil {
		t.Errorf("an event made here reads back with a source link %+v", got.Source)
	}
	up := mustUpdatePost(t, ctx, s, p.ID, func(r *repository.Record) {
		r.Source = &repository.SourceLink{SourceID: 3, UID: "abc-123@calendar.example", Hash: "sha256:11ee"}
	})
	if up.Source == nil || up.Source.Hash != "sha256:11ee" || up.Source.RecurrenceID != "" {
		t.Errorf("UpdateRecord returned link %+v", up.Source)
	}
	checkPost(t, "GetRecord after update", up, mustGetPost(t, ctx, s, p.ID))
	many, err := s.GetRecords(ctx, []int64{p.ID, plain.ID})
	if err != nil {
		t.Fatal(err)
	}
	checkPost(t, "GetRecords", up, many[p.ID])
	found, err := s.FindRecords(ctx, repository.RecordQuery{Kind: repository.KindEvent})
	if err != nil || len(found) != 2 {
		t.Fatalf("FindRecords = %d, %v", len(found), err)
	}
	checkPost(t, "FindRecords", up, found[0])
	if found[1].Source != nil {
		t.Errorf("FindRecords: the event made here has a link %+v", found[1].Source)
	}
}
