package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/repository/mongo"
	"github.com/calendar/eventcal/repository/mongo/mongotest"
)

// TestWriteRepliesLost sends writes through the API while the proxy
// between the MongoDB store and the server loses the reply of the write
// command once (the server applied it): each write answers success, and
// what the API then shows is that write, once: no 503 for a stored record
// (which a client would send again, making a double), no ghost record
// without its slug.
func TestWriteRepliesLost(t *testing.T) {
	t.Parallel()
	uri := mongotest.Start(t)
	cases := []struct {
		name    string
		fault   mongotest.Fault
		request func(e *env, id int64) (method, url string, body any, status int)
		check   func(t *testing.T, e *env, id int64)
	}{
		{
			name:  "create",
			fault: mongotest.Fault{Command: "insert", Collection: "posts", Action: mongotest.DropReply},
			request: func(e *env, _ int64) (string, string, any, int) {
				return "POST", "events", map[string]any{"title": "Ghost", "slug": "ghost", "start_date": "2027-01-01 10:00", "end_date": "2027-01-01 11:00"}, 201
			},
			check: func(t *testing.T, e *env, first int64) {
				// The event lists have no slug filter (an unknown query
				// parameter is ignored), so a list shows every event and
				// counts only what the index holds at that moment. The
				// store is the witness: one event created, under the slug
				// sent; after a flush the list shows it beside the first.
				ghost := e.must(200, "GET", "events/by-slug/ghost", "editor", nil).id()
				evs, err := e.store.FindRecords(context.Background(), repository.RecordQuery{Kind: repository.KindEvent})
				if err != nil {
					t.Fatal(err)
				}
				var ids []int64
				for _, p := range evs {
					ids = append(ids, p.ID)
				}
				if want := []int64{first, ghost}; !slices.Equal(ids, want) {
					t.Errorf("stored events %v, want %v (the first and one Ghost)", ids, want)
				}
				e.flush()
				r := e.must(200, "GET", "events?status=publish", "editor", nil)
				var listed []int64
				for _, ev := range r.path("events").([]any) {
					n, _ := ev.(map[string]any)["id"].(json.Number).Int64()
					listed = append(listed, n)
				}
				if want := []int64{first, ghost}; !slices.Equal(listed, want) {
					t.Errorf("listed events %v, want %v: %.300s", listed, want, r.raw)
				}
			},
		},
		{
			name:  "update",
			fault: mongotest.Fault{Command: "update", Collection: "posts", Action: mongotest.DropReply},
			request: func(e *env, id int64) (string, string, any, int) {
				return "POST", fmt.Sprintf("events/%d", id), map[string]any{"title": "Renamed", "slug": "renamed"}, 200
			},
			check: func(t *testing.T, e *env, id int64) {
				r := e.must(200, "GET", "events/by-slug/renamed", "editor", nil)
				if got := r.str("title"); got != "Renamed" {
					t.Errorf("title %q, want Renamed", got)
				}
			},
		},
		{
			name:  "delete",
			fault: mongotest.Fault{Command: "delete", Collection: "posts", Action: mongotest.DropReply},
			request: func(e *env, id int64) (string, string, any, int) {
				return "DELETE", fmt.Sprintf("events/%d?force=true", id), nil, 200
			},
			check: func(t *testing.T, e *env, id int64) {
				e.must(404, "GET", fmt.Sprintf("events/%d", id), "editor", nil)
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			proxy, puri := mongotest.ProxyURI(t, uri)
			open := func(t testing.TB, _ *config.Config) repository.Store {
				st, err := mongo.Open(context.Background(), puri, mongotest.Database(t))
				if err != nil {
					t.Fatal(err)
				}
				return st
			}
			e := newEnvWith(t, t.TempDir(), envOptions{openStore: open})
			id := e.must(201, "POST", "events", "editor", map[string]any{"title": "First", "slug": "first", "start_date": "2027-01-01 10:00", "end_date": "2027-01-01 11:00"}).id()
			f := tc.fault
			f.Times = 1
			proxy.Inject(f)
			method, url, body, status := tc.request(e, id)
			r := e.do(method, url, "editor", body)
			if proxy.Applied() != 1 {
				t.Fatalf("the fault was applied %d times, want 1", proxy.Applied())
			}
			if r.status != status {
				t.Fatalf("%s %s: status %d, want %d: %.300s", method, url, r.status, status, r.raw)
			}
			tc.check(t, e, id)
		})
	}
}
