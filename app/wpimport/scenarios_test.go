package wpimport_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/calendar/eventcal/app/wpimport"
	"github.com/calendar/eventcal/app/wpimport/replay"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/repository/mongo"
	"github.com/calendar/eventcal/repository/mongo/mongotest"
)

// cancelAfterWrites cancels a context after n writes reach the store:
// an import killed mid-way.
type cancelAfterWrites struct {
	repository.Store
	n      int64
	writes atomic.Int64
	cancel context.CancelFunc
}

func (c *cancelAfterWrites) count() {
	if c.writes.Add(1) == c.n {
		c.cancel()
	}
}

func (c *cancelAfterWrites) CreateRecord(ctx context.Context, p *repository.Record) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	defer c.count()
	return c.Store.CreateRecord(ctx, p)
}

func (c *cancelAfterWrites) CreateLabel(ctx context.Context, t *repository.Label) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	defer c.count()
	return c.Store.CreateLabel(ctx, t)
}

// importScenarios runs the scenarios every store must pass: the full
// import field by field, a second run that changes nothing, a run with
// changes at the source (an edit, a new record, a deleted one, then
// --prune).
func importScenarios(t *testing.T, open func(t *testing.T) repository.Store) {
	src := replay.New(t)
	s := open(t)
	var logs bytes.Buffer
	rep := runImport(t, s, options(src, &logs))
	checkFullImport(t, src, s, rep)
	// Lists, WordPress's ID list and the two hidden events: no event is
	// read one by one to find out whether it is password-protected.
	var singles []string
	for _, rq := range src.Requests() {
		if strings.Contains(rq, replay.Namespace+"/events/") {
			singles = append(singles, rq)
		}
	}
	if len(singles) != 2 {
		t.Errorf("single event reads: %q; want only the two hidden events", singles)
	}
	var summary bytes.Buffer
	rep.Print(&summary)
	t.Logf("first import:\n%s", summary.String())
	full := dumpStore(t, s)

	t.Run("second run changes nothing", func(t *testing.T) {
		rep := runImport(t, s, options(src, nil))
		if rep.Changes() != 0 || rep.Failed() {
			t.Fatalf("second run: %d changes, failed %v", rep.Changes(), rep.Failed())
		}
		if kr := rep.Kind(wpimport.KindEvent); kr.Unchanged != 179 {
			t.Errorf("second run: %d events unchanged, want 179", kr.Unchanged)
		}
		var out bytes.Buffer
		rep.Print(&out)
		if !strings.Contains(out.String(), "Nothing changed") {
			t.Errorf("summary does not say nothing changed:\n%s", out.String())
		}
		if got := dumpStore(t, s); got != full {
			t.Error("the second run changed the store")
		}
	})

	t.Run("killed mid-way and resumed", func(t *testing.T) {
		s2 := open(t)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		cut := &cancelAfterWrites{Store: s2, n: 60, cancel: cancel}
		if _, err := wpimport.Run(ctx, cut, options(src, nil)); !errors.Is(err, context.Canceled) {
			t.Fatalf("interrupted import: error %v, want context.Canceled", err)
		}
		runImport(t, s2, options(src, nil))
		if got := dumpStore(t, s2); got != full {
			t.Error("the resumed import differs from an uninterrupted one")
		}
	})

	t.Run("changes at the source", func(t *testing.T) {
		// 351 edited, venue 308 edited, a new event 9001, 357 deleted.
		for _, page := range eventFiles[:4] {
			src.Replace(t, page, func(body map[string]any) {
				var keep []any
				for _, it := range body["events"].([]any) {
					e := it.(map[string]any)
					switch e["id"].(float64) {
					case 351:
						c := map[string]any{}
						b, _ := json.Marshal(e)
						_ = json.Unmarshal(b, &c)
						c["id"], c["slug"], c["title"] = 9001.0, "fx-brand-new", "FX Brand New"
						keep = append(keep, c)
						e["title"] = "FX Retitled &amp; moved"
						e["modified_utc"] = "2026-11-26 09:00:00"
						e["start_date"], e["utc_start_date"] = "2027-02-20 19:00:00", "2027-02-20 19:00:00"
					case 357:
						continue
					}
					keep = append(keep, e)
				}
				body["events"] = keep
			})
		}
		src.Remove("events-single-357-dup2")
		src.Replace(t, venueFiles[0], func(body map[string]any) {
			for _, it := range body["venues"].([]any) {
				if v := it.(map[string]any); v["id"].(float64) == 308 {
					v["city"] = "Amsterdam-Centrum"
				}
			}
		})
		rep := runImport(t, s, options(src, nil))
		ev, ve := rep.Kind(wpimport.KindEvent), rep.Kind(wpimport.KindVenue)
		if ev.Updated != 1 || ev.Created != 1 || ev.Unchanged != 177 || !slices.Equal(ev.Disappeared, []int64{357}) || ev.Deleted != 0 {
			t.Errorf("events: %+v; want 1 updated, 1 created, 177 unchanged, 357 disappeared and kept", ev)
		}
		if ve.Updated != 1 || ve.Unchanged != 18 {
			t.Errorf("venues: %+v; want 1 updated, 18 unchanged", ve)
		}
		p, err := s.GetRecord(t.Context(), 351)
		if err != nil || p.Title["en"] != "FX Retitled & moved" || p.Event.StartLocal != "2027-02-20 19:00:00" {
			t.Errorf("event 351 after the change = %+v, %v", p, err)
		}
		if _, err := s.GetRecord(t.Context(), 357); err != nil {
			t.Errorf("357 was deleted without --prune: %v", err)
		}
		if p, err := s.GetRecord(t.Context(), 9001); err != nil || p.Slug["en"] != "fx-brand-new" {
			t.Errorf("new event 9001 = %+v, %v", p, err)
		}
		// A new post after the import gets an ID past every imported one.
		next := &repository.Record{Kind: repository.KindOrganizer, Status: "publish", Title: repository.Text{"en": "Local"},
			Slug: repository.Text{"en": "local"}, Organizer: &repository.OrganizerFields{}}
		if err := s.CreateRecord(t.Context(), next); err != nil || next.ID <= 9001 {
			t.Errorf("a post created after the import got ID %d (%v); want one past 9001", next.ID, err)
		}
		if err := s.DeleteRecord(t.Context(), next.ID); err != nil {
			t.Fatal(err)
		}

		opts := options(src, nil)
		opts.Prune = true
		rep = runImport(t, s, opts)
		if ev := rep.Kind(wpimport.KindEvent); ev.Deleted != 1 || ev.Changes() != 1 {
			t.Errorf("prune: %+v; want 357 deleted and nothing else", ev)
		}
		if _, err := s.GetRecord(t.Context(), 357); !errors.Is(err, repository.ErrNotFound) {
			t.Errorf("357 after --prune: %v, want not found", err)
		}
	})
}

func TestImportSQLite(t *testing.T) {
	t.Parallel() // the package's three longest tests: in parallel they fill both cores
	importScenarios(t, openSQLite)
}

func TestImportMongo(t *testing.T) {
	t.Parallel() // the package's three longest tests: in parallel they fill both cores
	uri, dir := mongotest.StartFiles(t)
	importScenarios(t, func(t *testing.T) repository.Store {
		db := mongotest.Database(t)
		s, err := mongo.Open(t.Context(), uri, db)
		if err != nil {
			t.Fatal(err)
		}
		// The store's look-ups by _id use an index, as on MongoDB (an
		// embedded FerretDB scans the collection for each without it),
		// in every collection the store made: its background index
		// build (WaitIndexes) makes most of them.
		if err := s.WaitIndexes(t.Context()); err != nil {
			t.Fatal(err)
		}
		mongotest.IndexIDs(t, dir, db)
		t.Cleanup(func() { s.Close(context.Background()) })
		return s
	})
}

// TestInterruptedImportResumes kills imports at several points (the
// source cut after N responses; the context cancelled after N writes),
// starts them again and compares the store with an uninterrupted import.
func TestInterruptedImportResumes(t *testing.T) {
	t.Parallel() // the package's three longest tests: in parallel they fill both cores
	src := replay.New(t)
	ref := openSQLite(t)
	runImport(t, ref, options(src, nil))
	want := dumpStore(t, ref)

	for _, n := range []int{1, 4, 12} {
		t.Run(fmt.Sprintf("source cut after %d responses", n), func(t *testing.T) {
			s := openSQLite(t)
			src.CutAfter(n)
			opts := options(src, nil)
			opts.Retries = 2
			if _, err := wpimport.Run(t.Context(), s, opts); err == nil || !strings.Contains(err.Error(), "503") {
				t.Fatalf("import with the source cut: error %v, want the 503", err)
			}
			src.CutAfter(0)
			runImport(t, s, options(src, nil))
			if got := dumpStore(t, s); got != want {
				t.Error("the resumed import differs from an uninterrupted one")
			}
		})
	}
	for _, n := range []int64{1, 20, 60, 200} {
		t.Run(fmt.Sprintf("killed after %d writes", n), func(t *testing.T) {
			s := openSQLite(t)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			cut := &cancelAfterWrites{Store: s, n: n, cancel: cancel}
			if _, err := wpimport.Run(ctx, cut, options(src, nil)); !errors.Is(err, context.Canceled) {
				t.Fatalf("interrupted import: error %v, want context.Canceled", err)
			}
			if w := cut.writes.Load(); w != n {
				t.Fatalf("%d writes before the interruption, want %d", w, n)
			}
			rep := runImport(t, s, options(src, nil))
			if rep.Changes() == 0 {
				t.Error("the restart wrote nothing")
			}
			if got := dumpStore(t, s); got != want {
				t.Error("the resumed import differs from an uninterrupted one")
			}
		})
	}
}

// TestCollisionsRefused: a store holding other records under source IDs
// is refused before anything is written, and the collisions are listed.
func TestCollisionsRefused(t *testing.T) {
	src := replay.New(t)
	s := openSQLite(t)
	ctx := t.Context()
	mine := &repository.Record{ID: 351, Kind: repository.KindVenue, Status: "publish", Title: repository.Text{"en": "My own venue"},
		Slug: repository.Text{"en": "my-own-venue"}, Venue: &repository.VenueFields{}}
	if err := s.CreateRecord(ctx, mine); err != nil {
		t.Fatal(err)
	}
	other := &repository.Label{ID: 46, Taxonomy: repository.LabelTag, Name: repository.Text{"en": "elsewhere"}, Slug: repository.Text{"en": "elsewhere"},
		Origin: &repository.Origin{Site: "https://other.example/wp-json/tribe/events/v1", ID: 46, Hash: "x"}}
	if err := s.CreateLabel(ctx, other); err != nil {
		t.Fatal(err)
	}
	before := dumpStore(t, s)
	for _, dry := range []bool{true, false} {
		opts := options(src, nil)
		opts.DryRun = dry
		rep, err := wpimport.Run(ctx, s, opts)
		var ce *wpimport.CollisionError
		if !errors.As(err, &ce) {
			t.Fatalf("dry run %v: error %v, want a CollisionError", dry, err)
		}
		got := []string{}
		for _, c := range ce.Collisions {
			got = append(got, c.String())
		}
		want := []string{
			`tag 46: the store holds a tag "elsewhere", imported from https://other.example/wp-json/tribe/events/v1 (record 46 there)`,
			`event 351: the store holds a venue "My own venue", created in this service`,
		}
		if !slices.Equal(got, want) {
			t.Errorf("collisions:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if rep == nil || len(rep.Collisions) != 2 || rep.Changes() != 0 {
			t.Errorf("report = %+v", rep)
		}
		if !strings.Contains(err.Error(), "nothing was written") {
			t.Errorf("error %q does not say nothing was written", err)
		}
	}
	if got := dumpStore(t, s); got != before {
		t.Error("a refused import wrote to the store")
	}
}

// TestDryRunWritesNothing: a dry run reads and counts but writes nothing.
func TestDryRunWritesNothing(t *testing.T) {
	src := replay.New(t)
	s := openSQLite(t)
	opts := options(src, nil)
	opts.DryRun = true
	rep := runImport(t, s, opts)
	if rep.Kind(wpimport.KindEvent).Created != 179 {
		t.Errorf("dry run counts %+v, want 179 events to create", rep.Kind(wpimport.KindEvent))
	}
	if got := dumpStore(t, s); got != "" {
		t.Errorf("a dry run wrote:\n%s", got)
	}
}

// TestCredentialsNeverLogged: the password and its Basic encoding appear
// in no log line, report or error, also when the source refuses them.
func TestCredentialsNeverLogged(t *testing.T) {
	src := replay.New(t)
	secrets := []string{replay.AppPassword, base64.StdEncoding.EncodeToString([]byte(replay.User + ":" + replay.AppPassword))}
	for _, tc := range []struct {
		name     string
		password string
		cut      int
	}{
		{"accepted", replay.AppPassword, 0},
		{"refused", "wrong " + replay.AppPassword, 0},
		{"source failing", replay.AppPassword, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			opts := options(src, &logs)
			opts.AppPassword = tc.password
			opts.Retries = 1
			src.CutAfter(tc.cut)
			defer src.CutAfter(0)
			rep, err := wpimport.Run(t.Context(), openSQLite(t), opts)
			var out bytes.Buffer
			if rep != nil {
				rep.Print(&out)
			}
			if err != nil {
				fmt.Fprintln(&out, err.Error())
			}
			all := logs.String() + out.String()
			for _, sec := range append(secrets, base64.StdEncoding.EncodeToString([]byte(replay.User+":"+tc.password))) {
				if strings.Contains(all, sec) {
					t.Errorf("a credential appears in the output:\n%s", all)
				}
			}
			if tc.name == "refused" && (err == nil || !strings.Contains(err.Error(), "401")) {
				t.Errorf("wrong password: error %v, want the 401", err)
			}
		})
	}
	if len(src.AuthHeaders()) == 0 {
		t.Error("the source never received credentials")
	}
}

// TestAnonymousImport: without credentials only public records come, and
// no status filter is sent (the source refuses any for anonymous callers).
func TestAnonymousImport(t *testing.T) {
	src := replay.New(t)
	s := openSQLite(t)
	opts := options(src, nil)
	opts.User, opts.AppPassword = "", ""
	rep := runImport(t, s, opts)
	ev := rep.Kind(wpimport.KindEvent)
	if ev.Created == 0 || len(ev.Failed) != 0 {
		t.Fatalf("anonymous import: %+v", ev)
	}
	ps, err := s.FindRecords(t.Context(), repository.RecordQuery{Kind: repository.KindEvent, ExcludeStatuses: []string{"publish"}})
	if err != nil || len(ps) != 0 {
		t.Errorf("anonymous import stored %d unpublished events (%v)", len(ps), err)
	}
	for _, r := range src.Requests() {
		if strings.Contains(r, "status=") {
			t.Errorf("anonymous request with a status: %s", r)
		}
	}
}

// TestImportWithoutWPRoute: on a site whose wp/v2 route is not reachable
// the import says that hidden events cannot be found, imports the rest,
// and finds the password-protected events by reading the events that
// look redacted.
func TestImportWithoutWPRoute(t *testing.T) {
	src := replay.New(t)
	src.DisableWP()
	s := openSQLite(t)
	rep := runImport(t, s, options(src, nil))
	if ev := rep.Kind(wpimport.KindEvent); ev.Created != 177 || len(ev.Failed) != 0 {
		t.Errorf("events: %+v; want the 177 listed ones", ev)
	}
	if !slices.Contains(rep.Protected, 369) || !slices.Contains(rep.Protected, 370) {
		t.Errorf("protected = %v, want 369 and 370", rep.Protected)
	}
	warned := false
	for _, w := range rep.Warnings {
		warned = warned || strings.Contains(w, "hidden from listings")
	}
	if !warned {
		t.Errorf("no warning about hidden events: %q", rep.Warnings)
	}
}
