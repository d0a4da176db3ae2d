package mongotest_test

import (
	"context"
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
			uri := mongotest.Start(t)
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
