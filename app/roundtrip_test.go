package app

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/calendar/eventcal/config/testdeadline"
)

// TestRoundTrip moves a calendar from the embedded store to MongoDB and
// back: a calendar seeded through the API of an embedded service
// (seedCalendar) is exported, loaded into a service on MongoDB (FerretDB)
// with the embedded index, exported from there and loaded into a new
// embedded DATA_DIR.
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	rcv := newHookReceiver(t)
	feed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/calendar")
		_, _ = w.Write([]byte(tripFeed))
	}))
	t.Cleanup(feed.Close)

	firstEnv := tripEnv(map[string]string{"DATA_DIR": t.TempDir()})
	first := startService(t, firstEnv)
	seed := seedCalendar(t, first, firstEnv, rcv, feed.URL+"/partner.ics")
	firstIndex := waitSettled(t, first, nil)

	// Every message the first service sent verifies with its endpoint's
	// secret.
	msgs := rcv.messages()
	if len(msgs) == 0 {
		t.Fatal("the first service sent no webhook message")
	}
	for _, m := range msgs {
		if _, err := verifyHook(seed.secrets[m.Endpoint], m); err != nil {
			t.Errorf("first service: %v", err)
		}
	}

	_ = firstIndex
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
