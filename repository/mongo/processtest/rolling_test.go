package processtest

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/calendar/eventcal/repository/mongo/mongotest"
)

// previousLayout is the commit before the string-_id layout (4454500):
// the previous released layout, numeric _ids.
const previousLayout = "445450092588a2372eda58da9146b4174a5bc0c4^"

// envNewSource names a directory holding another checkout of the module
// to build the "new" replica from (by default this one): pointing it at a
// checkout of an older main shows what this test catches there.
const envNewSource = "PROCESSTEST_NEW_SOURCE"

// buildPrevious extracts previousLayout from the repository's history
// (git archive) and returns its eventcal, built; it skips t when the
// history is not there (a shallow clone). The sources go to a directory
// named by the commit under the user's cache directory (keptBinDir's
// parent), kept between runs, so that go build finds the release's own
// packages compiled by the last run; without a cache directory, to a
// temporary one.
func buildPrevious(t *testing.T, root string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: cannot build the previous release")
	}
	if err := exec.Command("git", "-C", root, "cat-file", "-e", previousLayout+"^{commit}").Run(); err != nil {
		t.Skipf("commit %s is not in this clone's history (shallow clone?): cannot build the previous release", previousLayout)
	}
	parent := t.TempDir()
	if keep := keptBinDir(); keep != "" {
		parent = filepath.Join(filepath.Dir(keep), "processtest-src")
	}
	src := filepath.Join(parent, strings.TrimSuffix(previousLayout, "^")+"-parent")
	if _, err := os.Stat(filepath.Join(src, "go.mod")); err != nil {
		// Extracted beside its place, then renamed into it: a test run
		// at the same time (another checkout) sees all of it or none.
		if err := os.MkdirAll(parent, 0o755); err != nil {
			t.Fatal(err)
		}
		tmp, err := os.MkdirTemp(parent, "extract-")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(tmp)
		archive := exec.Command("sh", "-c", "git -C \"$1\" archive \"$2\" | tar -x -C \"$3\"", "sh", root, previousLayout, tmp)
		if b, err := archive.CombinedOutput(); err != nil {
			t.Fatalf("git archive %s: %v\n%s", previousLayout, err, b)
		}
		if err := os.Rename(tmp, src); err != nil {
			if _, serr := os.Stat(filepath.Join(src, "go.mod")); serr != nil {
				t.Fatalf("place the previous release's sources: %v", err)
			}
		}
	}
	return binary(t, src, ".")
}

// TestRollingUpgrade runs a replica of the previous released layout
// (numeric _ids) and one of this version side by side on one FerretDB
// and one Meilisearch simulator, the old one leading, writes through both,
// then finishes the upgrade (the old replica stops, the new one takes the
// lease and migrates). It checks that the old leader saw every record
// written through the new replica (no "event.deleted" message for a live
// event), that every acknowledged update is there after the migration (no
// lost revision), and that every listed event is read by ID on the new
// replica (no listed-but-404), before and after the migration.
func TestRollingUpgrade(t *testing.T) {
	skipShort(t)
	t.Parallel()
	root := repoRoot(t)
	oldBin := buildPrevious(t, root)
	newSrc := root
	if dir := os.Getenv(envNewSource); dir != "" {
		newSrc = dir
		t.Logf("%s: the new replica is built from %s", envNewSource, dir)
	}
	newBin := binary(t, newSrc, ".")
	srv := startServers(t, root)
	db := mongotest.Database(t)
	ctx := t.Context()
	meta := srv.client.Database(db)

	old := startReplica(t, srv, oldBin, "old-a", db)
	eventually(t, "the old replica leads", func() bool {
		var l struct {
			Holder string `bson:"holder"`
		}
		err := meta.Collection("leases").FindOne(ctx, bson.D{{Key: "name", Value: "leader"}},
			options.FindOne().SetSort(bson.D{{Key: "term", Value: -1}})).Decode(&l)
		return err == nil && l.Holder == "old-a"
	}, old)
	rc := newReceiver(t)
	old.must(t, "POST", "/admin/webhooks", map[string]any{"url": rc.URL, "events": []string{"*"}})

	// titles holds the last acknowledged title of every event.
	titles := map[int64]string{}
	create := func(r *replica, title string) int64 {
		t.Helper()
		out := r.must(t, "POST", "/events", eventBody(title, len(titles)))
		id := int64(out["id"].(float64))
		titles[id] = title
		return id
	}
	update := func(r *replica, id int64, title string) {
		t.Helper()
		code, out, err := r.call("POST", "/events/"+strconv.FormatInt(id, 10), map[string]any{"title": title})
		if err != nil || code != http.StatusOK {
			t.Errorf("update of event %d through %s: %d %v %v", id, r.id, code, out, err)
			return
		}
		titles[id] = title
	}
	var fromOld, fromNew []int64
	for i := range 4 {
		fromOld = append(fromOld, create(old, fmt.Sprintf("Old %d", i)))
	}

	cur := startReplica(t, srv, newBin, "new-b", db)
	// Expand: writes through both, each updating the other's records.
	for i := range 4 {
		fromNew = append(fromNew, create(cur, fmt.Sprintf("New %d", i)))
	}
	for i, id := range fromOld {
		update(cur, id, fmt.Sprintf("Old %d, updated through the new replica", i))
	}
	for i, id := range fromNew {
		update(old, id, fmt.Sprintf("New %d, updated through the old replica", i))
	}
	fromOld = append(fromOld, create(old, "Old, late"))
	create(cur, "New, late")

	checkReads := func(stage string, rs ...*replica) {
		t.Helper()
		for _, r := range rs {
			for id, title := range titles {
				code, out, err := r.call("GET", "/events/"+strconv.FormatInt(id, 10), nil)
				if err != nil || code != http.StatusOK || out["title"] != title {
					t.Errorf("%s: GET /events/%d on %s = %d %v %v; want title %q", stage, id, r.id, code, out["title"], err, title)
				}
			}
		}
	}
	// drained: the leader has processed every write (no mark left).
	drained := func() bool {
		n, err := meta.Collection("index_marks").CountDocuments(ctx, bson.D{})
		return err == nil && n == 0
	}
	// delivered: no webhook delivery is pending.
	delivered := func() bool {
		n, err := meta.Collection("webhook_deliveries").CountDocuments(ctx, bson.D{{Key: "status", Value: bson.D{{Key: "$ne", Value: "delivered"}}}})
		return err == nil && n == 0
	}
	checkListed := func(stage string, r *replica) {
		t.Helper()
		ids, err := r.listedIDs()
		if err != nil {
			t.Fatal(err)
		}
		for id := range titles {
			if !ids[id] {
				t.Errorf("%s: event %d is not listed on %s (dropped from the search index)", stage, id, r.id)
			}
		}
	}
	noDeleted := func(stage string) {
		t.Helper()
		for _, m := range rc.messages() {
			if _, live := titles[m.Item]; live && m.Type == "event.deleted" {
				t.Errorf("%s: message %s %s for event %d, which is live", stage, m.ID, m.Type, m.Item)
			}
		}
	}
	// The old leader indexes and announces everything written so far
	// (the last update of each event is its last message).
	eventually(t, "the old leader processes every write", drained, old, cur)
	eventually(t, "the old leader delivers every message", delivered, old, cur)
	t.Logf("expand: %d events, %d messages received", len(titles), len(rc.messages()))
	checkListed("expand", cur)
	checkReads("expand", old, cur)
	noDeleted("expand")

	// Finish the upgrade: the old replica stops; the new one takes the
	// lease over and migrates.
	old.stop(t)
	eventually(t, "the new replica migrates the database", func() bool {
		var d struct {
			Version int `bson:"version"`
		}
		return meta.Collection("meta").FindOne(ctx, bson.D{{Key: "_id", Value: "layout"}}).Decode(&d) == nil && d.Version == 2
	}, cur)
	for _, coll := range []string{"posts", "terms"} {
		n, err := meta.Collection(coll).CountDocuments(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$type", Value: "number"}}}})
		if err != nil || n != 0 {
			t.Errorf("%d %s left with a numeric _id after the migration (%v)", n, coll, err)
		}
	}
	update(cur, fromOld[0], "Old 0, updated after the upgrade")
	create(cur, "After the upgrade")
	eventually(t, "the new leader processes every write", drained, cur)
	eventually(t, "the new leader delivers every message", delivered, cur)
	checkListed("after the upgrade", cur)
	checkReads("after the upgrade", cur)
	noDeleted("after the upgrade")
	// A listed event is read by ID.
	ids, err := cur.listedIDs()
	if err != nil {
		t.Fatal(err)
	}
	for id := range ids {
		if code, _, err := cur.call("GET", "/events/"+strconv.FormatInt(id, 10), nil); err != nil || code != http.StatusOK {
			t.Errorf("event %d is listed but GET answers %d %v", id, code, err)
		}
	}
	// The previous release cannot lead again. The new replica stops
	// (releasing the lease) and an old one starts: its take-over attempt
	// (a term it inserts after seeing no renewal for LEASE_TTL) stays
	// below the guard, so it never leads and never judges a string-_id
	// record deleted.
	cur.stop(t)
	late := startReplica(t, srv, oldBin, "old-c", db)
	eventually(t, "the restarted old replica tries to take the lease", func() bool {
		n, err := meta.Collection("leases").CountDocuments(ctx, bson.D{{Key: "holder", Value: "old-c"}})
		return err == nil && n > 0
	}, late)
	if n, err := meta.Collection("leases").CountDocuments(ctx, bson.D{{Key: "holder", Value: "old-c"}, {Key: "term", Value: bson.D{{Key: "$gt", Value: 0}}}}); err != nil || n != 0 {
		t.Errorf("the previous release claimed %d real lease terms after the upgrade (%v)", n, err)
	}
	if strings.Contains(late.out.String(), `msg="lease acquired"`) {
		t.Error("the previous release led after the upgrade")
	}
	late.stop(t)
	noDeleted("after an old replica came back")
	if t.Failed() {
		t.Logf("new replica's log:\n%s", tail(cur.out.String(), 6000))
	}
}
