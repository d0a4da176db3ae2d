package storetest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/calendar/eventcal/repository"
)

// portableTests cover what a portable export and load need of a store
// (repository.PortableStore and the creates that keep IDs and
// revisions): the sequences count every ID handed out, deleted ones
// included; a raise never lowers them and later draws come after it; an
// unknown sequence or a value out of range changes nothing; webhooks,
// sources and runs take explicit IDs as records do; an explicit create
// keeps its revision; a token hash or a user ID already stored is
// refused.
var portableTests = []storeTest{
	{"SequencesCountDeleted", testSequencesCountDeleted},
	{"RaiseNeverLowers", testRaiseNeverLowers},
	{"DrawsComeAfterRaise", testDrawsAfterRaise},
	{"RaiseRefusesBadInput", testRaiseRefusesBadInput},
	{"ExplicitWebhookIDs", testExplicitWebhookIDs},
	{"ExplicitSourceIDs", testExplicitSourceIDs},
	{"ExplicitRunIDs", testExplicitRunIDs},
	{"RevisionKept", testRevisionKept},
	{"WebhookIDsNeverReused", testWebhookIDsNeverReused},
	{"TakenTokenAndUser", testTakenTokenAndUser},
}

// sequences returns s.Sequences, failing the test unless it names every
// sequence of repository.SequenceNames and nothing else.
func sequences(t *testing.T, ctx context.Context, s repository.Store) map[string]int64 {
	t.Helper()
	got, err := s.Sequences(ctx)
	if err != nil {
		t.Fatalf("Sequences: %v", err)
	}
	if len(got) != len(repository.SequenceNames) {
		t.Errorf("Sequences = %v; want exactly the names %v", got, repository.SequenceNames)
	}
	for _, name := range repository.SequenceNames {
		if _, ok := got[name]; !ok {
			t.Errorf("Sequences = %v: %s missing", got, name)
		}
	}
	return got
}

// checkSequences fails the test unless the store's sequences are want.
func checkSequences(t *testing.T, ctx context.Context, s repository.Store, what string, want map[string]int64) {
	t.Helper()
	if got := sequences(t, ctx, s); !maps.Equal(got, want) {
		t.Errorf("%s: Sequences = %v; want %v", what, got, want)
	}
}

// oneOfEach draws one ID from every sequence (a record, a label, a user,
// a webhook, a source and a run of it) and returns them by sequence name.
func oneOfEach(t *testing.T, ctx context.Context, s repository.Store, tag string) map[string]int64 {
	t.Helper()
	p := mustCreatePost(t, ctx, s, minimalEvent("each-"+tag))
	l := mustCreateTerm(t, ctx, s, termFixture(repository.LabelTag, "Each "+tag, 0))
	u := &repository.User{Login: "each-" + tag, Role: repository.RoleAuthor, Created: baseTime}
	if err := s.CreateUser(ctx, u); err != nil {
		t.Fatalf("CreateUser: %v", err)
	}
	w := newWebhook(t, ctx, s, "https://each.example/"+tag)
	src := mustCreateSource(t, ctx, s, sourceFixture("https://each.example/"+tag+".ics"))
	r := &repository.SourceRun{SourceID: src.ID, Status: repository.RunRunning, Trigger: "cli", Started: baseTime}
	if err := s.CreateSourceRun(ctx, r); err != nil {
		t.Fatalf("CreateSourceRun: %v", err)
	}
	return map[string]int64{
		repository.SeqRecords: p.ID, repository.SeqLabels: l.ID, repository.SeqUsers: u.ID,
		repository.SeqWebhooks: w.ID, repository.SeqSources: src.ID, repository.SeqSourceRuns: r.ID,
	}
}

// testSequencesCountDeleted: a new store's sequences are all 0; after
// creates each is the largest ID drawn, and deleting the newest item of
// every kind (users are never deleted) lowers none.
func testSequencesCountDeleted(t *testing.T, ctx context.Context, s repository.Store) {
	zero := map[string]int64{}
	for _, name := range repository.SequenceNames {
		zero[name] = 0
	}
	checkSequences(t, ctx, s, "a new store", zero)
	oneOfEach(t, ctx, s, "a")
	last := oneOfEach(t, ctx, s, "b")
	checkSequences(t, ctx, s, "after the creates", last)

	if err := s.DeleteRecord(ctx, last[repository.SeqRecords]); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteLabel(ctx, last[repository.SeqLabels]); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteWebhook(ctx, last[repository.SeqWebhooks]); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteSource(ctx, last[repository.SeqSources]); err != nil { // and its run
		t.Fatal(err)
	}
	if runs, err := s.ListSourceRuns(ctx, last[repository.SeqSources], 0); err != nil || len(runs) != 0 {
		t.Fatalf("runs of the deleted source: %v, %v", runs, err)
	}
	checkSequences(t, ctx, s, "after deleting the newest of each", last)
}

// testRaiseNeverLowers: a raise moves the sequences named up, leaves the
// others alone; a raise to a lower value, or to 0, changes nothing.
func testRaiseNeverLowers(t *testing.T, ctx context.Context, s repository.Store) {
	base := oneOfEach(t, ctx, s, "a")
	raised := maps.Clone(base)
	raised[repository.SeqRecords] = 5000
	raised[repository.SeqWebhooks] = 70
	raised[repository.SeqSourceRuns] = 900
	if err := s.RaiseSequences(ctx, map[string]int64{
		repository.SeqRecords: 5000, repository.SeqWebhooks: 70, repository.SeqSourceRuns: 900,
	}); err != nil {
		t.Fatalf("RaiseSequences: %v", err)
	}
	checkSequences(t, ctx, s, "after a raise", raised)

	lower := map[string]int64{}
	for _, name := range repository.SequenceNames {
		lower[name] = 0
	}
	lower[repository.SeqRecords] = 10
	lower[repository.SeqWebhooks] = 69
	lower[repository.SeqLabels] = 1
	if err := s.RaiseSequences(ctx, lower); err != nil {
		t.Fatalf("RaiseSequences(lower): %v", err)
	}
	checkSequences(t, ctx, s, "after a raise to lower values and zeros", raised)
	if err := s.RaiseSequences(ctx, nil); err != nil {
		t.Fatalf("RaiseSequences(nil): %v", err)
	}
	checkSequences(t, ctx, s, "after an empty raise", raised)
}

// testDrawsAfterRaise: after a raise every sequence's next draw is above
// the value raised to, and the sequences read that draw.
func testDrawsAfterRaise(t *testing.T, ctx context.Context, s repository.Store) {
	oneOfEach(t, ctx, s, "before")
	to := map[string]int64{
		repository.SeqRecords: 812, repository.SeqLabels: 40, repository.SeqUsers: 12,
		repository.SeqWebhooks: 9, repository.SeqSources: 15, repository.SeqSourceRuns: 3000,
	}
	if err := s.RaiseSequences(ctx, to); err != nil {
		t.Fatalf("RaiseSequences: %v", err)
	}
	checkSequences(t, ctx, s, "after the raise", to)
	got := oneOfEach(t, ctx, s, "after")
	for _, name := range repository.SequenceNames {
		if got[name] <= to[name] {
			t.Errorf("sequence %s raised to %d: the next draw got ID %d; want a larger one", name, to[name], got[name])
		}
	}
	checkSequences(t, ctx, s, "after the draws", got)
}

// testRaiseRefusesBadInput: an unknown name (ErrUnknownSequence) or a
// value out of range (ErrIDRange) refuses the whole raise, the valid
// names in it included.
func testRaiseRefusesBadInput(t *testing.T, ctx context.Context, s repository.Store) {
	base := oneOfEach(t, ctx, s, "a")
	for _, tc := range []struct {
		name   string
		values map[string]int64
		want   error
	}{
		{"unknown name", map[string]int64{repository.SeqRecords: 500, "posts": 9}, repository.ErrUnknownSequence},
		{"empty name", map[string]int64{"": 1, repository.SeqLabels: 500}, repository.ErrUnknownSequence},
		{"case differs", map[string]int64{"Records": 500}, repository.ErrUnknownSequence},
		{"negative", map[string]int64{repository.SeqUsers: 500, repository.SeqSources: -1}, repository.ErrIDRange},
		{"above MaxID", map[string]int64{repository.SeqWebhooks: repository.MaxID + 1, repository.SeqRecords: 500}, repository.ErrIDRange},
		{"largest int64", map[string]int64{repository.SeqSourceRuns: 1<<63 - 1}, repository.ErrIDRange},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := s.RaiseSequences(ctx, tc.values)
			if !errors.Is(err, tc.want) {
				t.Fatalf("RaiseSequences(%v): error %v, want %v", tc.values, err, tc.want)
			}
			checkSequences(t, ctx, s, "after the refused raise", base)
		})
	}
	// MaxID itself is a value a store's sequence may hold.
	if err := s.RaiseSequences(ctx, map[string]int64{repository.SeqSourceRuns: repository.MaxID}); err != nil {
		t.Fatalf("RaiseSequences(MaxID): %v", err)
	}
	base[repository.SeqSourceRuns] = repository.MaxID
	checkSequences(t, ctx, s, "after a raise to MaxID", base)
}

// testExplicitWebhookIDs: an endpoint created with an explicit ID keeps
// it, secret included, and moves the sequence past it; a taken ID is
// refused with ErrDuplicate (the stored endpoint unchanged), one out of
// range with ErrIDRange, and nothing is written either way.
func testExplicitWebhookIDs(t *testing.T, ctx context.Context, s repository.Store) {
	first := newWebhook(t, ctx, s, "https://first.example/hook")
	w := &repository.Webhook{ID: first.ID + 40, URL: "https://kept.example/hook", Description: "loaded",
		Events: []string{"event.updated"}, Secret: "whsec_a2VwdA==", Active: true, Created: baseTime, Updated: baseTime}
	if err := s.CreateWebhook(ctx, w); err != nil {
		t.Fatalf("CreateWebhook(ID %d): %v", first.ID+40, err)
	}
	if w.ID != first.ID+40 {
		t.Fatalf("CreateWebhook with ID %d stored ID %d", first.ID+40, w.ID)
	}
	got, err := s.GetWebhook(ctx, w.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.URL != w.URL || got.Secret != w.Secret || got.Description != "loaded" {
		t.Errorf("GetWebhook(%d) = %+v; want %+v", w.ID, got, w)
	}
	if seq := sequences(t, ctx, s)[repository.SeqWebhooks]; seq != w.ID {
		t.Errorf("webhook sequence after explicit ID %d = %d", w.ID, seq)
	}

	for _, tc := range []struct {
		name string
		id   int64
		want error
	}{
		{"taken by the explicit one", w.ID, repository.ErrDuplicate},
		{"taken by a drawn one", first.ID, repository.ErrDuplicate},
		{"above MaxExplicitID", repository.MaxExplicitID + 1, repository.ErrIDRange},
		{"negative", -3, repository.ErrIDRange},
	} {
		dup := &repository.Webhook{ID: tc.id, URL: "https://dup.example/hook", Events: []string{"*"}, Secret: "whsec_ZHVw",
			Active: true, Created: baseTime, Updated: baseTime}
		if err := s.CreateWebhook(ctx, dup); !errors.Is(err, tc.want) {
			t.Errorf("CreateWebhook(ID %d, %s): error %v, want %v", tc.id, tc.name, err, tc.want)
		}
	}
	list, err := s.ListWebhooks(ctx)
	if err != nil || len(list) != 2 || list[0].URL != first.URL || list[1].URL != w.URL || list[1].Secret != w.Secret {
		t.Errorf("ListWebhooks after the refused creates = %s, %v; want the two stored, unchanged", dump(list), err)
	}
	next := newWebhook(t, ctx, s, "https://next.example/hook")
	if next.ID <= w.ID {
		t.Errorf("after explicit webhook ID %d the next endpoint got ID %d; want a larger one", w.ID, next.ID)
	}
}

// testExplicitSourceIDs: as testExplicitWebhookIDs, for sources.
func testExplicitSourceIDs(t *testing.T, ctx context.Context, s repository.Store) {
	first := mustCreateSource(t, ctx, s, sourceFixture("https://first.example/a.ics"))
	src := sourceFixture("https://kept.example/b.ics")
	src.ID = first.ID + 25
	want := *src
	mustCreateSource(t, ctx, s, src)
	if src.ID != want.ID {
		t.Fatalf("CreateSource with ID %d stored ID %d", want.ID, src.ID)
	}
	got, err := s.GetSource(ctx, src.ID)
	if err != nil {
		t.Fatal(err)
	}
	want.Revision = got.Revision
	checkSource(t, "GetSource(explicit ID)", &want, got)
	if seq := sequences(t, ctx, s)[repository.SeqSources]; seq != src.ID {
		t.Errorf("source sequence after explicit ID %d = %d", src.ID, seq)
	}
	for _, tc := range []struct {
		id   int64
		want error
	}{
		{src.ID, repository.ErrDuplicate},
		{first.ID, repository.ErrDuplicate},
		{repository.MaxExplicitID + 1, repository.ErrIDRange},
		{-1, repository.ErrIDRange},
	} {
		dup := sourceFixture("https://dup.example/c.ics")
		dup.ID = tc.id
		if err := s.CreateSource(ctx, dup); !errors.Is(err, tc.want) {
			t.Errorf("CreateSource(ID %d): error %v, want %v", tc.id, err, tc.want)
		}
	}
	list, err := s.ListSources(ctx)
	if err != nil || len(list) != 2 || list[0].URL != first.URL || list[1].URL != src.URL {
		t.Errorf("ListSources after the refused creates = %s, %v; want the two stored, unchanged", dump(list), err)
	}
	next := mustCreateSource(t, ctx, s, sourceFixture("https://next.example/d.ics"))
	if next.ID <= src.ID {
		t.Errorf("after explicit source ID %d the next source got ID %d; want a larger one", src.ID, next.ID)
	}
}

// testExplicitRunIDs: as testExplicitWebhookIDs, for the runs of a
// source; a run with an explicit ID of a source that does not exist is
// refused with ErrNotFound.
func testExplicitRunIDs(t *testing.T, ctx context.Context, s repository.Store) {
	src := mustCreateSource(t, ctx, s, sourceFixture("https://runs.example/a.ics"))
	newRun := func(id int64, source int64) *repository.SourceRun {
		return &repository.SourceRun{ID: id, SourceID: source, Status: repository.RunSucceeded, Trigger: "schedule",
			Started: baseTime, Finished: baseTime.Add(time.Minute), Created: 3, Unchanged: 1,
			Problems: []repository.RunProblem{{UID: "x@feed", Problem: "no start"}}}
	}
	first := newRun(0, src.ID)
	if err := s.CreateSourceRun(ctx, first); err != nil {
		t.Fatal(err)
	}
	r := newRun(first.ID+300, src.ID)
	want := *r
	if err := s.CreateSourceRun(ctx, r); err != nil {
		t.Fatalf("CreateSourceRun(ID %d): %v", want.ID, err)
	}
	if r.ID != want.ID {
		t.Fatalf("CreateSourceRun with ID %d stored ID %d", want.ID, r.ID)
	}
	runs, err := s.ListSourceRuns(ctx, src.ID, 0)
	if err != nil || len(runs) != 2 {
		t.Fatalf("ListSourceRuns = %v, %v", runs, err)
	}
	checkRun(t, "the run with an explicit ID", &want, runs[0])
	if seq := sequences(t, ctx, s)[repository.SeqSourceRuns]; seq != r.ID {
		t.Errorf("run sequence after explicit ID %d = %d", r.ID, seq)
	}
	for _, tc := range []struct {
		name   string
		id     int64
		source int64
		want   error
	}{
		{"taken", r.ID, src.ID, repository.ErrDuplicate},
		{"taken by a drawn one", first.ID, src.ID, repository.ErrDuplicate},
		{"above MaxExplicitID", repository.MaxExplicitID + 1, src.ID, repository.ErrIDRange},
		{"negative", -7, src.ID, repository.ErrIDRange},
		{"unknown source", r.ID + 1, src.ID + 99, repository.ErrNotFound},
	} {
		if err := s.CreateSourceRun(ctx, newRun(tc.id, tc.source)); !errors.Is(err, tc.want) {
			t.Errorf("CreateSourceRun(%s, ID %d): error %v, want %v", tc.name, tc.id, err, tc.want)
		}
	}
	runs, err = s.ListSourceRuns(ctx, src.ID, 0)
	if err != nil || len(runs) != 2 {
		t.Fatalf("ListSourceRuns after the refused creates = %s, %v; want the two stored", dump(runs), err)
	}
	checkRun(t, "the run with an explicit ID after the refused creates", &want, runs[0])
	checkRun(t, "the drawn run after the refused creates", first, runs[1])
	next := newRun(0, src.ID)
	if err := s.CreateSourceRun(ctx, next); err != nil {
		t.Fatal(err)
	}
	if next.ID <= r.ID {
		t.Errorf("after explicit run ID %d the next run got ID %d; want a larger one", r.ID, next.ID)
	}
}

// testRevisionKept: a create with an explicit ID and a revision above 0
// keeps that revision (records, labels, webhooks, sources), and the next
// update counts on from it; without an explicit ID, or with revision 0,
// the item starts at revision 1.
func testRevisionKept(t *testing.T, ctx context.Context, s repository.Store) {
	type item struct {
		create func(id, rev int64) (int64, error) // returns the revision the create reported
		get    func(id int64) (int64, error)
		update func(id int64) (int64, error)
	}
	items := map[string]item{
		"record": {
			create: func(id, rev int64) (int64, error) {
				p := minimalEvent(fmt.Sprintf("rev-%d-%d", id, rev))
				p.ID, p.Revision = id, rev
				err := s.CreateRecord(ctx, p)
				return p.Revision, err
			},
			get: func(id int64) (int64, error) {
				p, err := s.GetRecord(ctx, id)
				if err != nil {
					return 0, err
				}
				return p.Revision, nil
			},
			update: func(id int64) (int64, error) {
				p, err := s.UpdateRecord(ctx, id, func(p *repository.Record) error { p.Title.Set("en", "changed"); return nil })
				if err != nil {
					return 0, err
				}
				return p.Revision, nil
			},
		},
		"label": {
			create: func(id, rev int64) (int64, error) {
				l := termFixture(repository.LabelCategory, fmt.Sprintf("Rev %d %d", id, rev), 0)
				l.ID, l.Revision = id, rev
				err := s.CreateLabel(ctx, l)
				return l.Revision, err
			},
			get: func(id int64) (int64, error) {
				l, err := s.GetLabel(ctx, id)
				if err != nil {
					return 0, err
				}
				return l.Revision, nil
			},
			update: func(id int64) (int64, error) {
				l, err := s.UpdateLabel(ctx, id, func(l *repository.Label) error { l.Name.Set("en", fmt.Sprintf("Changed %d", id)); return nil })
				if err != nil {
					return 0, err
				}
				return l.Revision, nil
			},
		},
		"webhook": {
			create: func(id, rev int64) (int64, error) {
				w := &repository.Webhook{ID: id, Revision: rev, URL: "https://rev.example/hook", Events: []string{"*"},
					Secret: "whsec_cmV2", Active: true, Created: baseTime, Updated: baseTime}
				err := s.CreateWebhook(ctx, w)
				return w.Revision, err
			},
			get: func(id int64) (int64, error) {
				w, err := s.GetWebhook(ctx, id)
				if err != nil {
					return 0, err
				}
				return w.Revision, nil
			},
			update: func(id int64) (int64, error) {
				w, err := s.UpdateWebhook(ctx, id, func(w *repository.Webhook) error { w.Description = "changed"; return nil })
				if err != nil {
					return 0, err
				}
				return w.Revision, nil
			},
		},
		"source": {
			create: func(id, rev int64) (int64, error) {
				src := sourceFixture("https://rev.example/feed.ics")
				src.ID, src.Revision = id, rev
				err := s.CreateSource(ctx, src)
				return src.Revision, err
			},
			get: func(id int64) (int64, error) {
				src, err := s.GetSource(ctx, id)
				if err != nil {
					return 0, err
				}
				return src.Revision, nil
			},
			update: func(id int64) (int64, error) {
				src, err := s.UpdateSource(ctx, id, func(src *repository.Source) error { src.Name = "changed"; return nil })
				if err != nil {
					return 0, err
				}
				return src.Revision, nil
			},
		},
	}
	for _, kind := range []string{"record", "label", "webhook", "source"} {
		it := items[kind]
		t.Run(kind, func(t *testing.T) {
			for _, tc := range []struct {
				name    string
				id, rev int64
				want    int64
			}{
				{"explicit ID, revision kept", 501, 7, 7},
				{"explicit ID, revision 0", 502, 0, 1},
				{"explicit ID, negative revision", 503, -4, 1},
				{"drawn ID, revision ignored", 0, 9, 1},
			} {
				reported, err := it.create(tc.id, tc.rev)
				if err != nil {
					t.Fatalf("%s: create: %v", tc.name, err)
				}
				if reported != tc.want {
					t.Errorf("%s: the create reported revision %d, want %d", tc.name, reported, tc.want)
				}
				id := tc.id
				if id == 0 {
					continue // the drawn ID is not known here; the report is checked
				}
				if got, err := it.get(id); err != nil || got != tc.want {
					t.Errorf("%s: stored revision %d, %v; want %d", tc.name, got, err, tc.want)
				}
				if got, err := it.update(id); err != nil || got != tc.want+1 {
					t.Errorf("%s: revision after an update %d, %v; want %d", tc.name, got, err, tc.want+1)
				}
				if got, err := it.get(id); err != nil || got != tc.want+1 {
					t.Errorf("%s: stored revision after an update %d, %v; want %d", tc.name, got, err, tc.want+1)
				}
			}
		})
	}
}

// testWebhookIDsNeverReused: deleting the newest endpoint does not give
// its ID to the next one.
func testWebhookIDsNeverReused(t *testing.T, ctx context.Context, s repository.Store) {
	newWebhook(t, ctx, s, "https://a.example/hook")
	b := newWebhook(t, ctx, s, "https://b.example/hook")
	if err := s.DeleteWebhook(ctx, b.ID); err != nil {
		t.Fatal(err)
	}
	c := newWebhook(t, ctx, s, "https://c.example/hook")
	if c.ID <= b.ID {
		t.Errorf("after deleting endpoint %d the next one got ID %d; want a larger one", b.ID, c.ID)
	}
}

// testTakenTokenAndUser: a token whose hash is stored is refused with
// ErrDuplicate, also when it is the very same token, and the stored one
// stays as it was; a token of an unknown user is ErrNotFound. A user
// created with an explicit ID a stored user holds is ErrDuplicate, also
// when it is the very same user; one out of range is ErrIDRange, and
// neither moves the user sequence.
func testTakenTokenAndUser(t *testing.T, ctx context.Context, s repository.Store) {
	a := &repository.User{ID: 30, Login: "a", Role: repository.RoleAdmin, Created: baseTime, Email: "a@example.org"}
	b := &repository.User{Login: "b", Role: repository.RoleAuthor, Created: baseTime}
	for _, u := range []*repository.User{a, b} {
		if err := s.CreateUser(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	if a.ID != 30 || b.ID <= 30 {
		t.Fatalf("user IDs %d, %d; want 30 and a larger one", a.ID, b.ID)
	}
	tok := &repository.Token{Hash: repository.HashToken("secret"), UserID: a.ID, Name: "laptop", Created: baseTime,
		LastUsed: baseTime.Add(time.Hour), Expires: baseTime.Add(48 * time.Hour)}
	if err := s.CreateToken(ctx, tok); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		tok  repository.Token
		want error
	}{
		{"the same token", *tok, repository.ErrDuplicate},
		{"the hash for another user", repository.Token{Hash: tok.Hash, UserID: b.ID, Name: "ci", Created: baseTime}, repository.ErrDuplicate},
		{"an unknown user", repository.Token{Hash: repository.HashToken("other"), UserID: 9999, Created: baseTime}, repository.ErrNotFound},
	} {
		c := tc.tok
		if err := s.CreateToken(ctx, &c); !errors.Is(err, tc.want) {
			t.Errorf("CreateToken(%s): error %v, want %v", tc.name, err, tc.want)
		}
	}
	got, err := s.TokenByHash(ctx, tok.Hash)
	if err != nil {
		t.Fatal(err)
	}
	if got.UserID != a.ID || got.Name != "laptop" || !normTime(got.Expires).Equal(normTime(tok.Expires)) {
		t.Errorf("the stored token after the refused creates = %+v; want %+v", got, tok)
	}
	if all, err := s.ListTokens(ctx, 0); err != nil || len(all) != 1 {
		t.Errorf("ListTokens after the refused creates = %d tokens, %v; want 1", len(all), err)
	}

	for _, tc := range []struct {
		name string
		u    repository.User
	}{
		{"the same user", *a},
		{"another login", repository.User{ID: a.ID, Login: "someone-else", Role: repository.RoleEditor, Created: baseTime}},
	} {
		c := tc.u
		if err := s.CreateUser(ctx, &c); !errors.Is(err, repository.ErrDuplicate) {
			t.Errorf("CreateUser(%s, ID %d): error %v, want ErrDuplicate", tc.name, tc.u.ID, err)
		}
	}
	if got, err := s.GetUser(ctx, a.ID); err != nil {
		t.Fatal(err)
	} else {
		checkUser(t, "the user after the refused creates", a, got)
	}
	for _, id := range []int64{repository.MaxExplicitID + 1, -3} {
		u := repository.User{ID: id, Login: fmt.Sprintf("out-of-range-%d", id), Role: repository.RoleAuthor, Created: baseTime}
		if err := s.CreateUser(ctx, &u); !errors.Is(err, repository.ErrIDRange) {
			t.Errorf("CreateUser(ID %d): error %v, want ErrIDRange", id, err)
		}
	}
	if users, err := s.ListUsers(ctx); err != nil || len(users) != 2 {
		t.Errorf("ListUsers after the refused creates = %d users, %v; want 2", len(users), err)
	}
	if seq := sequences(t, ctx, s)[repository.SeqUsers]; seq != b.ID {
		t.Errorf("user sequence after the refused creates = %d; want %d", seq, b.ID)
	}
}
