package mongo_test

import (
	"context"
	"fmt"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	driverevent "go.mongodb.org/mongo-driver/v2/event"
	driver "go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/repository/mongo"
	"github.com/calendar/eventcal/repository/mongo/mongotest"
)

// connect returns a driver client on uri, disconnected when the test ends.
func connect(t *testing.T, uri string) *driver.Client {
	t.Helper()
	client, err := driver.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Disconnect(context.Background()) })
	return client
}

// ferretDBOrSkip connects to uri and skips t unless the server is FerretDB
// (its buildInfo names its version).
func ferretDBOrSkip(t *testing.T, uri string) *driver.Client {
	t.Helper()
	client := connect(t, uri)
	if !isFerretDB(t, client) {
		t.Skip("the server is not FerretDB: its pushdown rules do not apply")
	}
	return client
}

// isFerretDB reports whether client's server is FerretDB.
func isFerretDB(t *testing.T, client *driver.Client) bool {
	t.Helper()
	var info bson.M
	if err := client.Database("admin").RunCommand(t.Context(), bson.D{{Key: "buildInfo", Value: 1}}).Decode(&info); err != nil {
		t.Fatal(err)
	}
	_, ok := info["ferretdbVersion"]
	return ok
}

// filterPushdown asks FerretDB (explain's "filterPushdown" extension)
// whether it answers the command cmd ({find: ..., filter: ...} or
// {aggregate: ..., pipeline: [{$match: ...}]}) with SQL rather than by
// decoding every document in Go. (FerretDB's explain reads no other
// command's filter.)
func filterPushdown(t *testing.T, db *driver.Database, cmd bson.D) bool {
	t.Helper()
	var res struct {
		FilterPushdown bool `bson:"filterPushdown"`
	}
	if err := db.RunCommand(t.Context(), bson.D{{Key: "explain", Value: cmd}}).Decode(&res); err != nil {
		t.Fatalf("explain %v: %v", cmd, err)
	}
	return res.FilterPushdown
}

// TestPushdown pins the rule the store's key layout (ids.go) relies on,
// read from FerretDB v1.24's source (internal/backends/sqlite/collection.go,
// Query and Explain): the SQLite handler answers a filter with SQL only
// when it is exactly {_id: <string or ObjectId>}; $in, $eq, a number, or
// any second condition decode the whole collection in Go. find and
// aggregate first drop dotted keys from the filter they hand down
// (EnableNestedPushdown is off), so {_id: "12", "a.b": 1} is pushed down
// there (the rest is checked in Go); count, update, delete and
// findAndModify hand their filter down as it is (msg_count.go,
// msg_update.go, msg_delete.go, msg_findandmodify.go), which explain
// cannot show. The rule is asked of FerretDB itself, through explain.
func TestPushdown(t *testing.T) {
	t.Parallel()
	uri := mongotest.Start(t)
	client := ferretDBOrSkip(t, uri)
	db := client.Database(mongotest.Database(t))
	coll := db.Collection("c")
	if _, err := coll.InsertMany(t.Context(), []any{
		bson.D{{Key: "_id", Value: "12"}, {Key: "id", Value: int64(12)}, {Key: "a", Value: bson.D{{Key: "b", Value: 1}}}},
		bson.D{{Key: "_id", Value: int64(13)}},
	}); err != nil {
		t.Fatal(err)
	}
	find := func(filter bson.D) bson.D { return bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: filter}} }
	match := func(filter bson.D) bson.D {
		return bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$match", Value: filter}}}},
			{Key: "cursor", Value: bson.D{}}}
	}
	for _, tc := range []struct {
		name string
		cmd  bson.D
		want bool
	}{
		{"find by a string _id", find(bson.D{{Key: "_id", Value: "12"}}), true},
		{"find by an ObjectId _id", find(bson.D{{Key: "_id", Value: bson.NewObjectID()}}), true},
		{"find by a numeric _id", find(bson.D{{Key: "_id", Value: int64(13)}}), false},
		{"find by a numeric _id (int32)", find(bson.D{{Key: "_id", Value: int32(13)}}), false},
		{"find by _id $eq string", find(bson.D{{Key: "_id", Value: bson.D{{Key: "$eq", Value: "12"}}}}), false},
		{"find by _id $in strings", find(bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: bson.A{"12", "14"}}}}}), false},
		{"find by _id and a second field", find(bson.D{{Key: "_id", Value: "12"}, {Key: "revision", Value: 1}}), false},
		{"find by _id and a dotted field (dropped from the SQL)", find(bson.D{{Key: "_id", Value: "12"}, {Key: "a.b", Value: 1}}), true},
		{"find by a field other than _id", find(bson.D{{Key: "id", Value: int64(12)}}), false},
		{"find everything", find(bson.D{}), false},
		{"find by $or of _ids", find(bson.D{{Key: "$or", Value: bson.A{bson.D{{Key: "_id", Value: "12"}}}}}), false},
		{"aggregate $match by a string _id", match(bson.D{{Key: "_id", Value: "12"}}), true},
		{"aggregate $match by _id $in", match(bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: bson.A{"12"}}}}}), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := filterPushdown(t, db, tc.cmd); got != tc.want {
				t.Errorf("filterPushdown = %v, want %v", got, tc.want)
			}
		})
	}
}

// commandFilter keeps, of every command a store sends to the posts and
// terms collections, {find: coll, filter: ...} as explain takes it, or
// {command: coll} for the others.
func commandFilter(e *driverevent.CommandStartedEvent) (bson.D, bool) {
	coll, _ := e.Command.Lookup(e.CommandName).StringValueOK()
	if coll != "posts" && coll != "terms" {
		return nil, false
	}
	if e.CommandName == "find" {
		return bson.D{{Key: "find", Value: coll}, {Key: "filter", Value: e.Command.Lookup("filter").Document()}}, true
	}
	return bson.D{{Key: e.CommandName, Value: coll}}, true
}

// TestHotReadsPushedDown checks, by asking FerretDB (explain), that every
// command the item reads send to posts and terms is one FerretDB answers
// with SQL: a post or term by ID or by slug, several by ID (one look-up
// each), a term by slug through FindTerms.
func TestHotReadsPushedDown(t *testing.T) {
	t.Parallel()
	uri := mongotest.Start(t)
	client := ferretDBOrSkip(t, uri)
	dbName := mongotest.Database(t)
	filters := &mongotest.Commands[bson.D]{Record: commandFilter}
	s, err := mongo.Open(t.Context(), uri, dbName, mongo.WithCommandMonitor(filters.Monitor()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	ctx := t.Context()
	if err := s.WaitIndexes(ctx); err != nil { // its commands are not the reads'
		t.Fatal(err)
	}

	cat := &repository.Label{Taxonomy: repository.LabelCategory, Name: repository.Text{"en": "Jazz"}, Slug: repository.Text{"en": "jazz"}}
	tag := &repository.Label{Taxonomy: repository.LabelTag, Name: repository.Text{"en": "live"}, Slug: repository.Text{"en": "live"}}
	for _, term := range []*repository.Label{cat, tag} {
		if err := s.CreateLabel(ctx, term); err != nil {
			t.Fatal(err)
		}
	}
	venue := &repository.Record{Kind: repository.KindVenue, Status: repository.StatusPublish,
		Title: repository.Text{"en": "Hall"}, Slug: repository.Text{"en": "hall"}, Venue: &repository.VenueFields{City: "Gent"}}
	if err := s.CreateRecord(ctx, venue); err != nil {
		t.Fatal(err)
	}
	ev := event("concert")
	ev.Event.Venues, ev.Event.Categories, ev.Event.Tags = []int64{venue.ID}, []int64{cat.ID}, []int64{tag.ID}
	if err := s.CreateRecord(ctx, ev); err != nil {
		t.Fatal(err)
	}
	filters.Take()

	db := client.Database(dbName)
	for _, tc := range []struct {
		name string
		read func() error
	}{
		{"GetPost", func() error { _, err := s.GetRecord(ctx, ev.ID); return err }},
		{"GetPost, missing", func() error {
			if _, err := s.GetRecord(ctx, 999999); err != repository.ErrNotFound {
				return fmt.Errorf("GetPost(missing) = %v", err)
			}
			return nil
		}},
		{"GetPostBySlug", func() error { _, err := s.GetRecordBySlug(ctx, repository.KindEvent, "en", "concert"); return err }},
		{"GetPosts", func() error {
			got, err := s.GetRecords(ctx, []int64{venue.ID, ev.ID, venue.ID, 999999})
			if err == nil && len(got) != 2 {
				err = fmt.Errorf("GetPosts = %d posts, want 2", len(got))
			}
			return err
		}},
		{"GetTerm", func() error { _, err := s.GetLabel(ctx, cat.ID); return err }},
		{"GetTerms", func() error {
			got, err := s.GetLabels(ctx, []int64{cat.ID, tag.ID})
			if err == nil && len(got) != 2 {
				err = fmt.Errorf("GetTerms = %d terms, want 2", len(got))
			}
			return err
		}},
		{"FindTerms by slug", func() error {
			got, err := s.FindLabels(ctx, repository.LabelQuery{Taxonomy: repository.LabelCategory, Slug: "jazz", SlugLang: "en"})
			if err == nil && (len(got) != 1 || got[0].ID != cat.ID) {
				err = fmt.Errorf("FindTerms(slug) = %v, want the category", got)
			}
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.read(); err != nil {
				t.Fatal(err)
			}
			cmds := filters.Take()
			if len(cmds) == 0 {
				t.Fatal("no command sent to posts or terms")
			}
			for _, cmd := range cmds {
				if cmd[0].Key != "find" {
					t.Errorf("%v sent (a read should only find)", cmd)
					continue
				}
				if !filterPushdown(t, db, cmd) {
					t.Errorf("FerretDB scans for %v", cmd)
				}
			}
		})
	}
}
