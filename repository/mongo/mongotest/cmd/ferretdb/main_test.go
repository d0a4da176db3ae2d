package main

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/calendar/eventcal/config/testdeadline"
	"github.com/calendar/eventcal/config/testsupport"
)

// TestMain runs the command's main when a test starts this binary as the
// command (testsupport.MainCommand).
func TestMain(m *testing.M) {
	testsupport.RunMain(main)
	os.Exit(m.Run())
}

// TestCommandServesAndStops builds the command, runs it on a free port
// with its files in a given directory, writes and reads a document over
// the wire, stops it with SIGTERM (exit status 0) and checks that the
// SQLite files stayed. It runs a separate process: -short skips it.
func TestCommandServesAndStops(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skips the test that builds and runs the standalone FerretDB command")
	}
	tmp := t.TempDir()
	bin := testsupport.MainCommand(t) // this test binary running main
	data := filepath.Join(tmp, "data")
	cmd, addr := testsupport.StartServer(t, bin, "-addr", "127.0.0.1:0", "-dir", data)

	ctx := testdeadline.Context(t)
	client, err := mongo.Connect(options.Client().ApplyURI("mongodb://" + addr + "/"))
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Ping(ctx, nil); err != nil {
		t.Fatalf("ping: %v", err)
	}
	coll := client.Database("probe").Collection("c")
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: "a"}, {Key: "n", Value: 7}}); err != nil {
		t.Fatalf("insert: %v", err)
	}
	var got struct {
		N int `bson:"n"`
	}
	if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: "a"}}).Decode(&got); err != nil || got.N != 7 {
		t.Fatalf("find = %+v, %v; want n 7", got, err)
	}
	client.Disconnect(context.Background())

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("after SIGTERM: %v; want exit status 0", err)
	}
	if files, _ := filepath.Glob(filepath.Join(data, "*.sqlite")); len(files) == 0 {
		t.Errorf("no SQLite files left in -dir %s", data)
	}
}
