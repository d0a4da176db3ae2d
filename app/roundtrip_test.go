package app

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/calendar/eventcal/app/verify"
	"github.com/calendar/eventcal/config/testdeadline"
	"github.com/calendar/eventcal/config/testsupport"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/repository/mongo"
	"github.com/calendar/eventcal/repository/mongo/mongotest"
)

// TestRoundTrip moves a calendar from the embedded store to MongoDB and
// back, as an operator would with the command line: a calendar seeded
// through the API of an embedded service (seedCalendar) is exported while
// that service serves, loaded into a running service on MongoDB (FerretDB)
// with the embedded index, exported from there, loaded into a new
// embedded DATA_DIR and served. Each copy answers every API request of
// every record (JSON and iCalendar, every language, anonymous and every
// role's token, the disabled user's and the expired token) byte for byte
// as the first (verify.Compare; "eventcal verify" once), and so do the
// administrators' views of users, tokens, webhooks and sources, and
// searches and filters. Loading a file again reports everything
// unchanged; no webhook message goes out for the loaded items; the
// first's tokens authenticate on the third, a change there is signed
// with the secrets the first made, and the ID sequences came along.
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	rcv := testsupport.NewRecorder(t)
	feed := tripFeedServer(t)

	firstEnv := tripEnv(map[string]string{"DATA_DIR": t.TempDir()})
	first := startService(t, firstEnv)
	seed := seedCalendar(t, first, firstEnv, rcv, feed.URL+"/partner.ics")
	firstIndex := waitSettled(t, first, nil)
	seed.items = countItems(t, first)

	// Every message the first service sent verifies with its endpoint's
	// secret.
	msgs := rcv.All()
	if len(msgs) == 0 {
		t.Fatal("the first service sent no webhook message")
	}
	for _, m := range msgs {
		if _, err := verifyHook(seed.secrets[m.Path], m); err != nil {
			t.Errorf("first service: %v", err)
		}
	}
	heard := len(msgs)

	// Export from the first while it serves; load into a service on
	// MongoDB with the embedded index, running; load the same file again
	// (before any reader's token use changes a token's last use).
	work := t.TempDir()
	firstFile := filepath.Join(work, "first.jsonl")
	mustCLI(t, firstEnv, "export", "--out", firstFile)
	mongoURI, mongoFiles := mongotest.StartFiles(t)
	secondEnv := tripEnv(map[string]string{"DATA_DIR": t.TempDir(), "MONGO_URI": mongoURI, "MONGO_DATABASE": mongotest.Database(t)})
	second := startService(t, secondEnv)
	indexMongoIDs(t, mongoURI, mongoFiles, secondEnv["MONGO_DATABASE"])
	checkLoaded(t, "MongoDB", mustCLI(t, secondEnv, "load", firstFile).stdout, false)
	checkLoaded(t, "MongoDB, loaded again", mustCLI(t, secondEnv, "load", firstFile).stdout, true)
	waitSettled(t, second, firstIndex)
	compareServices(t, "MongoDB", first, second, seed)
	compareAdminViews(t, "MongoDB", first, second, seed)
	compareSearches(t, "MongoDB", first, second, seed)

	// Export from MongoDB; load into a new embedded DATA_DIR (twice), then
	// start a service on it.
	secondFile := filepath.Join(work, "second.jsonl")
	mustCLI(t, secondEnv, "export", "--out", secondFile)
	thirdEnv := tripEnv(map[string]string{"DATA_DIR": filepath.Join(t.TempDir(), "data")})
	checkLoaded(t, "embedded", mustCLI(t, thirdEnv, "load", secondFile).stdout, false)
	checkLoaded(t, "embedded, loaded again", mustCLI(t, thirdEnv, "load", secondFile).stdout, true)
	third := startService(t, thirdEnv)
	waitSettled(t, third, firstIndex)
	compareServices(t, "embedded again", first, third, seed)
	compareAdminViews(t, "embedded again", first, third, seed)
	compareSearches(t, "embedded again", first, third, seed)
	// The operator's check, as the command line runs it: equal, exit 0.
	checked := mustCLI(t, map[string]string{"EVENTCAL_TOKEN": seed.tokens["eddie"]}, "verify",
		"--from", "http://"+first.addr.String(), "--against", "http://"+third.addr.String(), "--lang", "fr")
	t.Logf("eventcal verify:\n%s%s", checked.stdout, checked.stderr)

	// No webhook message went out for the loaded items.
	for _, m := range rcv.All()[heard:] {
		t.Errorf("a message after the loads, to %s: %s", m.Path, m.Body)
	}
	heard = len(rcv.All())

	// Tokens made on the first authenticate on the third; a change there
	// reaches the receiver signed with the secrets the first made.
	c := newCaller(t, third)
	c.must(200, "GET", "/admin/tokens", seed.tokens["ada"], nil)
	c.must(200, "GET", "/events?status=draft", seed.tokens["eddie-ci"], nil)
	for who, code := range map[string]string{"dora": "rest_user_disabled", "arno-expired": "rest_invalid_token"} {
		if got := c.must(401, "GET", "/events?status=draft", seed.tokens[who], nil); got["code"] != code {
			t.Errorf("%s's token on the third: %v, want 401 %s", who, got, code)
		}
	}
	c.must(200, "POST", itemPath("events", seed.eventID), seed.tokens["eddie"], map[string]any{"title": "Opening night (new date)"})
	waitSettled(t, third, nil)
	got := map[string]bool{}
	for _, m := range rcv.All()[heard:] {
		b, err := verifyHook(seed.secrets[m.Path], m)
		if err != nil {
			t.Errorf("after the round trip: %v", err)
			continue
		}
		if b.Type != "event.updated" || b.Item.ID != seed.eventID || b.Item.Title != "Opening night (new date)" {
			t.Errorf("message to %s: %s, want event.updated of event %d", m.Path, m.Body, seed.eventID)
		}
		got[m.Path] = true
	}
	if !got["/all"] || !got["/events"] || len(got) != 2 {
		t.Errorf("the change reached %v, want /all and /events", got)
	}

	// The sequences came along: what the third draws next comes after
	// everything the first handed out, deleted items included.
	st, err := openStore(context.Background(), first.cfg)
	if err != nil {
		t.Fatal(err)
	}
	seqs, err := st.Sequences(context.Background())
	closeStore(st)
	if err != nil {
		t.Fatal(err)
	}
	made := map[string]int64{
		repository.SeqRecords: idOf(c.must(201, "POST", "/events", seed.tokens["eddie"], map[string]any{"title": "After the move",
			"start_date": "2027-09-01 10:00:00", "end_date": "2027-09-01 11:00:00"})),
		repository.SeqLabels:   idOf(c.must(201, "POST", "/tags", seed.tokens["eddie"], map[string]any{"name": "moved"})),
		repository.SeqWebhooks: idOf(c.must(201, "POST", "/admin/webhooks", tripAdminToken, map[string]any{"url": rcv.URL + "/new", "events": []string{"tag.created"}})),
	}
	for seq, id := range made {
		if id <= seqs[seq] {
			t.Errorf("sequence %s: the third drew %d; the first had handed out up to %d", seq, id, seqs[seq])
		}
	}
}

// indexMongoIDs indexes the look-ups by _id of database db on the
// embedded FerretDB at uri (its files in dir) as MongoDB does
// (mongotest.IndexIDs), once the service started on it has made its
// collections: a store opened here waits for the build of the declared
// indexes (idempotent, the service's own build makes the same), which
// makes most of them, then closes. Without the index every look-up by
// _id scans its collection. Nothing on an external server (dir "").
func indexMongoIDs(t *testing.T, uri, dir, db string) {
	t.Helper()
	if dir == "" {
		return
	}
	st, err := mongo.Open(context.Background(), uri, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close(context.Background())
	if err := st.WaitIndexes(context.Background()); err != nil {
		t.Fatal(err)
	}
	mongotest.IndexIDs(t, dir, db)
}

// mustCLI runs the command line with env and fails the test unless it
// exits 0.
func mustCLI(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	r := runCLI(t, env, args...)
	if r.code != exitOK {
		t.Fatalf("%v: exit %d\nstdout:\n%s\nstderr:\n%s", args, r.code, r.stdout, r.stderr)
	}
	return r
}

// syncFigures is the part of GET /admin/sync the round trip waits on.
type syncFigures struct {
	PendingMarks     int            `json:"pending_marks"`
	FailingCount     int            `json:"failing_count"`
	EngineHealthy    bool           `json:"engine_healthy"`
	Index            map[string]int `json:"index"`
	DependentReindex []any          `json:"dependent_reindex"`
}

// waitSettled waits until svc has indexed every write (no pending or
// failing mark, no re-index of dependents running; when wantIndex is not
// nil, the index counts are those) and queued no webhook message it has
// not delivered, and returns its index counts.
func waitSettled(t *testing.T, svc *service, wantIndex map[string]int) map[string]int {
	t.Helper()
	c := newCaller(t, svc)
	st, err := openStore(context.Background(), svc.cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer closeStore(st)
	deadline := testdeadline.Of(t)
	var last []byte
	for {
		var f syncFigures
		code, raw := c.do("GET", "/admin/sync", tripAdminToken, nil)
		last = raw
		pending, _, err := st.DeliveryQueue(context.Background())
		if code == http.StatusOK && json.Unmarshal(raw, &f) == nil && err == nil &&
			f.PendingMarks == 0 && f.FailingCount == 0 && f.EngineHealthy && len(f.DependentReindex) == 0 && pending == 0 &&
			(wantIndex == nil || maps.Equal(f.Index, wantIndex)) {
			return f.Index
		}
		if time.Now().After(deadline) {
			t.Fatalf("the service never settled: /admin/sync %d %s (want index %v); %d deliveries pending (%v)", code, last, wantIndex, pending, err)
		}
		time.Sleep(50 * time.Millisecond) // polling the worker
	}
}

// compareAdminViews compares what the administrators' routes show of the
// users, tokens, webhook endpoints and calendar sources on two services:
// the same bodies, byte for byte, except the tokens' last use (each
// service records its own).
func compareAdminViews(t *testing.T, name string, from, against *service, seed *seeded) {
	t.Helper()
	a, b := newCaller(t, from), newCaller(t, against)
	paths := []string{"/admin/users", "/admin/webhooks", "/sources", itemPath("sources", seed.sourceID), itemPath("sources", seed.sourceID) + "/runs"}
	var hooks struct{ Webhooks []struct{ ID int64 } }
	if err := json.Unmarshal(mustBody(t, a, "/admin/webhooks"), &hooks); err != nil || len(hooks.Webhooks) == 0 {
		t.Fatalf("GET /admin/webhooks: %v, %d endpoints", err, len(hooks.Webhooks))
	}
	for _, h := range hooks.Webhooks {
		paths = append(paths, itemPath("admin/webhooks", h.ID))
	}
	for _, p := range paths {
		if x, y := mustBody(t, a, p), mustBody(t, b, p); !bytes.Equal(x, y) {
			t.Errorf("%s: GET %s differs:\nfirst:  %s\n%s: %s", name, p, x, name, y)
		}
	}
	tokens := func(c *caller) []map[string]any {
		var list struct{ Tokens []map[string]any }
		if err := json.Unmarshal(mustBody(t, c, "/admin/tokens"), &list); err != nil || len(list.Tokens) == 0 {
			t.Fatalf("GET /admin/tokens: %v, %d tokens", err, len(list.Tokens))
		}
		for _, tok := range list.Tokens {
			delete(tok, "last_used")
		}
		return list.Tokens
	}
	if x, y := tokens(a), tokens(b); !reflect.DeepEqual(x, y) {
		t.Errorf("%s: GET /admin/tokens differs (last use aside):\nfirst:  %v\n%s: %v", name, x, name, y)
	}
}

// mustBody GETs path as the administrator and returns the body of the 200
// answer.
func mustBody(t *testing.T, c *caller, path string) []byte {
	t.Helper()
	code, raw := c.do("GET", path, tripAdminToken, nil)
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, code, raw)
	}
	return raw
}

// compareServices compares every API answer of two services with
// verify.Compare, for every reader of the seeded calendar (anonymous, a
// token of every role, the disabled user's and the expired token) and
// every language, and fails the test on any difference.
func compareServices(t *testing.T, name string, from, against *service, seed *seeded) {
	t.Helper()
	client := &http.Client{Timeout: time.Minute}
	rep, err := verify.Compare(context.Background(), verify.Service{URL: "http://" + from.addr.String(), Client: client},
		verify.Service{URL: "http://" + against.addr.String(), Client: client}, verify.Options{Tokens: seed.readers, MaxDifferences: 30})
	if err != nil {
		t.Fatalf("%s: compare: %v", name, err)
	}
	t.Logf("%s: %d items, %d requests compared; notes: %q", name, rep.Items, rep.Requests, rep.Notes)
	// The comparison saw the calendar: every record and label the admin
	// reads at least.
	if rep.Items < seed.items {
		t.Errorf("%s: the comparison saw %d items, fewer than the %d seeded", name, rep.Items, seed.items)
	}
	for _, d := range rep.Differences {
		t.Errorf("%s differs: %+v", name, d)
	}
	if rep.More > 0 {
		t.Errorf("%s: %d more differences", name, rep.More)
	}
}

// checkLoaded checks the counts "eventcal load" printed (a table: TYPE,
// CREATED, REPLACED, UNCHANGED): every type of item the seeded calendar
// holds is there; on a first load into an empty store everything is
// created (the sequences raised), on a second load of the same file
// everything is unchanged.
func checkLoaded(t *testing.T, name, out string, again bool) {
	t.Helper()
	rows := loadCounts(t, out)
	for _, typ := range []string{"sequences", "user", "token", "label", "record", "item_state", "webhook", "source", "source_run"} {
		n, ok := rows[typ]
		switch {
		case !ok || n[0]+n[1]+n[2] == 0:
			t.Errorf("%s: load counted no %s:\n%s", name, typ, out)
		case again && (n[0] != 0 || n[1] != 0):
			t.Errorf("%s: %s %d created, %d replaced; want every one unchanged:\n%s", name, typ, n[0], n[1], out)
		case !again && typ != "sequences" && (n[1] != 0 || n[2] != 0):
			t.Errorf("%s: %s %d replaced, %d unchanged in a new store; want every one created:\n%s", name, typ, n[1], n[2], out)
		}
	}
}

// compareSearches compares, byte for byte, the answers of two services to
// searches and filters the lists of verify.Compare do not send: text
// search in several languages, geo radius, venue, category and tag
// filters, an event status filter, as the anonymous reader and as an
// editor. Both indexes were filled from their own store.
func compareSearches(t *testing.T, name string, from, against *service, seed *seeded) {
	t.Helper()
	a, b := newCaller(t, from), newCaller(t, against)
	window := "&start_date=2027-01-01&end_date=2031-01-01"
	for _, q := range []struct{ path, token string }{
		{"/events?search=opening" + window, ""},
		{"/events?search=ouverture&multilang_language=fr" + window, ""},
		{"/events?search=soir&multilang_language=fr" + window, ""},
		{"/events?search=eroffnungsabend&multilang_language=de" + window, ""},
		{"/events?geoloc_lat=48.87&geoloc_lng=2.30&geoloc_radius=5" + window, ""},
		{"/events?categories=music&tags=outdoor" + window, ""},
		{"/events?event_status=canceled" + window, ""},
		{"/events?search=class&status=publish,draft,private,trash" + window, seed.tokens["eddie"]},
		{"/events.ics?search=class" + window, ""},
		{"/venues?search=pleyel", ""},
		{"/organizers?search=orchestre&status=publish,draft", seed.tokens["eddie"]},
		{"/categories?search=jazz", ""},
	} {
		ca, x := a.do("GET", q.path, q.token, nil)
		cb, y := b.do("GET", q.path, q.token, nil)
		if ca != http.StatusOK || ca != cb || !bytes.Equal(x, y) {
			t.Errorf("%s: GET %s differs:\nfirst:  %d %s\n%s: %d %s", name, q.path, ca, x, name, cb, y)
		}
		// Each finds something: an empty answer on both sides would
		// compare nothing.
		var list struct{ Total int }
		if found := bytes.Contains(x, []byte("BEGIN:VEVENT")) || json.Unmarshal(x, &list) == nil && list.Total > 0; !found {
			t.Errorf("GET %s finds nothing: %s", q.path, x)
		}
	}
}

// loadCounts reads the table "eventcal load" prints: for each type, the
// items created, replaced and unchanged.
func loadCounts(t *testing.T, out string) map[string][3]int {
	t.Helper()
	rows := map[string][3]int{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) != 4 {
			t.Fatalf("load printed %q", line)
		}
		var n [3]int
		for i := range n {
			v, err := strconv.Atoi(f[i+1])
			if err != nil {
				t.Fatalf("load printed %q", line)
			}
			n[i] = v
		}
		rows[f[0]] = n
	}
	return rows
}
