package app

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/calendar/eventcal/config/testdeadline"
	"github.com/calendar/eventcal/config/testsupport"
	"github.com/calendar/eventcal/repository/mongo/mongotest"
)

// TestMovePendingDeliveries: a webhook message still pending when the
// calendar is exported (its endpoint failing) travels in the file. The
// service on MongoDB the file is loaded into delivers it once the
// endpoint answers again, under the same message ID, signed with the
// secret the first service made, and sends nothing else (the loaded
// items' states came along). The log of delivered messages stays behind,
// as the format says.
func TestMovePendingDeliveries(t *testing.T) {
	t.Parallel()
	rcv := testsupport.NewRecorder(t)
	firstEnv := tripEnv(map[string]string{"DATA_DIR": t.TempDir()})
	first := startService(t, firstEnv)
	c := newCaller(t, first)
	hook := c.must(201, "POST", "/admin/webhooks", tripAdminToken, map[string]any{"url": rcv.URL + "/crm", "events": []string{"*"}})
	secret := hook["secret"].(string)
	event := idOf(c.must(201, "POST", "/events", tripAdminToken, map[string]any{"title": "Delivered",
		"start_date": "2027-03-12 20:00:00", "end_date": "2027-03-12 23:00:00"}))
	waitSettled(t, first, nil) // event.created delivered

	// The endpoint fails: the update's message is attempted once and
	// waits for its retry when the first service stops.
	rcv.Failing.Store(true)
	c.must(200, "POST", itemPath("events", event), tripAdminToken, map[string]any{"title": "Pending"})
	deadline := testdeadline.Of(t)
	pending := map[string]bool{}
	for len(pending) == 0 {
		for _, m := range rcv.All() {
			if m.Status == http.StatusServiceUnavailable {
				pending[m.Header.Get("webhook-id")] = true
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the update's message was never attempted")
		}
		time.Sleep(20 * time.Millisecond) // polling the receiver
	}
	if err := first.stop(t); err != nil {
		t.Fatal(err)
	}

	file := t.TempDir() + "/calendar.jsonl"
	mustCLI(t, firstEnv, "export", "--out", file)
	secondEnv := tripEnv(map[string]string{"DATA_DIR": t.TempDir(), "MONGO_URI": mongotest.Start(t), "MONGO_DATABASE": mongotest.Database(t)})
	loaded := mustCLI(t, secondEnv, "load", file)
	if n := loadCounts(t, loaded.stdout)["delivery"]; n[0] != len(pending) {
		t.Fatalf("load created %d deliveries, want the %d pending:\n%s", n[0], len(pending), loaded.stdout)
	}
	rcv.Failing.Store(false)
	heard := len(rcv.All())
	second := startService(t, secondEnv)
	waitSettled(t, second, nil) // no delivery pending: the carried one went out
	var ids []string
	for _, m := range rcv.All()[heard:] {
		b, err := verifyHook(secret, m)
		if err != nil {
			t.Errorf("second service: %v", err)
			continue
		}
		ids = append(ids, b.ID)
		if !pending[b.ID] || b.Type != "event.updated" || b.Item.ID != event || b.Item.Title != "Pending" || m.Status != http.StatusOK {
			t.Errorf("second service sent %s (answered %d); want only the pending messages %v", m.Body, m.Status, slices.Collect(maps.Keys(pending)))
		}
	}
	if len(ids) == 0 {
		t.Fatalf("the pending message %v was never delivered by the second service", slices.Collect(maps.Keys(pending)))
	}

	// The second's log: the carried message, delivered; not the first's
	// delivered event.created.
	var log struct {
		Deliveries []struct{ ID, Type, Status string }
	}
	if err := json.Unmarshal(mustBody(t, newCaller(t, second), itemPath("admin/webhooks", idOf(hook))+"/deliveries"), &log); err != nil {
		t.Fatal(err)
	}
	if len(log.Deliveries) != len(pending) || !pending[log.Deliveries[0].ID] || log.Deliveries[0].Status != "delivered" {
		t.Errorf("the second's delivery log: %+v; want the carried message, delivered", log.Deliveries)
	}
}
