package api_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/repository/mongo"
	"github.com/calendar/eventcal/repository/mongo/mongotest"

	mdriver "go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// refusal is one request of TestRefusedWriteLeavesNothing: a write route
// (route, as "METHOD /path") sent a request that fails at one validation
// step (why), by the caller as, and the answer it must get. code, when
// set, is the error code the answer must carry: the request is refused
// for the step it tests, not for an earlier one.
type refusal struct {
	route, why  string
	method, url string
	as          string
	body        any
	status      int
	code        string
}

// storeUnderTest is a stack on one engine and the dump of its store.
type storeUnderTest struct {
	name string
	// start returns a stack (with the settings given) and a function that
	// dumps every table or collection of its store.
	start func(t *testing.T, settings ...string) (*env, func() string)
}

// refusalStores are the engines TestRefusedWriteLeavesNothing runs on:
// SQLite, and MongoDB on an embedded FerretDB (or TEST_MONGO_URI). The
// dumps read the database beside the store, listing its tables
// (collections) at each dump: a table a later change adds is in the dump
// without a change here, so no table can be missed.
func refusalStores() []storeUnderTest {
	return []storeUnderTest{
		{"sqlite", func(t *testing.T, settings ...string) (*env, func() string) {
			dir := t.TempDir()
			e := newEnvWith(t, dir, envOptions{noWorker: true}, settings...)
			return e, dumpUnlessUnchanged(t, func() string { return "file:" + filepath.Join(dir, "calendar.db") + "?mode=ro" }, dumpSQLite)
		}},
		{"mongo", func(t *testing.T, settings ...string) (*env, func() string) {
			var db *mdriver.Database
			var file string // the database's file on an embedded FerretDB
			open := func(t testing.TB, _ *config.Config) repository.Store {
				uri, dir := mongotest.StartFiles(t)
				name := mongotest.Database(t)
				if dir != "" {
					file = filepath.Join(dir, name+".sqlite")
				}
				st, err := mongo.Open(context.Background(), uri, name, mongo.WithTimeout(time.Minute))
				if err != nil {
					t.Fatal(err)
				}
				indexIDs(t, st, dir, name)
				cl, err := mdriver.Connect(options.Client().ApplyURI(uri))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { cl.Disconnect(context.Background()) })
				db = cl.Database(name)
				return st
			}
			e := newEnvWith(t, t.TempDir(), envOptions{noWorker: true, openStore: open}, settings...)
			if file == "" {
				return e, func() string { return dumpMongo(t, db) }
			}
			return e, dumpUnlessUnchanged(t, func() string { return ferretDBFileDSN(file) }, dumpFerretDB)
		}},
	}
}

// volatileTables are the tables (collections) a refused request may
// legitimately change, each with the reason; the dumps compared leave
// them out. There are none. What a refused request does change lives
// outside the store (the write-rate buckets of WRITE_RATE, the request
// log and metrics, the recurrence expansion cache, the term count
// cache), except one field: tokens.last_used, which authentication
// writes for any request, refused or not, when it is older than
// repository.TokenTouchInterval. The test keeps that field in the
// comparison: settle notes every caller's token before the first dump,
// and the server's clock does not move, so no request of the test
// writes it again.
var volatileTables = map[string]string{}

// dumpedTables are the tables (SQLite) and collections (MongoDB) every
// store has once the set-up of TestRefusedWriteLeavesNothing ran: the
// dump must show each of them, so a dump that reads the wrong database,
// or one that stops listing a kind of record, fails the test. The dumps
// list the tables they find, so a table added later is compared without
// being named here.
var dumpedTables = map[string][]string{
	"sqlite": {"account_documents", "counters", "index_marks", "post_links", "post_slugs", "post_titles", "posts",
		"term_counts", "term_events", "term_names", "term_slugs", "terms", "tokens", "users", "place_events"},
	"mongo": {"counters", "index_marks", "posts", "slugs", "terms", "tokens", "users"},
}

// dumpSections returns the table names a dump shows.
func dumpSections(d string) []string {
	var out []string
	for _, l := range strings.Split(d, "\n") {
		if name, ok := strings.CutPrefix(l, "== "); ok {
			out = append(out, name[:strings.Index(name, " (")])
		}
	}
	return out
}

// withoutVolatile drops the sections of volatileTables from a dump.
func withoutVolatile(d string) string {
	if len(volatileTables) == 0 {
		return d
	}
	var b strings.Builder
	skip := false
	for _, l := range strings.SplitAfter(d, "\n") {
		if name, ok := strings.CutPrefix(l, "== "); ok {
			_, skip = volatileTables[name[:strings.Index(name, " (")]]
		}
		if !skip {
			b.WriteString(l)
		}
	}
	return b.String()
}

// TestRefusedWriteLeavesNothing sends, on every write route, requests
// refused at each step of its validation, in the order the service checks
// them: the HTTP layer (401 anonymous, 413 body too large), the declared
// validators (bad time zone, cost, status, website, dates, recurrence
// shape, over-long fields, too many terms, unknown parent), the look-ups
// (unknown venue, organizer, author, image or parent; a venue the caller
// may not read; another author's name; a new term or image URL the role
// may not create; bad inline venue data), the permission and state checks
// (an item the caller may not edit or delete, a trashed item, an event
// that is not a series, an unknown occurrence) and the rules applied last
// (end before start, a rule that makes no occurrence, a series too long
// for its rule, the account's document bound, an occurrence published
// before its series, a category made its own ancestor, an existing term
// name). Every request on an event route names new linked records (a new
// category and tag, an inline venue and organizer, an image URL), and the
// place routes a new image URL, so that a write that creates them before
// its last check fails here. After each request the store must be exactly
// as before: a dump of every table (SQLite) or collection (MongoDB),
// compared. The sync worker does not run, so only requests change the
// store (its index marks included).
//
// The routes: create, update by ID and by slug, and delete of events,
// venues and organizers; create, update and delete of categories and
// tags; change, cancel and split of an occurrence; the admin routes that
// write (webhooks, users, tokens, reindex). The subtest "record too
// large" refuses writes whose record would be over the store's bound
// (413), on a series near it (on MongoDB not under -short: slow on
// FerretDB; and there one refusal per refusal path, the variants of a
// path, marked in the table, left to the SQLite run).
//
// The two engines run in parallel with each other and with the package's
// other parallel tests; the MongoDB store's calls get a minute (not the
// default 10 s): a 16 MB record read and written through the embedded
// FerretDB on a machine this busy may take longer, and deadlines are not
// what this test checks.
func TestRefusedWriteLeavesNothing(t *testing.T) {
	t.Parallel()
	for _, st := range refusalStores() {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			t.Run("routes", func(t *testing.T) {
				e, dump := st.start(t, "MAX_ACCOUNT_DOCUMENTS", "20")
				steps := refusedWrites(t, e)
				before := settle(t, e, dump, true)
				for _, want := range dumpedTables[st.name] {
					if !strings.Contains(before, "\n== "+want+" (") && !strings.HasPrefix(before, "== "+want+" (") {
						t.Errorf("the dump has no table %s: %v", want, dumpSections(before))
					}
				}
				before = runRefusals(t, e, dump, before, steps)
				// The table's requests are refused for their one fault: the
				// same request without it is accepted (and writes the
				// linked records).
				e.t = t
				r := e.must(201, "POST", "events", "admin", map[string]any{"title": "New Event", "start_date": "2027-05-01 10:00:00", "end_date": "2027-05-01 12:00:00",
					"categories": []any{"Brand New Cat"}, "tags": []any{"brandnewtag"}, "venue": map[string]any{"venue": "Brand New Hall"},
					"organizer": map[string]any{"organizer": "Brand New Org"}, "image": "http://img.example/brand-new.png"})
				if got := fmt.Sprint(r.path("categories.0.name"), r.path("tags.0.name"), r.path("venue.venue")); !strings.Contains(got, "Brand New Cat") || !strings.Contains(got, "brandnewtag") || !strings.Contains(got, "Brand New Hall") {
					t.Errorf("the valid request's links: %s", got)
				}
				if withoutVolatile(dump()) == before {
					t.Error("a valid write left the dump unchanged: the dump does not see writes")
				}
			})
			t.Run("write rate", func(t *testing.T) {
				e, dump := st.start(t, "WRITE_RATE", "0.001", "WRITE_BURST", "1")
				steps := refusedRateWrites(t, e)
				runRefusals(t, e, dump, settle(t, e, dump, true), steps)
			})
			t.Run("record too large", func(t *testing.T) {
				if st.name == "mongo" && testing.Short() {
					// About 90 s on the embedded FerretDB, which reads and
					// writes each 16 MB record slowly; the order this
					// checks is the handlers', the same on both engines,
					// and both refuse the same records (storetest's
					// RecordSize group).
					t.Skip("-short: a 16 MB record on FerretDB is slow; the SQLite run checks the same order")
				}
				if st.name == "mongo" && raceEnabled {
					// Under the race detector the embedded FerretDB takes
					// longer than a store call's deadline to write a 16 MB
					// record (503 store_unavailable, seen in CI); the plain
					// run checks it, as .ci/run leaves repository/mongo out
					// of its race pass for the same reason.
					t.Skip("-race: a 16 MB record on FerretDB outlasts the store call's deadline; the plain run checks it")
				}
				e, dump := st.start(t)
				steps := refusedLargeWrites(t, e)
				if st.name == "mongo" {
					// Each refusal moves the 16 MB series through
					// FerretDB several times; the bound is checked
					// before the store (app/calendar, on a copy), so
					// one refusal per path shows the engine keeps
					// nothing, and the SQLite run sends the variants.
					steps = slices.DeleteFunc(steps, func(s refusal) bool { return largeVariants[s.route+": "+s.why] != "" })
				}
				// The marks stay: indexing a 16 MB series takes long, and
				// refusedLargeWrites marks every record the requests
				// could mark again.
				runRefusals(t, e, dump, settle(t, e, dump, false), steps)
			})
		})
	}
}

// settle clears the index marks of the set-up when drain is set (one
// sync pass at a time: the worker does not run), so that a mark a refused
// write leaves shows in the dump as a new row, and notes each caller's
// token use (tokens.last_used, see volatileTables); it returns the dump to
// compare with. Without drain, a mark a refused write leaves on a record
// already marked shows as the mark's new sequence number.
func settle(t *testing.T, e *env, dump func() string, drain bool) string {
	t.Helper()
	for i := 0; drain; i++ {
		n, err := e.worker.Step(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if i > 1000 {
			t.Fatal("the index marks of the set-up are never cleared")
		}
	}
	for _, as := range []string{"admin", "author", "contributor", "editor"} {
		e.must(200, "GET", "events", as, nil)
	}
	return withoutVolatile(dump())
}

// runRefusals sends each refusal as a subtest and compares the dump after
// it with before; it returns the last dump.
func runRefusals(t *testing.T, e *env, dump func() string, before string, steps []refusal) string {
	t.Helper()
	seen := map[string]bool{}
	for _, s := range steps {
		name := s.route + ": " + s.why
		if seen[name] {
			t.Fatalf("two steps named %q", name)
		}
		seen[name] = true
		t.Run(name, func(t *testing.T) {
			e.t = t
			r := e.do(s.method, s.url, s.as, s.body)
			if r.status != s.status || (s.code != "" && r.str("code") != s.code) {
				t.Errorf("%s %s as %q: %d %s, want %d %s; body %.400s", s.method, s.url, s.as, r.status, r.str("code"), s.status, s.code, r.raw)
			}
			if after := withoutVolatile(dump()); after != before {
				t.Errorf("%s %s answered %d and changed the store:\n%s", s.method, s.url, r.status, firstDiff(before, after))
				before = after // the next step is compared with this store
			}
		})
	}
	e.t = t
	if testing.Verbose() {
		routes := map[string]int{}
		for _, s := range steps {
			routes[s.route]++
		}
		var lines []string
		for r, n := range routes {
			lines = append(lines, fmt.Sprintf("%-48s %d", r, n))
		}
		sort.Strings(lines)
		t.Logf("%d refusals on %d routes:\n%s", len(steps), len(routes), strings.Join(lines, "\n"))
	}
	return before
}

// refusedWrites makes what the requests refer to and returns the table of
// refusals.
func refusedWrites(t *testing.T, e *env) []refusal {
	// What the requests may link to.
	venue := e.must(201, "POST", "venues", "admin", map[string]any{"venue": "Old Hall", "city": "Gent"}).id()
	hidden := e.must(201, "POST", "venues", "admin", map[string]any{"venue": "Hidden Hall", "status": "draft"}).id()
	org := e.must(201, "POST", "organizers", "admin", map[string]any{"organizer": "Old Org"}).id()
	cat := e.must(201, "POST", "categories", "admin", map[string]any{"name": "Old Cat"}).id()
	child := e.must(201, "POST", "categories", "admin", map[string]any{"name": "Child Cat", "parent": cat}).id()
	tag := e.must(201, "POST", "tags", "admin", map[string]any{"name": "oldtag"}).id()
	ev := e.must(201, "POST", "events", "admin", map[string]any{"title": "Old Event", "start_date": "2027-02-01 10:00:00",
		"end_date": "2027-02-01 12:00:00", "venue": venue, "organizer": org, "categories": []any{cat}, "tags": []any{tag}})
	own := e.must(201, "POST", "events", "author", map[string]any{"title": "Own Event", "start_date": "2027-02-02 10:00:00",
		"end_date": "2027-02-02 12:00:00"}).id()
	cown := e.must(201, "POST", "events", "contributor", map[string]any{"title": "Contributed Event", "start_date": "2027-02-03 10:00:00",
		"end_date": "2027-02-03 12:00:00"}).id()
	series := e.must(201, "POST", "events", "admin", weekly(map[string]any{"venue": venue})).id()
	draft := e.must(201, "POST", "events", "admin", weekly(map[string]any{"title": "Draft class", "status": "draft", "venue": venue})).id()
	authorSeries := e.must(201, "POST", "events", "author", weekly(map[string]any{"title": "Author class"})).id()
	contribSeries := e.must(201, "POST", "events", "contributor", weekly(map[string]any{"title": "Contributed class"})).id()
	trashed := e.must(201, "POST", "events", "admin", weekly(map[string]any{"title": "Trashed class"})).id()
	e.must(200, "DELETE", fmt.Sprintf("events/%d", trashed), "admin", nil)
	trashedVenue := e.must(201, "POST", "venues", "admin", map[string]any{"venue": "Trashed Hall"}).id()
	e.must(200, "DELETE", fmt.Sprintf("venues/%d", trashedVenue), "admin", nil)
	evPath, evSlug := fmt.Sprintf("events/%d", ev.id()), "events/by-slug/"+ev.str("slug")
	venuePath, orgPath := fmt.Sprintf("venues/%d", venue), fmt.Sprintf("organizers/%d", org)
	venueSlug := "venues/by-slug/" + e.must(200, "GET", venuePath, "admin", nil).str("slug")
	orgSlug := "organizers/by-slug/" + e.must(200, "GET", orgPath, "admin", nil).str("slug")
	occOf := func(id int64) string { return fmt.Sprintf("events/%d/occurrences/20270401T190000", id) }
	occ, draftOcc := occOf(series), occOf(draft)
	split := occ + "/split"
	editor := e.users["editor"].ID

	// news are the new linked records a request names: a new category and
	// tag, inline venue and organizer data, and an image URL. Each
	// request's names are its own, so that each would create records.
	n := 0
	merge := func(b, fields map[string]any) map[string]any {
		for k, v := range fields {
			if v == nil {
				delete(b, k)
			} else {
				b[k] = v
			}
		}
		return b
	}
	news := func(fields map[string]any) map[string]any {
		n++
		return merge(map[string]any{"categories": []any{fmt.Sprintf("Brand New Cat %d", n)}, "tags": []any{fmt.Sprintf("brandnewtag%d", n)},
			"venue":     []any{map[string]any{"venue": fmt.Sprintf("Brand New Hall %d", n), "city": "Leuven"}},
			"organizer": []any{map[string]any{"organizer": fmt.Sprintf("Brand New Org %d", n)}},
			"image":     fmt.Sprintf("http://img.example/brand-new-%d.png", n)}, fields)
	}
	// event is a valid new event with news and the fields given.
	event := func(fields map[string]any) map[string]any {
		return merge(news(map[string]any{"title": "New Event", "start_date": "2027-05-01 10:00:00", "end_date": "2027-05-01 12:00:00"}), fields)
	}
	// place is a valid venue or organizer write with a new image URL.
	place := func(nameField string, fields map[string]any) map[string]any {
		n++
		return merge(map[string]any{nameField: fmt.Sprintf("Brand New Place %d", n), "image": fmt.Sprintf("http://img.example/brand-new-place-%d.png", n)}, fields)
	}
	long := strings.Repeat("x", 5000)
	huge := strings.Repeat("x", 1<<20+1) // over limits.MaxBodyBytes
	manyTerms := make([]any, 101)        // over limits.MaxTermsPerField
	for i := range manyTerms {
		manyTerms[i] = fmt.Sprintf("Many %d", i)
	}
	const invalid, forbidden = "rest_invalid_param", "rest_forbidden"

	// The steps of an event write, each with the callers it is tried as
	// (the first that applies is used on each route).
	type eventStep struct {
		why    string
		as     string
		fields map[string]any
		status int
		code   string
	}
	eventSteps := []eventStep{
		{"anonymous", "", nil, 401, ""},
		{"body too large", "admin", map[string]any{"description": huge}, 413, "rest_request_too_large"},
		{"bad language", "admin", map[string]any{"multilang_language": "xx"}, 400, invalid},
		{"end before start", "admin", map[string]any{"start_date": "2027-05-02 10:00:00", "end_date": "2027-05-01 10:00:00"}, 400, invalid},
		{"end before start, all day", "admin", map[string]any{"all_day": true, "start_date": "2027-05-02", "end_date": "2027-05-01"}, 400, invalid},
		{"bad time zone", "admin", map[string]any{"timezone": "Mars/Olympus"}, 400, invalid},
		{"bad date", "admin", map[string]any{"start_date": "not a date"}, 400, invalid},
		{"bad publish date", "admin", map[string]any{"date": "the day after never"}, 400, invalid},
		{"bad UTC publish date", "admin", map[string]any{"date_utc": "the day after never"}, 400, invalid},
		{"unknown venue ID", "admin", map[string]any{"venue": []any{999999, map[string]any{"venue": "Brand New Hall"}}}, 400, invalid},
		{"venue ID not an ID", "admin", map[string]any{"venue": []any{map[string]any{"venue": "Brand New Hall"}, "old-hall"}}, 400, invalid},
		{"organizer ID is a venue", "admin", map[string]any{"organizer": []any{map[string]any{"organizer": "Brand New Org"}, venue}}, 400, invalid},
		{"unknown organizer ID", "admin", map[string]any{"organizer": []any{map[string]any{"organizer": "Brand New Org"}, 999998}}, 400, invalid},
		{"end before start, inline venue updating a duplicate", "admin", map[string]any{"venue": []any{map[string]any{"venue": "Old Hall", "city": "Brugge"}},
			"organizer": []any{map[string]any{"organizer": "Old Org", "phone": "123"}}, "start_date": "2027-05-02 10:00:00", "end_date": "2027-05-01 10:00:00"}, 400, invalid},
		{"bad inline venue", "admin", map[string]any{"venue": []any{map[string]any{"venue": "Brand New Hall", "website": "not a url"}}}, 400, invalid},
		{"inline venue without a name", "admin", map[string]any{"venue": []any{map[string]any{"city": "Leuven"}}}, 400, invalid},
		{"bad inline organizer", "admin", map[string]any{"organizer": []any{map[string]any{"organizer": "Brand New Org", "email": "not an address"}}}, 400, invalid},
		{"inline venue with an unknown image", "admin", map[string]any{"venue": []any{map[string]any{"venue": "Brand New Hall", "image": 999997}}}, 400, invalid},
		{"too many venues", "admin", map[string]any{"venue": []any{venue, venue, venue, venue, venue, venue, venue, venue, venue, venue, venue}}, 400, invalid},
		{"recurrence not an object", "admin", map[string]any{"recurrence": []any{"FREQ=DAILY"}}, 400, invalid},
		{"recurrence with an unknown key", "admin", map[string]any{"recurrence": map[string]any{"rule": []any{"FREQ=DAILY"}}}, 400, invalid},
		{"bad recurrence rule", "admin", map[string]any{"recurrence": map[string]any{"rules": []any{"FREQ=SOMETIMES"}}}, 400, invalid},
		{"rule with no occurrence", "admin", map[string]any{"recurrence": map[string]any{"rules": []any{"FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30"}}}, 400, invalid},
		{"bad exclusion date", "admin", map[string]any{"recurrence": map[string]any{"rules": []any{"FREQ=WEEKLY;COUNT=3"}, "exclusions": []any{"someday"}}}, 400, invalid},
		{"series too long for its rule", "admin", map[string]any{"recurrence": map[string]any{"rules": []any{"FREQ=SECONDLY"}}}, 400, invalid},
		{"bad cost", "admin", map[string]any{"cost": map[string]any{"a": 1}}, 400, invalid},
		{"over-long title", "admin", map[string]any{"title": long}, 400, invalid},
		{"over-long category name", "admin", map[string]any{"categories": []any{strings.Repeat("c", 201)}}, 400, invalid},
		{"too many tags", "admin", map[string]any{"tags": manyTerms}, 400, invalid},
		{"bad status", "admin", map[string]any{"status": "bogus"}, 400, invalid},
		{"bad website", "admin", map[string]any{"website": "javascript:alert(1)"}, 400, invalid},
		{"bad image URL", "admin", map[string]any{"image": "http://img.example/not-an-image.exe"}, 400, invalid},
		{"unknown author", "admin", map[string]any{"author": 999996}, 400, invalid},
		{"unknown image ID", "admin", map[string]any{"image": 999995}, 400, invalid},
		{"image ID of a venue", "admin", map[string]any{"image": venue}, 400, invalid},
		{"another author's name", "author", map[string]any{"author": editor}, 403, "rest_cannot_edit_others"},
		{"new tag by an author", "author", map[string]any{"categories": []any{cat}}, 403, "rest_cannot_create"},
		{"new category by a contributor", "contributor", map[string]any{"image": nil, "tags": []any{tag}}, 403, "rest_cannot_create"},
		{"image URL by a contributor", "contributor", map[string]any{"categories": []any{cat}, "tags": []any{tag}}, 400, invalid},
		{"venue the caller may not read", "contributor", map[string]any{"image": nil, "categories": []any{cat}, "tags": []any{tag},
			"venue": []any{hidden, map[string]any{"venue": "Brand New Hall"}}}, 400, invalid},
		{"account document bound", "author", map[string]any{"tags": []any{tag}, "image": nil, "recurrence": map[string]any{"rules": []any{"FREQ=DAILY;COUNT=60"}}}, 400, "rest_account_document_limit"},
	}
	var steps []refusal
	add := func(route, why, method, url, as string, body any, status int, code string) {
		steps = append(steps, refusal{route, why, method, url, as, body, status, code})
	}
	for _, s := range eventSteps {
		add("POST /events", s.why, "POST", "events", s.as, event(s.fields), s.status, s.code)
		target := map[string]string{"": evPath, "admin": evPath, "author": fmt.Sprintf("events/%d", own), "contributor": fmt.Sprintf("events/%d", cown)}[s.as]
		add("PATCH /events/{id}", s.why, "PATCH", target, s.as, news(s.fields), s.status, s.code)
		if s.as == "admin" || s.as == "" {
			add("PUT /events/by-slug/{slug}", s.why, "PUT", evSlug, s.as, news(s.fields), s.status, s.code)
		}
		splitOf := map[string]string{"": split, "admin": split, "author": occOf(authorSeries) + "/split", "contributor": occOf(contribSeries) + "/split"}[s.as]
		add("POST /events/{id}/occurrences/{key}/split", s.why, "POST", splitOf, s.as, news(s.fields), s.status, s.code)
	}
	add("POST /events", "missing title", "POST", "events", "admin", event(map[string]any{"title": nil}), 400, "rest_missing_callback_param")
	add("POST /events", "missing start", "POST", "events", "admin", event(map[string]any{"start_date": nil}), 400, "rest_missing_callback_param")
	add("POST /events", "empty title", "POST", "events", "admin", event(map[string]any{"title": " "}), 400, invalid)
	for _, u := range []struct{ why, url, as string }{
		{"another's event by a contributor", evPath, "contributor"},
		{"another's event by an author", evPath, "author"},
		{"an editor's event by an author", fmt.Sprintf("events/%d", series), "author"},
	} {
		add("PATCH /events/{id}", u.why, "PATCH", u.url, u.as, news(map[string]any{"image": nil, "categories": []any{cat}, "tags": []any{tag}}), 403, forbidden)
	}
	add("PATCH /events/{id}", "unknown event", "PATCH", "events/999990", "admin", news(nil), 404, "rest-event-not-found")
	add("PATCH /events/{id}", "a venue's ID", "PATCH", fmt.Sprintf("events/%d", venue), "admin", news(nil), 400, "rest-invalid-event-id")
	add("PUT /events/by-slug/{slug}", "unknown slug", "PUT", "events/by-slug/no-such-event", "admin", news(nil), 404, "rest-event-not-found")
	add("PUT /events/by-slug/{slug}", "another's event by a contributor", "PUT", evSlug, "contributor", news(map[string]any{"image": nil, "categories": []any{cat}, "tags": []any{tag}}), 403, forbidden)
	add("POST /events/{id}/occurrences/{key}/split", "at the first occurrence", "POST", fmt.Sprintf("events/%d/occurrences/20270318T190000/split", series), "admin", news(nil), 400, invalid)
	add("POST /events/{id}/occurrences/{key}/split", "unknown occurrence", "POST", fmt.Sprintf("events/%d/occurrences/20990101T190000/split", series), "admin", news(nil), 404, "rest-occurrence-not-found")
	add("POST /events/{id}/occurrences/{key}/split", "not a key", "POST", fmt.Sprintf("events/%d/occurrences/tomorrow/split", series), "admin", news(nil), 404, "rest-occurrence-not-found")
	add("POST /events/{id}/occurrences/{key}/split", "another's series by a contributor", "POST", split, "contributor", news(nil), 403, forbidden)
	add("POST /events/{id}/occurrences/{key}/split", "another's series by an author", "POST", split, "author", news(nil), 403, forbidden)
	add("POST /events/{id}/occurrences/{key}/split", "trashed series", "POST", occOf(trashed)+"/split", "admin", news(nil), 410, "event-is-in-trash")
	add("POST /events/{id}/occurrences/{key}/split", "not a series", "POST", evPath+"/occurrences/20270201T100000/split", "admin", news(nil), 400, "rest-event-not-recurring")
	add("POST /events/{id}/occurrences/{key}/split", "unknown event", "POST", "events/999990/occurrences/20270401T190000/split", "admin", news(nil), 404, "rest-event-not-found")

	type placeStep struct {
		why    string
		as     string
		fields map[string]any
		status int
		code   string
	}
	for _, p := range []struct{ kind, list, path, slug, name string }{
		{"venue", "venues", venuePath, venueSlug, "venue"},
		{"organizer", "organizers", orgPath, orgSlug, "organizer"},
	} {
		placeSteps := []placeStep{
			{"anonymous", "", map[string]any{}, 401, ""},
			{"body too large", "admin", map[string]any{"description": huge}, 413, "rest_request_too_large"},
			{"over-long name", "admin", map[string]any{p.name: long}, 400, invalid},
			{"bad website", "admin", map[string]any{"website": "ftp://x"}, 400, invalid},
			{"bad phone", "admin", map[string]any{"phone": "1\n2"}, 400, invalid},
			{"bad status", "admin", map[string]any{"status": "bogus"}, 400, invalid},
			{"bad date", "admin", map[string]any{"date": "never"}, 400, invalid},
			{"bad image URL", "admin", map[string]any{"image": "http://img.example/not-an-image.exe"}, 400, invalid},
			{"unknown author", "admin", map[string]any{"author": 999996}, 400, invalid},
			{"unknown image ID", "admin", map[string]any{"image": 999995}, 400, invalid},
			{"another author's name", "author", map[string]any{"author": editor}, 403, "rest_cannot_edit_others"},
			{"image URL by a contributor", "contributor", map[string]any{}, 400, invalid},
		}
		if p.kind == "venue" {
			placeSteps = append(placeSteps, placeStep{"bad latitude", "admin", map[string]any{"geo_lat": 91}, 400, invalid},
				placeStep{"over-long city", "admin", map[string]any{"city": long}, 400, invalid})
		} else {
			placeSteps = append(placeSteps, placeStep{"bad e-mail", "admin", map[string]any{"email": "not an address"}, 400, invalid})
		}
		for _, s := range placeSteps {
			add("POST /"+p.list, s.why, "POST", p.list, s.as, place(p.name, s.fields), s.status, s.code)
			if s.as == "admin" || s.as == "" {
				add("PATCH /"+p.list+"/{id}", s.why, "PATCH", p.path, s.as, place(p.name, s.fields), s.status, s.code)
				add("POST /"+p.list+"/by-slug/{slug}", s.why, "POST", p.slug, s.as, place(p.name, s.fields), s.status, s.code)
			}
		}
		add("POST /"+p.list, "duplicate with a bad field", "POST", p.list, "admin", map[string]any{p.name: "Old " + map[string]string{"venue": "Hall", "organizer": "Org"}[p.kind],
			"website": "ftp://x", "image": "http://img.example/brand-new-duplicate.png"}, 400, invalid)
		add("POST /"+p.list, "missing name", "POST", p.list, "admin", place(p.name, map[string]any{p.name: nil}), 400, "rest_missing_callback_param")
		add("PATCH /"+p.list+"/{id}", "another's "+p.kind+" by a contributor", "PATCH", p.path, "contributor", map[string]any{p.name: "Renamed"}, 403, forbidden)
		add("PATCH /"+p.list+"/{id}", "another's "+p.kind+" by an author", "PATCH", p.path, "author", map[string]any{p.name: "Renamed"}, 403, forbidden)
		add("PATCH /"+p.list+"/{id}", "unknown "+p.kind, "PATCH", p.list+"/999990", "admin", place(p.name, nil), 404, "rest-"+p.kind+"-not-found")
		add("PATCH /"+p.list+"/{id}", "an event's ID", "PATCH", fmt.Sprintf("%s/%d", p.list, ev.id()), "admin", place(p.name, nil), 404, "rest-"+p.kind+"-not-found")
		add("POST /"+p.list+"/by-slug/{slug}", "another's "+p.kind+" by a contributor", "POST", p.slug, "contributor", map[string]any{p.name: "Renamed"}, 403, forbidden)
		add("DELETE /"+p.list+"/{id}", "another's "+p.kind+" by a contributor", "DELETE", p.path, "contributor", nil, 403, forbidden)
		add("DELETE /"+p.list+"/{id}", "another's "+p.kind+" by an author", "DELETE", p.path, "author", nil, 403, forbidden)
		add("DELETE /"+p.list+"/{id}", "anonymous", "DELETE", p.path, "", nil, 401, "")
		add("DELETE /"+p.list+"/{id}", "unknown "+p.kind, "DELETE", p.list+"/999990", "admin", nil, 404, "rest-"+p.kind+"-not-found")
		add("DELETE /"+p.list+"/by-slug/{slug}", "another's "+p.kind+" by a contributor", "DELETE", p.slug, "contributor", nil, 403, forbidden)
	}
	add("DELETE /venues/{id}", "already trashed", "DELETE", fmt.Sprintf("venues/%d", trashedVenue), "admin", nil, 410, "venue-is-in-trash")
	add("DELETE /events/{id}", "another's event by a contributor", "DELETE", evPath, "contributor", nil, 403, forbidden)
	add("DELETE /events/{id}", "another's event by an author", "DELETE", evPath, "author", nil, 403, forbidden)
	add("DELETE /events/{id}", "force by an author", "DELETE", fmt.Sprintf("events/%d?force=true", own), "author", nil, 403, forbidden)
	add("DELETE /events/{id}", "bad force", "DELETE", evPath+"?force=maybe", "admin", nil, 400, invalid)
	add("DELETE /events/{id}", "already trashed", "DELETE", fmt.Sprintf("events/%d", trashed), "admin", nil, 410, "event-is-in-trash")
	add("DELETE /events/{id}", "unknown event", "DELETE", "events/999990", "admin", nil, 404, "rest-event-not-found")
	add("DELETE /events/{id}", "anonymous", "DELETE", evPath, "", nil, 401, "")
	add("DELETE /events/by-slug/{slug}", "another's event by a contributor", "DELETE", evSlug, "contributor", nil, 403, forbidden)

	for _, tx := range []struct {
		list, item, name string
		parent           any
		manager          string // the least role that may manage the taxonomy
		refused          string // a role that may not
		notFound         string // the code of an unknown ID
	}{{"categories", fmt.Sprintf("categories/%d", child), "Child Cat", cat, "author", "contributor", "rest-category-not-found"},
		{"tags", fmt.Sprintf("tags/%d", tag), "oldtag", nil, "editor", "author", "rest-tag-not-found"}} {
		create, update, del := "POST /"+tx.list, "PATCH /"+tx.list+"/{id}", "DELETE /"+tx.list+"/{id}"
		add(create, "anonymous", "POST", tx.list, "", map[string]any{"name": "Brand New Term"}, 401, "")
		add(create, "body too large", "POST", tx.list, "admin", map[string]any{"name": "Brand New Term", "description": huge}, 413, "rest_request_too_large")
		add(create, "missing name", "POST", tx.list, "admin", map[string]any{"description": "New."}, 400, "rest_missing_callback_param")
		add(create, "over-long name", "POST", tx.list, "admin", map[string]any{"name": long}, 400, invalid)
		add(create, "empty name", "POST", tx.list, "admin", map[string]any{"name": ""}, 400, invalid)
		add(create, "empty description", "POST", tx.list, "admin", map[string]any{"name": "Brand New Term", "description": ""}, 400, invalid)
		add(create, "over-long slug", "POST", tx.list, "admin", map[string]any{"name": "Brand New Term", "slug": long}, 400, invalid)
		add(create, "existing name", "POST", tx.list, "admin", map[string]any{"name": tx.name, "parent": tx.parent}, 400, "term_exists")
		add(create, "existing name, other case", "POST", tx.list, tx.manager, map[string]any{"name": strings.ToUpper(tx.name), "parent": tx.parent}, 400, "term_exists")
		add(create, "by a "+tx.refused, "POST", tx.list, tx.refused, map[string]any{"name": "Brand New Term"}, 403, forbidden)
		add(update, "anonymous", "PATCH", tx.item, "", map[string]any{"name": "Renamed"}, 401, "")
		add(update, "over-long name", "PATCH", tx.item, "admin", map[string]any{"name": long, "description": "New."}, 400, invalid)
		add(update, "empty name", "PATCH", tx.item, "admin", map[string]any{"name": "", "description": "New."}, 400, invalid)
		add(update, "by a "+tx.refused, "PATCH", tx.item, tx.refused, map[string]any{"name": "Renamed"}, 403, forbidden)
		add(update, "unknown term", "PATCH", tx.list+"/999990", "admin", map[string]any{"name": "Renamed"}, 404, tx.notFound)
		add(del, "by a "+tx.refused, "DELETE", tx.item, tx.refused, nil, 403, forbidden)
		add(del, "unknown term", "DELETE", tx.list+"/999990", "admin", nil, 404, tx.notFound)
		add(del, "anonymous", "DELETE", tx.item, "", nil, 401, "")
	}
	add("PATCH /tags/{id}", "a category's ID", "PATCH", fmt.Sprintf("tags/%d", cat), "admin", map[string]any{"name": "Renamed"}, 404, "rest-tag-not-found")
	add("POST /categories", "unknown parent", "POST", "categories", "admin", map[string]any{"name": "Brand New Cat", "parent": 999994}, 400, invalid)
	add("POST /categories", "parent is a tag", "POST", "categories", "admin", map[string]any{"name": "Brand New Cat", "parent": tag}, 400, invalid)
	add("PATCH /categories/{id}", "unknown parent", "PATCH", fmt.Sprintf("categories/%d", cat), "admin", map[string]any{"name": "Renamed", "parent": 999994}, 400, invalid)
	add("PATCH /categories/{id}", "own parent", "PATCH", fmt.Sprintf("categories/%d", cat), "admin", map[string]any{"name": "Renamed", "parent": cat}, 400, "rest_term_invalid")
	add("PATCH /categories/{id}", "own ancestor", "PATCH", fmt.Sprintf("categories/%d", cat), "admin", map[string]any{"name": "Renamed", "parent": child}, 400, "rest_term_invalid")

	const change = "PATCH /events/{id}/occurrences/{key}"
	for _, s := range []struct {
		why, url, as string
		body         map[string]any
		status       int
		code         string
	}{
		{"anonymous", occ, "", map[string]any{"title": "X"}, 401, ""},
		{"body too large", occ, "admin", map[string]any{"description": huge, "venue": venue}, 413, "rest_request_too_large"},
		{"end before start", occ, "admin", map[string]any{"start_date": "2027-04-02 10:00:00", "end_date": "2027-04-01 10:00:00", "organizer": org}, 400, invalid},
		{"bad date", occ, "admin", map[string]any{"start_date": "not a date", "venue": venue}, 400, invalid},
		{"inline venue", occ, "admin", map[string]any{"venue": []any{map[string]any{"venue": "Brand New Hall"}}, "organizer": org}, 400, invalid},
		{"inline organizer", occ, "admin", map[string]any{"organizer": []any{map[string]any{"organizer": "Brand New Org"}}, "venue": venue}, 400, invalid},
		{"unknown venue ID and new organizer", occ, "admin", map[string]any{"venue": 999999, "organizer": []any{map[string]any{"organizer": "Brand New Org"}}}, 400, invalid},
		{"venue the caller may not read", occOf(authorSeries), "author", map[string]any{"venue": hidden, "organizer": org}, 400, invalid},
		{"over-long title", occ, "admin", map[string]any{"title": long, "venue": venue}, 400, invalid},
		{"bad cost", occ, "admin", map[string]any{"cost": map[string]any{"a": 1}, "venue": venue}, 400, invalid},
		{"bad status", occ, "admin", map[string]any{"status": "bogus", "venue": venue}, 400, invalid},
		{"bad website", occ, "admin", map[string]any{"website": "javascript:alert(1)", "venue": venue}, 400, invalid},
		{"published before its series", draftOcc, "admin", map[string]any{"status": "publish", "venue": venue, "organizer": org}, 400, invalid},
		{"unknown occurrence", fmt.Sprintf("events/%d/occurrences/20990101T190000", series), "admin", map[string]any{"title": "X", "venue": venue}, 404, "rest-occurrence-not-found"},
		{"not a series", evPath + "/occurrences/20270201T100000", "admin", map[string]any{"title": "X", "venue": venue}, 400, "rest-event-not-recurring"},
		{"another's series by a contributor", occ, "contributor", map[string]any{"title": "X", "venue": venue}, 403, forbidden},
		{"another's series by an author", occ, "author", map[string]any{"title": "X", "venue": venue}, 403, forbidden},
	} {
		add(change, s.why, "PATCH", s.url, s.as, s.body, s.status, s.code)
	}
	const cancel = "DELETE /events/{id}/occurrences/{key}"
	add(cancel, "anonymous", "DELETE", occ, "", nil, 401, "")
	add(cancel, "another's series by a contributor", "DELETE", occ, "contributor", nil, 403, forbidden)
	add(cancel, "another's series by an author", "DELETE", occ, "author", nil, 403, forbidden)
	add(cancel, "unknown occurrence", "DELETE", fmt.Sprintf("events/%d/occurrences/20990101T190000", series), "admin", nil, 404, "rest-occurrence-not-found")
	add(cancel, "not a series", "DELETE", evPath+"/occurrences/20270201T100000", "admin", nil, 400, "rest-event-not-recurring")

	// The admin routes that write.
	add("POST /admin/webhooks", "by an editor", "POST", "admin/webhooks", "editor", map[string]any{"url": "https://hooks.example/in"}, 403, "")
	add("POST /admin/webhooks", "missing URL", "POST", "admin/webhooks", "admin", map[string]any{"events": []any{"*"}}, 400, "rest_missing_callback_param")
	add("POST /admin/webhooks", "bad URL", "POST", "admin/webhooks", "admin", map[string]any{"url": "ftp://hooks.example/in"}, 400, invalid)
	add("POST /admin/webhooks", "private address", "POST", "admin/webhooks", "admin", map[string]any{"url": "http://127.0.0.1/in"}, 400, invalid)
	add("POST /admin/webhooks", "bad events", "POST", "admin/webhooks", "admin", map[string]any{"url": "https://hooks.example/in", "events": []any{"bogus"}}, 400, invalid)
	add("POST /admin/webhooks", "bad secret", "POST", "admin/webhooks", "admin", map[string]any{"url": "https://hooks.example/in", "secret": "short"}, 400, invalid)
	add("PATCH /admin/webhooks/{id}", "unknown webhook", "PATCH", "admin/webhooks/999990", "admin", map[string]any{"active": false}, 404, "")
	add("PATCH /admin/webhooks/{id}", "by an editor", "PATCH", "admin/webhooks/999990", "editor", map[string]any{"active": false}, 403, "")
	add("PATCH /admin/webhooks/{id}", "bad URL", "PATCH", "admin/webhooks/999990", "admin", map[string]any{"url": "ftp://hooks.example/in"}, 400, invalid)
	add("PATCH /admin/webhooks/{id}", "bad description", "PATCH", "admin/webhooks/999990", "admin", map[string]any{"description": strings.Repeat("x", 100_000)}, 400, invalid)
	add("DELETE /admin/webhooks/{id}", "unknown webhook", "DELETE", "admin/webhooks/999990", "admin", nil, 404, "")
	add("POST /admin/webhooks/{id}/ping", "unknown webhook", "POST", "admin/webhooks/999990/ping", "admin", nil, 404, "")
	add("PATCH /admin/users/{id}", "bad role", "PATCH", fmt.Sprintf("admin/users/%d", e.users["author"].ID), "admin", map[string]any{"role": "overlord"}, 400, invalid)
	add("PATCH /admin/users/{id}", "by an editor", "PATCH", fmt.Sprintf("admin/users/%d", e.users["author"].ID), "editor", map[string]any{"role": "admin"}, 403, "")
	add("PATCH /admin/users/{id}", "unknown user", "PATCH", "admin/users/999990", "admin", map[string]any{"role": "editor"}, 404, "rest_user_invalid_id")
	add("POST /admin/tokens", "unknown user", "POST", "admin/tokens", "admin", map[string]any{"user": 999990, "name": "x"}, 400, "")
	add("POST /admin/tokens", "over-long name", "POST", "admin/tokens", "admin", map[string]any{"user": e.users["author"].ID, "name": long}, 400, invalid)
	add("POST /admin/tokens", "bad lifetime", "POST", "admin/tokens", "admin", map[string]any{"user": e.users["author"].ID, "expires_in": 1}, 400, invalid)
	add("POST /admin/tokens", "by an editor", "POST", "admin/tokens", "editor", map[string]any{"user": e.users["editor"].ID}, 403, "")
	add("DELETE /admin/tokens/{token}", "unknown token", "DELETE", "admin/tokens/999990", "admin", nil, 404, "")
	add("DELETE /admin/tokens/{token}", "by an editor", "DELETE", "admin/tokens/1", "editor", nil, 403, "")
	add("POST /admin/reindex", "by an editor", "POST", "admin/reindex", "editor", nil, 403, "")
	add("DELETE /admin/reindex", "by an editor", "DELETE", "admin/reindex", "editor", nil, 403, "")
	return steps
}

// refusedLargeWrites makes a series whose record is near the store's
// bound (repository.MaxRecordBytes) and returns writes that would take it,
// or a new series split from it, over the bound (413
// rest_document_too_large), each naming new linked records; and one that
// takes the series' override text over MAX_SERIES_OVERRIDE_TEXT. The
// series' overrides are written to the store directly: built through the
// API, twenty rewrites of a 16 MB record take minutes on FerretDB.
func refusedLargeWrites(t *testing.T, e *env) []refusal {
	ctx := context.Background()
	venue := e.must(201, "POST", "venues", "admin", map[string]any{"venue": "Old Hall"}).id()
	first := func(id int64) string { return fmt.Sprintf("events/%d/occurrences/20270318T190000", id) }
	key := func(i int) string {
		return fmt.Sprintf("2027%s", []string{"0318", "0325", "0401", "0408", "0415", "0422", "0429", "0506", "0513", "0520", "0527", "0603"}[i]) + "T190000"
	}
	// The slug from the answer that made it: a read of the series once
	// it is near 16 MB costs about a second on the embedded FerretDB, and
	// the store's update below keeps the slug.
	made := e.must(201, "POST", "events", "admin", weekly(map[string]any{"title": "Big class", "venue": venue,
		"recurrence": map[string]any{"rules": []any{"FREQ=WEEKLY;COUNT=12"}}}))
	big, slug := made.id(), made.str("slug")
	texts := e.must(201, "POST", "events", "admin", weekly(map[string]any{"title": "Wordy class", "venue": venue,
		"recurrence": map[string]any{"rules": []any{"FREQ=WEEKLY;COUNT=12"}}})).id()
	// big: its excerpt takes it to 100,000 bytes below the record bound
	// (text the API's field bounds never see: it is written to the store).
	// One flat string rather than long costs on many occurrences: the
	// embedded FerretDB decodes a document once per level of nesting, so
	// each read of the series costs a third less, and every refusal below
	// still takes the record (or, for the split, the new series, which
	// keeps the excerpt) past the bound by the description it adds.
	target := repository.MaxRecordBytes - 100_000
	if _, err := e.store.UpdateRecord(ctx, big, func(p *repository.Record) error {
		for range 2 {
			size, err := repository.RecordSize(p)
			if err != nil {
				return err
			}
			p.Excerpt = repository.Text{"en": strings.Repeat("c", len(p.Excerpt["en"])+target-500-size)}
		}
		size, err := repository.RecordSize(p)
		if err != nil || size < target-1000 || size > target {
			return fmt.Errorf("the series is %d bytes, want about %d (%v)", size, target, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// texts: its overrides hold 50,000 bytes less text than the override
	// text bound.
	limit := e.cfg.MaxSeriesOverrideText
	if _, err := e.store.UpdateRecord(ctx, texts, func(p *repository.Record) error {
		per := (limit - 50_000) / 10
		for i := 2; i < 12; i++ {
			p.Event.Overrides = append(p.Event.Overrides, repository.OccurrenceOverride{Key: key(i), Content: repository.Text{"en": strings.Repeat("t", per)}})
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	n := 0
	news := func(fields map[string]any) map[string]any {
		n++
		b := map[string]any{"categories": []any{fmt.Sprintf("Brand New Cat %d", n)}, "tags": []any{fmt.Sprintf("brandnewtag%d", n)},
			"venue":     []any{map[string]any{"venue": fmt.Sprintf("Brand New Hall %d", n)}},
			"organizer": []any{map[string]any{"organizer": fmt.Sprintf("Brand New Org %d", n)}},
			"image":     fmt.Sprintf("http://img.example/brand-new-%d.png", n)}
		for k, v := range fields {
			b[k] = v
		}
		return b
	}
	desc := strings.Repeat("d", 150_000)
	const tooLarge = "rest_document_too_large"
	split := fmt.Sprintf("events/%d/occurrences/%s/split", big, key(1))
	return []refusal{
		{"PATCH /events/{id}", "record too large", "PATCH", fmt.Sprintf("events/%d", big), "admin", news(map[string]any{"description": desc}), 413, tooLarge},
		{"PATCH /events/{id}", "record too large, new venue only", "PATCH", fmt.Sprintf("events/%d", big), "admin",
			map[string]any{"description": desc, "venue": map[string]any{"venue": "Brand New Hall"}}, 413, tooLarge},
		{"PUT /events/by-slug/{slug}", "record too large", "PUT", "events/by-slug/" + slug, "admin", news(map[string]any{"description": desc}), 413, tooLarge},
		{"POST /events/{id}/occurrences/{key}/split", "record too large", "POST", split, "admin", news(map[string]any{"description": desc}), 413, tooLarge},
		{"PATCH /events/{id}/occurrences/{key}", "record too large", "PATCH", first(big), "admin", map[string]any{"description": desc, "venue": venue}, 413, tooLarge},
		{"PATCH /events/{id}/occurrences/{key}", "override text bound", "PATCH", first(texts), "admin", map[string]any{"description": desc, "venue": venue}, 400, "rest_series_override_text_limit"},
	}
}

// largeVariants are the steps of refusedLargeWrites that take the refusal
// path of an earlier step (the same handler and size check, on another
// address or with other linked records), each with that step: the
// MongoDB run leaves them out, the SQLite run sends them.
var largeVariants = map[string]string{
	"PATCH /events/{id}: record too large, new venue only": "PATCH /events/{id}: record too large",
	"PUT /events/by-slug/{slug}: record too large":         "PATCH /events/{id}: record too large",
}

// refusedRateWrites spends an author's write rate (WRITE_RATE=0.001,
// WRITE_BURST=1: one write, and the server's clock does not move) on a
// series and returns the author's writes that follow, each refused 429
// with news that would create linked records.
func refusedRateWrites(t *testing.T, e *env) []refusal {
	series := e.must(201, "POST", "events", "author", weekly(nil)).id()
	occ := fmt.Sprintf("events/%d/occurrences/20270401T190000", series)
	news := map[string]any{"categories": []any{"Brand New Cat"}, "venue": map[string]any{"venue": "Brand New Hall"},
		"organizer": map[string]any{"organizer": "Brand New Org"}}
	const limited = "rest_too_many_requests"
	return []refusal{
		{"POST /events", "write rate", "POST", "events", "author", merged(news, map[string]any{"title": "New Event", "start_date": "2027-05-01 10:00:00", "end_date": "2027-05-01 12:00:00"}), 429, limited},
		{"PATCH /events/{id}", "write rate", "PATCH", fmt.Sprintf("events/%d", series), "author", news, 429, limited},
		{"POST /events/{id}/occurrences/{key}/split", "write rate", "POST", occ + "/split", "author", news, 429, limited},
		{"PATCH /events/{id}/occurrences/{key}", "write rate", "PATCH", occ, "author", map[string]any{"title": "Changed"}, 429, limited},
		{"DELETE /events/{id}/occurrences/{key}", "write rate", "DELETE", occ, "author", nil, 429, limited},
		{"DELETE /events/{id}", "write rate", "DELETE", fmt.Sprintf("events/%d", series), "author", nil, 429, limited},
		{"POST /venues", "write rate", "POST", "venues", "author", map[string]any{"venue": "Brand New Hall"}, 429, limited},
		{"POST /organizers", "write rate", "POST", "organizers", "author", map[string]any{"organizer": "Brand New Org"}, 429, limited},
		{"POST /categories", "write rate", "POST", "categories", "author", map[string]any{"name": "Brand New Cat"}, 429, limited},
	}
}

// merged returns a new map with the entries of a and then b.
func merged(a, b map[string]any) map[string]any {
	out := map[string]any{}
	for _, m := range []map[string]any{a, b} {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}
