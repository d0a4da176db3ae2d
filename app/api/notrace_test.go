package api_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/repository/sqlite/sqlitetest"

	"go.mongodb.org/mongo-driver/v2/bson"
	mdriver "go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// dumpSQLite returns every table of the SQLite store whose file db
// reads (read only), each table's rows in the order of all their columns,
// as text: two dumps are equal exactly when the stores hold the same
// data.
func dumpSQLite(t testing.TB, db *sql.DB) string {
	t.Helper()
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
		cols, rows := sqlitetest.Rows(t, db, table)
		var lines []string
		for _, vals := range rows {
			var cells []string
			for i, v := range vals {
				if s, ok := v.(string); ok && len(s) > bigRow {
					cells = append(cells, cols[i]+"="+digest([]byte(s)))
					continue
				}
				cells = append(cells, fmt.Sprintf("%s=%#v", cols[i], v))
			}
			lines = append(lines, strings.Join(cells, " "))
		}
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
			if len(cur.Current) > bigRow {
				lines = append(lines, fmt.Sprintf("_id=%s %s", cur.Current.Lookup("_id"), digest(cur.Current)))
				continue
			}
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

// ferretDBFileDSN is the data source name dumpFerretDB opens the file of
// an embedded FerretDB's database with: read only, waiting for FerretDB's
// writes.
func ferretDBFileDSN(file string) string {
	return "file:" + file + "?mode=ro&_pragma=busy_timeout(30000)"
}

// dumpFerretDB is dumpMongo read from the SQLite file of one database of
// an embedded FerretDB (mongotest.StartFiles), through db (opened with
// ferretDBFileDSN): every collection its _ferretdb_collections table
// names, each document as FerretDB stored it (its _ferretdb_sjson text),
// sorted. FerretDB writes a document's text
// afresh on every change, so two dumps are equal exactly when the
// collections hold the same documents; reading the file skips FerretDB's
// decoding of every document, most of a dump's cost over the wire.
func dumpFerretDB(t testing.TB, db *sql.DB) string {
	t.Helper()
	rows, err := db.Query(`SELECT name, table_name FROM _ferretdb_collections ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	var names, tables []string
	for rows.Next() {
		var name, table string
		if err := rows.Scan(&name, &table); err != nil {
			t.Fatal(err)
		}
		names, tables = append(names, name), append(tables, table)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	var b strings.Builder
	for i, table := range tables {
		rs, err := db.Query(`SELECT _ferretdb_sjson FROM "` + table + `"`)
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for rs.Next() {
			var doc string
			if err := rs.Scan(&doc); err != nil {
				t.Fatal(err)
			}
			if len(doc) > bigRow {
				doc = digest([]byte(doc))
			}
			lines = append(lines, doc)
		}
		if err := rs.Err(); err != nil {
			t.Fatal(err)
		}
		rs.Close()
		sort.Strings(lines)
		fmt.Fprintf(&b, "== %s (%d documents)\n%s\n", names[i], len(lines), strings.Join(lines, "\n"))
	}
	return b.String()
}

// dumpUnlessUnchanged returns a dump function of the SQLite file dsn
// opens (dump reads it, as dumpSQLite or dumpFerretDB) that reads the
// file again only when a change was committed to it since the last dump,
// and otherwise returns the last dump: the same text a new read would
// give. SQLite's PRAGMA data_version, asked on one connection, changes
// when any other connection commits a change to the file (WAL or not),
// and only then; the dump reads the version before and after, and keeps
// its text only when both are the same (no commit during the read).
// Most refusals of TestRefusedWriteLeavesNothing commit nothing, and a
// dump near the store's record bound reads and hashes 16 MB. The
// connection opens at the first dump (the file may not exist before)
// and closes when t ends.
func dumpUnlessUnchanged(t *testing.T, dsn func() string, dump func(testing.TB, *sql.DB) string) func() string {
	var (
		db      *sql.DB
		last    string
		version int64 = -1 // of last; -1: none kept
	)
	dataVersion := func() int64 {
		var v int64
		if err := db.QueryRow(`PRAGMA data_version`).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	return func() string {
		t.Helper()
		if db == nil {
			var err error
			if db, err = sql.Open("sqlite", dsn()); err != nil {
				t.Fatal(err)
			}
			// One connection: data_version compares commits seen by
			// the connection asking.
			db.SetMaxOpenConns(1)
			t.Cleanup(func() { db.Close() })
		}
		before := dataVersion()
		if before == version {
			return last
		}
		d := dump(t, db)
		if after := dataVersion(); after == before {
			last, version = d, after
		} else {
			version = -1
		}
		return d
	}
}

// bigRow is the size over which a dump shows a row (document) by its
// digest: equal rows have equal digests, and a dump of a record near the
// store's size bound stays small.
const bigRow = 64 << 10

// digest names a large row of a dump by its length and SHA-256.
func digest(b []byte) string {
	return fmt.Sprintf("(%d bytes, sha256 %x)", len(b), sha256.Sum256(b))
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

// failEventWrites is a store whose event writes fail while on (a store
// error after the linked records were made).
type failEventWrites struct {
	repository.Store
	on atomic.Bool
}

func (f *failEventWrites) CreateRecord(ctx context.Context, p *repository.Record) error {
	if f.on.Load() && p.Kind == repository.KindEvent {
		return errors.New("injected: the event write fails")
	}
	return f.Store.CreateRecord(ctx, p)
}

func (f *failEventWrites) UpdateRecord(ctx context.Context, id int64, fn func(p *repository.Record) error) (*repository.Record, error) {
	return f.Store.UpdateRecord(ctx, id, func(p *repository.Record) error {
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
			for _, q := range []repository.LabelQuery{{Taxonomy: repository.LabelCategory, Name: cat, NameLang: "en"}, {Taxonomy: repository.LabelTag, Name: tag, NameLang: "en"}} {
				if ts, err := e.store.FindLabels(ctx, q); err != nil || len(ts) != 0 {
					t.Errorf("term %q: %d left (%v)", q.Name, len(ts), err)
				}
			}
			for _, q := range []repository.RecordQuery{{Kind: repository.KindVenue, Title: hall, TitleLang: "en"},
				{Kind: repository.KindOrganizer, Title: org, TitleLang: "en"}, {Kind: repository.KindImage, ImageURL: img}} {
				if ps, err := e.store.FindRecords(ctx, q); err != nil || len(ps) != 0 {
					t.Errorf("%s %q%s: %d left (%v)", q.Kind, q.Title, q.ImageURL, len(ps), err)
				}
			}
		})
	}
}
