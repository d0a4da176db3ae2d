package mongo_test

import (
	"context"
	"net/url"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	mevent "go.mongodb.org/mongo-driver/v2/event"

	"github.com/calendar/eventcal/repository/mongo"
	"github.com/calendar/eventcal/repository/mongo/mongotest"
)

// TestWriteConcern checks that writes carry {w: "majority", j: true}
// unless the URI names its own write concern, as the commands sent show
// (FerretDB ignores the field, MongoDB honours it), and that retryable
// writes stay on unless the URI turns them off.
func TestWriteConcern(t *testing.T) {
	t.Parallel()
	uri := mongotest.Start(t)
	cases := []struct {
		name  string
		query string
		want  bson.D
		retry bool
	}{
		{name: "default", want: bson.D{{Key: "w", Value: "majority"}, {Key: "j", Value: true}}, retry: true},
		{name: "w=1 in the URI", query: "w=1", want: bson.D{{Key: "w", Value: int32(1)}}, retry: true},
		{name: "journal=false in the URI", query: "journal=false", want: bson.D{{Key: "j", Value: false}}, retry: true},
		{name: "retryWrites=false in the URI", query: "retryWrites=false", want: bson.D{{Key: "w", Value: "majority"}, {Key: "j", Value: true}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			u, err := url.Parse(uri)
			if err != nil {
				t.Fatal(err)
			}
			if tc.query != "" {
				q := u.Query()
				for k, v := range mustParseQuery(t, tc.query) {
					q[k] = v
				}
				u.RawQuery = q.Encode()
			}
			co := mongo.ClientOptionsForTest(u.String())
			if got := co.RetryWrites == nil || *co.RetryWrites; got != tc.retry {
				t.Errorf("retryable writes %v, want %v", got, tc.retry)
			}

			var mu sync.Mutex
			var sent []bson.Raw
			mon := &mevent.CommandMonitor{Started: func(_ context.Context, e *mevent.CommandStartedEvent) {
				if e.CommandName == "insert" {
					mu.Lock()
					sent = append(sent, append(bson.Raw(nil), e.Command...))
					mu.Unlock()
				}
			}}
			ctx := t.Context()
			s, err := mongo.Open(ctx, u.String(), mongotest.Database(t), mongo.WithCommandMonitor(mon))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close(context.Background()) })
			p := event("wc")
			if err := s.CreateRecord(ctx, p); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(sent) == 0 {
				t.Fatal("no insert sent")
			}
			for _, cmd := range sent {
				wcv, err := cmd.LookupErr("writeConcern")
				if err != nil {
					t.Errorf("insert without writeConcern: %v", cmd)
					continue
				}
				var got bson.D
				if err := bson.Unmarshal(wcv.Document(), &got); err != nil {
					t.Fatal(err)
				}
				if !equalD(got, tc.want) {
					t.Errorf("writeConcern %v, want %v", got, tc.want)
				}
			}
			if _, err := s.GetRecord(ctx, p.ID); err != nil {
				t.Errorf("GetPost: %v", err)
			}
		})
	}
}

func mustParseQuery(t *testing.T, q string) url.Values {
	t.Helper()
	v, err := url.ParseQuery(q)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// equalD compares two documents by keys and values in order.
func equalD(a, b bson.D) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Key != b[i].Key || a[i].Value != b[i].Value {
			return false
		}
	}
	return true
}
