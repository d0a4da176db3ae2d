package api_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/repository/mongo"
	"github.com/calendar/eventcal/repository/mongo/mongotest"

	"go.mongodb.org/mongo-driver/v2/bson"
	mdriver "go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// dumpSQLite returns every table of the SQLite store in dir, each table's
// rows in the order of all their columns, as text: two dumps are equal
// exactly when the stores hold the same data.
func dumpSQLite(t testing.TB, dir string) string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "calendar.db")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, n)
	}
	rows.Close()
	var b strings.Builder
	for _, table := range tables {
		rs, err := db.Query(`SELECT * FROM "` + table + `"`)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rs.Columns()
		var lines []string
		for rs.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rs.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			var cells []string
			for i, v := range vals {
				if bs, ok := v.([]byte); ok {
					v = string(bs)
				}
				cells = append(cells, fmt.Sprintf("%s=%#v", cols[i], v))
			}
			lines = append(lines, strings.Join(cells, " "))
		}
		rs.Close()
		sort.Strings(lines)
		fmt.Fprintf(&b, "== %s (%d rows)\n%s\n", table, len(lines), strings.Join(lines, "\n"))
	}
	return b.String()
}

// dumpMongo returns every collection of a MongoDB database, each
// collection's documents as canonical extended JSON, sorted.
func dumpMongo(t testing.TB, db *mdriver.Database) string {
	t.Helper()
	ctx := context.Background()
	names, err := db.ListCollectionNames(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, name := range names {
		cur, err := db.Collection(name).Find(ctx, bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for cur.Next(ctx) {
			j, err := bson.MarshalExtJSON(cur.Current, true, false)
			if err != nil {
				t.Fatal(err)
			}
			lines = append(lines, string(j))
		}
		if err := cur.Err(); err != nil {
			t.Fatal(err)
		}
		cur.Close(ctx)
		sort.Strings(lines)
		fmt.Fprintf(&b, "== %s (%d documents)\n%s\n", name, len(lines), strings.Join(lines, "\n"))
	}
	return b.String()
}

// firstDiff shows where two dumps part, for the failure message.
func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	var out []string
	for i := 0; i < max(len(al), len(bl)) && len(out) < 12; i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			out = append(out, fmt.Sprintf("  line %d\n    before: %.300s\n    after:  %.300s", i+1, x, y))
		}
	}
	return strings.Join(out, "\n")
}

// TestRefusedWriteLeavesNothing sends, on every write route (create and
// update by ID and by slug of events, venues and organizers; create and
// update of categories and tags; the occurrence change and split), requests
// refused at each validation step: the declared validators (bad time zone,
// bad cost, over-long field, bad status, bad recurrence syntax, missing
// title, bad date), the look-ups (unknown venue, author, image, parent;
// another author's name; a new tag or image URL the role may not create;
// bad inline venue data; an inline venue naming an unknown image) and the
// rules applied last (end before start, a series too long for its rule,
// the account's document bound, an occurrence published before its
// series, a category made its own ancestor). Each names new linked
// records where the route takes them (a new category, a new tag, an inline
// venue and organizer, an image URL), and the store must be exactly as
// before: a dump of every table (SQLite) or collection (MongoDB on an
// embedded FerretDB), compared byte for byte. The sync worker does not
// run, so only requests change the store.
func TestRefusedWriteLeavesNothing(t *testing.T) {
	t.Parallel()
	t.Run("sqlite", func(t *testing.T) {
		dir := t.TempDir()
		e := newEnvWith(t, dir, envOptions{noWorker: true}, "MAX_ACCOUNT_DOCUMENTS", "20")
		testRefusedWrites(t, e, func() string { return dumpSQLite(t, dir) })
	})
	t.Run("mongo", func(t *testing.T) {
		var db *mdriver.Database
		open := func(t testing.TB, _ *config.Config) repository.Store {
			uri, name := mongotest.Start(t), mongotest.Database(t)
			st, err := mongo.Open(context.Background(), uri, name)
			if err != nil {
				t.Fatal(err)
			}
			cl, err := mdriver.Connect(options.Client().ApplyURI(uri))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cl.Disconnect(context.Background()) })
			db = cl.Database(name)
			return st
		}
		e := newEnvWith(t, t.TempDir(), envOptions{noWorker: true, openStore: open}, "MAX_ACCOUNT_DOCUMENTS", "20")
		testRefusedWrites(t, e, func() string { return dumpMongo(t, db) })
	})
}

func testRefusedWrites(t *testing.T, e *env, dump func() string) {
	// What the requests may link to.
	venue := e.must(201, "POST", "venues", "admin", map[string]any{"venue": "Old Hall", "city": "Gent"}).id()
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
	evPath, evSlug := fmt.Sprintf("events/%d", ev.id()), "events/by-slug/"+ev.str("slug")
	venuePath, orgPath := fmt.Sprintf("venues/%d", venue), fmt.Sprintf("organizers/%d", org)
	venueSlug := "venues/by-slug/" + e.must(200, "GET", venuePath, "admin", nil).str("slug")
	orgSlug := "organizers/by-slug/" + e.must(200, "GET", orgPath, "admin", nil).str("slug")
	occ := fmt.Sprintf("events/%d/occurrences/20270401T190000", series)
	draftOcc := fmt.Sprintf("events/%d/occurrences/20270401T190000", draft)
	split := occ + "/split"

	// news are the new linked records a request names: a new category and
	// tag, inline venue and organizer data, and an image URL.
	// Each request's names are its own, so that each would create records.
	n := 0
	news := func(fields map[string]any) map[string]any {
		n++
		b := map[string]any{"categories": []any{fmt.Sprintf("Brand New Cat %d", n)}, "tags": []any{fmt.Sprintf("brandnewtag%d", n)},
			"venue":     []any{map[string]any{"venue": fmt.Sprintf("Brand New Hall %d", n), "city": "Leuven"}},
			"organizer": []any{map[string]any{"organizer": fmt.Sprintf("Brand New Org %d", n)}},
			"image":     fmt.Sprintf("http://img.example/brand-new-%d.png", n)}
		for k, v := range fields {
			if v == nil {
				delete(b, k)
			} else {
				b[k] = v
			}
		}
		return b
	}
	// event is a valid new event with news and the fields given.
	event := func(fields map[string]any) map[string]any {
		b := news(map[string]any{"title": "New Event", "start_date": "2027-05-01 10:00:00", "end_date": "2027-05-01 12:00:00"})
		for k, v := range fields {
			if v == nil {
				delete(b, k)
			} else {
				b[k] = v
			}
		}
		return b
	}
	// place is a valid venue or organizer write with a new image URL.
	place := func(nameField string, fields map[string]any) map[string]any {
		n++
		b := map[string]any{nameField: fmt.Sprintf("Brand New Place %d", n), "image": fmt.Sprintf("http://img.example/brand-new-place-%d.png", n)}
		for k, v := range fields {
			b[k] = v
		}
		return b
	}
	long := strings.Repeat("x", 5000)
	eventSteps := []struct {
		name   string
		as     string
		fields map[string]any
		status int
	}{
		{"end before start", "admin", map[string]any{"start_date": "2027-05-02 10:00:00", "end_date": "2027-05-01 10:00:00"}, 400},
		{"end before start, all day", "admin", map[string]any{"all_day": true, "start_date": "2027-05-02", "end_date": "2027-05-01"}, 400},
		{"bad time zone", "admin", map[string]any{"timezone": "Mars/Olympus"}, 400},
		{"bad date", "admin", map[string]any{"start_date": "not a date"}, 400},
		{"bad publish date", "admin", map[string]any{"date": "the day after never"}, 400},
		{"unknown venue ID", "admin", map[string]any{"venue": []any{999999, map[string]any{"venue": "Brand New Hall"}}}, 400},
		{"unknown organizer ID", "admin", map[string]any{"organizer": []any{map[string]any{"organizer": "Brand New Org"}, 999998}}, 400},
		{"bad inline venue", "admin", map[string]any{"venue": []any{map[string]any{"venue": "Brand New Hall", "website": "not a url"}}}, 400},
		{"inline venue with an unknown image", "admin", map[string]any{"venue": []any{map[string]any{"venue": "Brand New Hall", "image": 999997}}}, 400},
		{"bad recurrence rule", "admin", map[string]any{"recurrence": map[string]any{"rules": []any{"FREQ=SOMETIMES"}}}, 400},
		{"series too long for its rule", "admin", map[string]any{"recurrence": map[string]any{"rules": []any{"FREQ=SECONDLY"}}}, 400},
		{"bad cost", "admin", map[string]any{"cost": map[string]any{"a": 1}}, 400},
		{"over-long title", "admin", map[string]any{"title": long}, 400},
		{"bad status", "admin", map[string]any{"status": "bogus"}, 400},
		{"bad website", "admin", map[string]any{"website": "javascript:alert(1)"}, 400},
		{"unknown author", "admin", map[string]any{"author": 999996}, 400},
		{"unknown image ID", "admin", map[string]any{"image": 999995}, 400},
		{"another author's name", "author", map[string]any{"author": e.users["editor"].ID}, 403},
		{"new tag by an author", "author", map[string]any{"categories": []any{cat}}, 403},
		{"image URL by a contributor", "contributor", map[string]any{"categories": []any{cat}, "tags": []any{tag}}, 400},
		{"account document bound", "author", map[string]any{"tags": []any{tag}, "image": nil, "recurrence": map[string]any{"rules": []any{"FREQ=DAILY;COUNT=60"}}}, 400},
	}
	type step struct {
		name, method, url, as string
		body                  any
		status                int
	}
	var steps []step
	for _, s := range eventSteps {
		steps = append(steps, step{"create event: " + s.name, "POST", "events", s.as, event(s.fields), s.status})
		target := map[string]string{"admin": evPath, "author": fmt.Sprintf("events/%d", own), "contributor": fmt.Sprintf("events/%d", cown)}[s.as]
		steps = append(steps, step{"update event: " + s.name, "PATCH", target, s.as, news(s.fields), s.status})
		if s.as == "admin" {
			steps = append(steps, step{"update event by slug: " + s.name, "PUT", evSlug, s.as, news(s.fields), s.status})
			steps = append(steps, step{"split: " + s.name, "POST", split, s.as, news(s.fields), s.status})
		}
	}
	steps = append(steps,
		step{"create event: missing title", "POST", "events", "admin", event(map[string]any{"title": nil}), 400},
		step{"split: at the first occurrence", "POST", fmt.Sprintf("events/%d/occurrences/20270318T190000/split", series), "admin", news(nil), 400},
		step{"split: unknown occurrence", "POST", fmt.Sprintf("events/%d/occurrences/20990101T190000/split", series), "admin", news(nil), 404},
		step{"split: contributor", "POST", split, "contributor", news(nil), 403},
	)
	for _, p := range []struct{ kind, list, path, slug, name string }{
		{"venue", "venues", venuePath, venueSlug, "venue"},
		{"organizer", "organizers", orgPath, orgSlug, "organizer"},
	} {
		placeSteps := []struct {
			name   string
			as     string
			fields map[string]any
			status int
		}{
			{"over-long name", "admin", map[string]any{p.name: long}, 400},
			{"bad website", "admin", map[string]any{"website": "ftp://x"}, 400},
			{"bad phone", "admin", map[string]any{"phone": "1\n2"}, 400},
			{"bad status", "admin", map[string]any{"status": "bogus"}, 400},
			{"bad date", "admin", map[string]any{"date": "never"}, 400},
			{"unknown author", "admin", map[string]any{"author": 999996}, 400},
			{"unknown image ID", "admin", map[string]any{"image": 999995}, 400},
			{"another author's name", "author", map[string]any{"author": e.users["editor"].ID}, 403},
			{"image URL by a contributor", "contributor", map[string]any{}, 400},
		}
		if p.kind == "venue" {
			placeSteps = append(placeSteps, struct {
				name   string
				as     string
				fields map[string]any
				status int
			}{"bad latitude", "admin", map[string]any{"geo_lat": 91}, 400})
		} else {
			placeSteps = append(placeSteps, struct {
				name   string
				as     string
				fields map[string]any
				status int
			}{"bad e-mail", "admin", map[string]any{"email": "not an address"}, 400})
		}
		for _, s := range placeSteps {
			steps = append(steps, step{"create " + p.kind + ": " + s.name, "POST", p.list, s.as, place(p.name, s.fields), s.status})
			if s.as == "admin" {
				steps = append(steps, step{"update " + p.kind + ": " + s.name, "PATCH", p.path, s.as, place(p.name, s.fields), s.status},
					step{"update " + p.kind + " by slug: " + s.name, "POST", p.slug, s.as, place(p.name, s.fields), s.status})
			}
		}
	}
	for _, tx := range []struct{ list, item string }{{"categories", fmt.Sprintf("categories/%d", child)}, {"tags", fmt.Sprintf("tags/%d", tag)}} {
		steps = append(steps,
			step{"create " + tx.list + ": over-long name", "POST", tx.list, "admin", map[string]any{"name": long}, 400},
			step{"create " + tx.list + ": empty name", "POST", tx.list, "admin", map[string]any{"name": ""}, 400},
			step{"create " + tx.list + ": existing name", "POST", tx.list, "admin", map[string]any{"name": map[string]string{"categories": "Child Cat", "tags": "oldtag"}[tx.list], "parent": map[string]any{"categories": cat, "tags": nil}[tx.list]}, 400},
			step{"create " + tx.list + ": contributor", "POST", tx.list, "contributor", map[string]any{"name": "Brand New Term"}, 403},
			step{"update " + tx.list + ": over-long name", "PATCH", tx.item, "admin", map[string]any{"name": long, "description": "New."}, 400},
			step{"update " + tx.list + ": contributor", "PATCH", tx.item, "contributor", map[string]any{"name": "Renamed"}, 403},
		)
	}
	steps = append(steps,
		step{"create categories: unknown parent", "POST", "categories", "admin", map[string]any{"name": "Brand New Cat", "parent": 999994}, 400},
		step{"update categories: own ancestor", "PATCH", fmt.Sprintf("categories/%d", cat), "admin", map[string]any{"name": "Renamed", "parent": child}, 400},
	)
	for _, s := range []struct {
		name, url string
		body      map[string]any
		status    int
	}{
		{"end before start", occ, map[string]any{"start_date": "2027-04-02 10:00:00", "end_date": "2027-04-01 10:00:00", "organizer": org}, 400},
		{"bad date", occ, map[string]any{"start_date": "not a date"}, 400},
		{"inline venue", occ, map[string]any{"venue": []any{map[string]any{"venue": "Brand New Hall"}}}, 400},
		{"unknown venue ID and new organizer", occ, map[string]any{"venue": 999999, "organizer": []any{map[string]any{"organizer": "Brand New Org"}}}, 400},
		{"over-long title", occ, map[string]any{"title": long, "venue": venue}, 400},
		{"bad cost", occ, map[string]any{"cost": map[string]any{"a": 1}, "venue": venue}, 400},
		{"bad status", occ, map[string]any{"status": "bogus", "venue": venue}, 400},
		{"published before its series", draftOcc, map[string]any{"status": "publish", "venue": venue, "organizer": org}, 400},
		{"unknown occurrence", fmt.Sprintf("events/%d/occurrences/20990101T190000", series), map[string]any{"title": "X", "venue": venue}, 404},
	} {
		steps = append(steps, step{"change occurrence: " + s.name, "PATCH", s.url, "admin", s.body, s.status})
	}

	// The index marks of the set-up are cleared (one sync pass at a time,
	// the worker does not run), so that a mark a refused write leaves
	// shows in the dump.
	for i := 0; ; i++ {
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
		e.must(200, "GET", "events", as, nil) // a token's first use is noted (last_used), refused or not
	}
	before := dump()
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			e.t = t
			r := e.do(s.method, s.url, s.as, s.body)
			if r.status != s.status {
				t.Errorf("%s %s: status %d, want %d; body %.400s", s.method, s.url, r.status, s.status, r.raw)
			}
			if after := dump(); after != before {
				t.Errorf("%s %s answered %d and changed the store:\n%s", s.method, s.url, r.status, firstDiff(before, after))
				before = after // the next step is compared with this store
			}
		})
	}
	// The table's requests are refused for their one fault: the same
	// request without it is accepted (and writes the linked records).
	e.t = t
	r := e.must(201, "POST", "events", "admin", event(nil))
	if got := fmt.Sprint(r.path("categories.0.name"), r.path("tags.0.name"), r.path("venue.venue")); !strings.Contains(got, "Brand New Cat") || !strings.Contains(got, "brandnewtag") || !strings.Contains(got, "Brand New Hall") {
		t.Errorf("the valid request's links: %s", got)
	}
	if dump() == before {
		t.Error("a valid write left the dump unchanged: the dump does not see writes")
	}
}

// failEventWrites is a store whose event writes fail while on (a store
// error after the linked records were made).
type failEventWrites struct {
	repository.Store
	on atomic.Bool
}

func (f *failEventWrites) CreatePost(ctx context.Context, p *repository.Post) error {
	if f.on.Load() && p.Kind == repository.KindEvent {
		return errors.New("injected: the event write fails")
	}
	return f.Store.CreatePost(ctx, p)
}

func (f *failEventWrites) UpdatePost(ctx context.Context, id int64, fn func(p *repository.Post) error) (*repository.Post, error) {
	return f.Store.UpdatePost(ctx, id, func(p *repository.Post) error {
		if f.on.Load() && p.Kind == repository.KindEvent {
			return errors.New("injected: the event write fails")
		}
		return fn(p)
	})
}

// TestFailedWriteUndoesLinkedRecords: when the event's own write fails
// for a store reason after its new category, tag, inline venue and
// organizer and image URL were made, the write removes them again.
func TestFailedWriteUndoesLinkedRecords(t *testing.T) {
	t.Parallel()
	fs := &failEventWrites{}
	e := newEnvWith(t, t.TempDir(), envOptions{noWorker: true, wrapStore: func(s repository.Store) repository.Store { fs.Store = s; return fs }})
	ev := e.must(201, "POST", "events", "admin", map[string]any{"title": "Old Event", "start_date": "2027-02-01 10:00:00", "end_date": "2027-02-01 12:00:00"}).id()
	series := e.must(201, "POST", "events", "admin", weekly(nil)).id()
	fs.on.Store(true)
	ctx := context.Background()
	for i, tc := range []struct{ name, method, url string }{
		{"create", "POST", "events"},
		{"update", "PATCH", fmt.Sprintf("events/%d", ev)},
		{"split", "POST", fmt.Sprintf("events/%d/occurrences/20270401T190000/split", series)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.t = t
			cat, tag, hall, org := fmt.Sprintf("Undo Cat %d", i), fmt.Sprintf("undotag%d", i), fmt.Sprintf("Undo Hall %d", i), fmt.Sprintf("Undo Org %d", i)
			img := fmt.Sprintf("http://img.example/undo-%d.png", i)
			body := map[string]any{"title": "New Event", "start_date": "2027-05-01 10:00:00", "end_date": "2027-05-01 12:00:00",
				"categories": []any{cat}, "tags": []any{tag}, "venue": map[string]any{"venue": hall}, "organizer": map[string]any{"organizer": org}, "image": img}
			if tc.name == "split" {
				delete(body, "start_date")
				delete(body, "end_date")
			}
			r := e.do(tc.method, tc.url, "admin", body)
			if r.status < 500 {
				t.Fatalf("status %d, want a store error: %.300s", r.status, r.raw)
			}
			for _, q := range []repository.TermQuery{{Taxonomy: repository.TaxCategory, Name: cat, NameLang: "en"}, {Taxonomy: repository.TaxTag, Name: tag, NameLang: "en"}} {
				if ts, err := e.store.FindTerms(ctx, q); err != nil || len(ts) != 0 {
					t.Errorf("term %q: %d left (%v)", q.Name, len(ts), err)
				}
			}
			for _, q := range []repository.PostQuery{{Kind: repository.KindVenue, Title: hall, TitleLang: "en"},
				{Kind: repository.KindOrganizer, Title: org, TitleLang: "en"}, {Kind: repository.KindImage, ImageURL: img}} {
				if ps, err := e.store.FindPosts(ctx, q); err != nil || len(ps) != 0 {
					t.Errorf("%s %q%s: %d left (%v)", q.Kind, q.Title, q.ImageURL, len(ps), err)
				}
			}
		})
	}
}
