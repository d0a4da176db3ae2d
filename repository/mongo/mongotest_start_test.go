package mongo_test

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/calendar/eventcal/config/testdeadline"
	"github.com/calendar/eventcal/repository/mongo/mongotest"
)

func TestStartServesDatabases(t *testing.T) {
	// Two servers at once (as parallel tests of other packages start them).
	for _, name := range []string{"first", "second"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			uri, _ := mongotest.StartOwn(t)
			ctx := testdeadline.Context(t)
			client, err := mongo.Connect(options.Client().ApplyURI(uri))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { client.Disconnect(context.Background()) })
			a, b := mongotest.Database(t), mongotest.Database(t)
			if a == b {
				t.Fatalf("Database returned %q twice", a)
			}
			for _, db := range []string{a, b} {
				if _, err := client.Database(db).Collection("c").InsertOne(ctx, bson.D{{Key: "_id", Value: db}}); err != nil {
					t.Fatalf("insert into %s: %v", db, err)
				}
			}
			n, err := client.Database(a).Collection("c").CountDocuments(ctx, bson.D{})
			if err != nil || n != 1 {
				t.Errorf("databases share data: %d documents, %v", n, err)
			}
		})
	}
}

func TestDatabaseNames(t *testing.T) {
	t.Parallel()
	valid := regexp.MustCompile(`^[a-zA-Z0-9_]{1,63}$`)
	long := strings.Repeat("very long sub test name ", 10)
	t.Run(long+"/with/slashes and $pecial.chars", func(t *testing.T) {
		seen := map[string]bool{}
		for range 3 {
			db := mongotest.Database(t)
			if !valid.MatchString(db) {
				t.Errorf("database name %q is not a valid name", db)
			}
			if seen[db] {
				t.Errorf("database name %q returned twice", db)
			}
			seen[db] = true
		}
	})
}

// TestIndexIDLookups checks that FerretDB's SQL for a look-up by a string
// _id uses the index IndexIDLookups adds (it scans the table without it),
// and that FerretDB keeps answering and writing with the index in place.
func TestIndexIDLookups(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	uri, stop, err := mongotest.Embedded(dir, slog.New(slog.DiscardHandler), testdeadline.Of(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := stop(testdeadline.Of(t)); err != nil {
			t.Error(err)
		}
	})
	ctx := testdeadline.Context(t)
	client, err := mongo.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Disconnect(context.Background()) })
	coll := client.Database("db").Collection("marks")
	for i := range 20 {
		if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: fmt.Sprintf("post:%d", i)}, {Key: "seq", Value: i}}); err != nil {
			t.Fatal(err)
		}
	}
	plan := func() string {
		t.Helper()
		db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "db.sqlite")+"?mode=ro")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var table string
		if err := db.QueryRow(`SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'marks%'`).Scan(&table); err != nil {
			t.Fatal(err)
		}
		rows, err := db.Query(fmt.Sprintf(`EXPLAIN QUERY PLAN SELECT _ferretdb_sjson FROM %q WHERE _ferretdb_sjson->'$._id' = ?`, table), `"post:3"`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			out = append(out, detail)
		}
		return strings.Join(out, "; ")
	}
	if p := plan(); !strings.Contains(p, "SCAN") {
		t.Logf("before: %s (FerretDB's own _id index was used: IndexIDLookups may no longer be needed)", p)
	}
	if err := mongotest.IndexIDLookups(dir); err != nil {
		t.Fatal(err)
	}
	if p := plan(); !strings.Contains(p, "USING INDEX") {
		t.Errorf("after IndexIDLookups the look-up is %q, want an index search", p)
	}
	var doc struct {
		Seq int `bson:"seq"`
	}
	if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: "post:3"}}).Decode(&doc); err != nil || doc.Seq != 3 {
		t.Errorf("FindOne after IndexIDLookups = %+v, %v", doc, err)
	}
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: "post:3"}}); !mongo.IsDuplicateKeyError(err) {
		t.Errorf("duplicate _id after IndexIDLookups: %v, want E11000", err)
	}
	if _, err := coll.DeleteOne(ctx, bson.D{{Key: "_id", Value: "post:4"}}); err != nil {
		t.Error(err)
	}
}

// TestStartShares checks that, under mongotest.Main (this package's
// TestMain), Start and StartFiles hand every test the process's one
// FerretDB (the same address and files), while StartOwn starts another.
func TestStartShares(t *testing.T) {
	t.Parallel()
	if os.Getenv(mongotest.EnvURI) != "" {
		t.Skip("TEST_MONGO_URI names an external server")
	}
	addr := func(uri string) string {
		u, err := url.Parse(uri)
		if err != nil {
			t.Fatal(err)
		}
		return u.Host
	}
	var hosts, dirs []string
	for _, start := range []func(t testing.TB) (string, string){
		func(t testing.TB) (string, string) { return mongotest.Start(t), "" },
		mongotest.StartFiles,
		mongotest.StartFiles,
		mongotest.StartOwn,
	} {
		t.Run("start", func(t *testing.T) {
			uri, dir := start(t)
			hosts, dirs = append(hosts, addr(uri)), append(dirs, dir)
		})
	}
	if len(hosts) < 4 {
		t.Fatalf("%d of 4 starts returned a server", len(hosts))
	}
	if hosts[0] != hosts[1] || hosts[1] != hosts[2] || dirs[1] != dirs[2] || dirs[1] == "" {
		t.Errorf("Start and StartFiles handed out servers %v, files %v; want one", hosts[:3], dirs[1:3])
	}
	if hosts[3] == hosts[0] || dirs[3] == dirs[1] {
		t.Errorf("StartOwn handed out the shared server %s (files %s)", hosts[3], dirs[3])
	}
}
