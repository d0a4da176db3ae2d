package api_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/event"

	"github.com/calendar/eventcal/app/api"
	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/repository/mongo"
	"github.com/calendar/eventcal/repository/mongo/mongotest"
)

// commandTarget names the collection a command works on.
func commandTarget(e *event.CommandStartedEvent) string {
	if v, err := e.Command.LookupErr(e.CommandName); err == nil {
		if s, ok := v.StringValueOK(); ok {
			return s
		}
	}
	return ""
}

// TestMongoCommandsPerRequest bounds the MongoDB round trips of the API
// (issue 20, item 6): through the real handlers, on a MongoDB store (an
// embedded FerretDB, or the server of TEST_MONGO_URI), every operation
// sends a fixed number of commands, whatever the page size and whatever
// the number of records a page links. The app's store has its own client
// with a command monitor; the sync worker uses another one, so only the
// request's commands are counted. The record caches (linked records, term
// counts) and the response cache are off: each request is the cold case,
// the most it can cost. The table is docs/internals.md's ("Round trips").
func TestMongoCommandsPerRequest(t *testing.T) {
	t.Parallel()
	var uri, db string
	e := newEnvWith(t, t.TempDir(), envOptions{openStore: func(t testing.TB, _ *config.Config) repository.Store {
		uri, db = mongotest.Start(t), mongotest.Database(t)
		st, err := mongo.Open(context.Background(), uri, db)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}})
	log := &mongotest.Commands[string]{Record: func(e *event.CommandStartedEvent) (string, bool) {
		return e.CommandName + " " + commandTarget(e), true
	}}
	// MongoDB's plan even on the embedded FerretDB, where the store
	// otherwise reads several records by ID with one look-up each
	// (repository/mongo TestRoundTrips counts that plan).
	counted, err := mongo.Open(context.Background(), uri, db, mongo.WithCommandMonitor(log.Monitor()), mongo.WithMongoDBPlan())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { counted.Close(context.Background()) })
	if err := counted.WaitIndexes(context.Background()); err != nil { // not the requests' commands
		t.Fatal(err)
	}
	a, err := api.New(api.Options{Config: e.cfg, Store: counted, Search: e.engine, Indexer: e.worker,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: e.clockNow,
		ResponseCacheBytes: -1, RecordCacheTTL: -1})
	if err != nil {
		t.Fatal(err)
	}
	e.app = a
	const admin = "token:admin-secret" // the built-in admin: no token look-up once known

	// n events, each with its own venue and organizer, one of 3
	// categories and 2 of 5 tags: a page of n events links n venues and
	// n organizers. 12 are enough: pages of 1, 10 and 12 differ in what
	// they link (a look-up per linked record would show as 10 or 12 more
	// commands), and all are far below the driver's first batch (101
	// documents), as 50 was. Each seeded record costs FerretDB a scan of
	// its collection, so 50 events (150 records) cost about 15 times as
	// much as 12.
	const n = 12
	var cats, tags []int64
	for i := range 3 {
		cats = append(cats, e.must(201, "POST", "categories", admin, map[string]any{"name": fmt.Sprintf("Cat %d", i)}).id())
	}
	for i := range 5 {
		tags = append(tags, e.must(201, "POST", "tags", admin, map[string]any{"name": fmt.Sprintf("tag%d", i)}).id())
	}
	newEvent := func(i int) map[string]any {
		venue := e.must(201, "POST", "venues", admin, map[string]any{"venue": fmt.Sprintf("Hall %d", i), "city": "Gent"}).id()
		org := e.must(201, "POST", "organizers", admin, map[string]any{"organizer": fmt.Sprintf("Org %d", i)}).id()
		start := time.Date(2027, 1, 1, 20, 0, 0, 0, time.UTC).AddDate(0, 0, i)
		return map[string]any{"title": fmt.Sprintf("Concert %d", i), "description": "Music.",
			"start_date": start.Format("2006-01-02 15:04"), "end_date": start.Add(2 * time.Hour).Format("2006-01-02 15:04"),
			"venue": venue, "organizer": []any{org}, "categories": []any{cats[i%3]}, "tags": []any{tags[i%5], tags[(i+1)%5]}}
	}
	var ids []int64
	for i := range n {
		ids = append(ids, e.must(201, "POST", "events", admin, newEvent(i)).id())
	}
	slug := e.must(200, "GET", fmt.Sprintf("events/%d", ids[7]), "", nil).str("slug")
	spare := newEvent(n) // its venue and organizer exist; the event is created by the table
	// The editor's token records its first use now, not in the table (a
	// token's use is written at most once per TokenTouchInterval).
	e.must(200, "GET", fmt.Sprintf("events/%d", ids[0]), "editor", nil)
	e.flush()
	log.Take()

	for _, tc := range []struct {
		name   string
		method string
		url    string
		body   any
		as     string
		status int
		want   int
	}{
		// by ID: the event; its venues, organizers and image; its terms;
		// the counts of its terms (one command for all of them).
		{"event by ID", "GET", fmt.Sprintf("events/%d", ids[3]), nil, "", 200, 4},
		// by slug: the slug's reservation first.
		{"event by slug", "GET", "events/by-slug/" + slug, nil, "", 200, 5},
		// a list page: the page's events (the index gave their IDs), then
		// as by ID, for the whole page at once.
		{"events, page of 1", "GET", "events?per_page=1", nil, "", 200, 4},
		{"events, page of 10", "GET", "events?per_page=10", nil, "", 200, 4},
		{fmt.Sprintf("events, page of %d", n), "GET", fmt.Sprintf("events?per_page=%d", n), nil, "", 200, 4},
		{"venues, page of 1", "GET", "venues?per_page=1", nil, "", 200, 1},
		{fmt.Sprintf("venues, page of %d", n), "GET", fmt.Sprintf("venues?per_page=%d", n), nil, "", 200, 1},
		// a term list: the terms, and the counts of the taxonomy.
		{"categories", "GET", "categories?per_page=50", nil, "", 200, 3},
		// a signed-in read adds the token and its user.
		{"event by ID, signed in", "GET", fmt.Sprintf("events/%d", ids[3]), nil, "editor", 200, 6},
		// create: resolve the venue, organizer, categories and tags (4);
		// draw and claim the ID, lock, reserve the slug, mark, insert,
		// mark again, unlock (9); render the answer as by ID (3).
		{"create event", "POST", "events", spare, admin, 201, 16},
		// update and trash: read it, then lock, re-read, mark, replace,
		// mark again, unlock (7), and render the answer (3).
		{"update event", "POST", fmt.Sprintf("events/%d", ids[4]), map[string]any{"title": "Renamed"}, admin, 200, 11},
		{"trash event", "DELETE", fmt.Sprintf("events/%d", ids[5]), nil, admin, 200, 11},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.t = t
			e.must(tc.status, tc.method, tc.url, tc.as, tc.body)
			got := log.Take()
			t.Logf("%d commands: %s", len(got), strings.Join(got, ", "))
			if len(got) != tc.want {
				t.Errorf("%s %s sent %d commands, want %d:\n  %s", tc.method, tc.url, len(got), tc.want, strings.Join(got, "\n  "))
			}
		})
	}
}
