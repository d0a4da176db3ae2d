package mongo_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/calendar/eventcal/config/testdeadline"
	"github.com/calendar/eventcal/config/testsupport"
	"github.com/calendar/eventcal/repository/mongo/mongotest"
)

// TestMain runs the standalone test server's main (cmd/ferretdb, whose
// body is commandMain) when a test starts this binary as the command
// (testsupport.MainCommand). The tests of package mongotest and of its
// command live in this package's test binary (the files mongotest_*_test.go),
// not in their own: each of those would link FerretDB once more at every
// go test run. The tests share one embedded FerretDB (mongotest.Main).
func TestMain(m *testing.M) {
	testsupport.RunMain(commandMain)
	testsupport.CollectLessOften(testGCPercent)
	os.Exit(mongotest.Main(m))
}

// testGCPercent is the collector's target (GOGC) of the package's test
// binary: the embedded FerretDB allocates much per command and keeps
// little, and at 400 the binary took about 4.5 of 31 CPU-s less than at
// the default 100 (two alternating runs each on a busy machine). No test
// here measures memory.
const testGCPercent = 400

// commandMain is cmd/ferretdb's main: Command on the process's
// arguments, exit status 1 on an error.
func commandMain() {
	if err := mongotest.Command(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "ferretdb:", err)
		os.Exit(1)
	}
}

// TestCommandServesAndStops runs the standalone test server's command
// (commandMain, as cmd/ferretdb) on a free port with its files in a given
// directory, writes and reads a document over the wire, stops it with
// SIGTERM (exit status 0) and checks that the SQLite files stayed. It runs
// a separate process: -short skips it.
func TestCommandServesAndStops(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skips the test that builds and runs the standalone FerretDB command")
	}
	tmp := t.TempDir()
	bin := testsupport.MainCommand(t) // this test binary running commandMain
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
