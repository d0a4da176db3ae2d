package api_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/config/testsupport"
)

// message is a decoded webhook body.
type message struct {
	ID             string         `json:"id"`
	Type           string         `json:"type"`
	OccurredAt     string         `json:"occurred_at"`
	Item           map[string]any `json:"item"`
	PreviousStatus string         `json:"previous_status"`
}

// verify checks a message's signature with the Standard Webhooks library
// and by hand (HMAC-SHA256 over id.timestamp.body) and its User-Agent (the
// release that sent it), and decodes it.
func verify(t *testing.T, secret string, r testsupport.Recorded) message {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	// The test clock is not the wall clock: the timestamp is checked below.
	if err := wh.VerifyIgnoringTimestamp(r.Body, r.Header); err != nil {
		t.Fatalf("signature does not verify: %v (headers %v)", err, r.Header)
	}
	key, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(r.Header.Get("webhook-id") + "." + r.Header.Get("webhook-timestamp") + "." + string(r.Body)))
	want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	if r.Header.Get("webhook-signature") != want {
		t.Errorf("webhook-signature = %q, want %q", r.Header.Get("webhook-signature"), want)
	}
	if ua, want := r.Header.Get("User-Agent"), "eventcal-webhooks/"+config.Version; ua != want {
		t.Errorf("User-Agent = %q, want %q", ua, want)
	}
	if _, err := strconv.ParseInt(r.Header.Get("webhook-timestamp"), 10, 64); err != nil {
		t.Errorf("webhook-timestamp %q", r.Header.Get("webhook-timestamp"))
	}
	var m message
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("body %s: %v", r.Body, err)
	}
	if m.ID != r.Header.Get("webhook-id") {
		t.Errorf("body id %q, header %q", m.ID, r.Header.Get("webhook-id"))
	}
	return m
}

// deliver indexes pending writes (so their messages are queued) and sends
// what is due.
func (e *env) deliver() {
	e.t.Helper()
	e.flush()
	for range 20 {
		n, err := e.hooks.DeliverDue(context.Background())
		if err != nil {
			e.t.Logf("deliver: %v", err)
		}
		if n == 0 {
			return
		}
	}
}

func (e *env) addWebhook(url string, events ...string) (id int64, secret string) {
	e.t.Helper()
	body := map[string]any{"url": url}
	if len(events) > 0 {
		body["events"] = events
	}
	r := e.must(201, "POST", "admin/webhooks", "admin", body)
	return r.id(), r.str("secret")
}

func TestWebhookAdmin(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rc := testsupport.NewRecorder(t)
	good := "https://hooks.example.org/calendar"
	secret := "whsec_" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))
	var id int64
	e.run(t, []scenario{
		{name: "anonymous", method: "GET", url: "admin/webhooks", status: 401},
		{name: "editor", method: "POST", url: "admin/webhooks", as: "editor", body: map[string]any{"url": good}, status: 403},
		{name: "missing url", method: "POST", url: "admin/webhooks", as: "admin", body: map[string]any{}, status: 400},
		{name: "ftp", method: "POST", url: "admin/webhooks", as: "admin", body: map[string]any{"url": "ftp://x.example/"}, status: 400, contains: []string{"http or https"}},
		{name: "relative", method: "POST", url: "admin/webhooks", as: "admin", body: map[string]any{"url": "/hook"}, status: 400},
		{name: "loopback refused", method: "POST", url: "admin/webhooks", as: "admin", body: map[string]any{"url": rc.URL}, status: 400, contains: []string{"private"}},
		{name: "localhost refused", method: "POST", url: "admin/webhooks", as: "admin", body: map[string]any{"url": "http://localhost:9/x"}, status: 400},
		{name: "private refused", method: "POST", url: "admin/webhooks", as: "admin", body: map[string]any{"url": "http://10.1.2.3/x"}, status: 400},
		{name: "link-local refused", method: "POST", url: "admin/webhooks", as: "admin", body: map[string]any{"url": "http://169.254.169.254/latest"}, status: 400},
		{name: "ipv6 loopback refused", method: "POST", url: "admin/webhooks", as: "admin", body: map[string]any{"url": "http://[::1]/x"}, status: 400},
		{name: "unknown event", method: "POST", url: "admin/webhooks", as: "admin", body: map[string]any{"url": good, "events": []string{"event.exploded"}}, status: 400},
		{name: "weak secret", method: "POST", url: "admin/webhooks", as: "admin", body: map[string]any{"url": good, "secret": "hunter2"}, status: 400},
		{name: "create", method: "POST", url: "admin/webhooks", as: "admin", body: map[string]any{"url": good, "events": []string{"event.created", "tag.deleted"}, "description": "CRM"}, status: 201,
			want: map[string]any{"url": good, "events": []string{"event.created", "tag.deleted"}, "active": true, "description": "CRM"},
			check: func(t *testing.T, r *resp) {
				id = r.id()
				if !strings.HasPrefix(r.str("secret"), "whsec_") || len(r.str("secret")) < 40 {
					t.Errorf("secret = %q", r.str("secret"))
				}
			}},
	})
	p := "admin/webhooks/" + strconv.FormatInt(id, 10)
	e.run(t, []scenario{
		{name: "read hides the secret", method: "GET", url: p, as: "admin", status: 200, absent: []string{"secret"}, want: map[string]any{"id": id}},
		{name: "list", method: "GET", url: "admin/webhooks", as: "admin", status: 200, want: map[string]any{"webhooks.0.id": id}, absent: []string{"webhooks.0.secret"}},
		{name: "disable", method: "PATCH", url: p, as: "admin", body: map[string]any{"active": false}, status: 200, want: map[string]any{"active": false, "disabled_reason": "disabled by an admin"}},
		{name: "enable", method: "PATCH", url: p, as: "admin", body: map[string]any{"active": true}, status: 200, want: map[string]any{"active": true}, absent: []string{"disabled_reason"}},
		{name: "set secret", method: "PATCH", url: p, as: "admin", body: map[string]any{"secret": secret}, status: 200, want: map[string]any{"secret": secret}},
		{name: "bad update", method: "PATCH", url: p, as: "admin", body: map[string]any{"url": "gopher://x"}, status: 400},
		{name: "deliveries empty", method: "GET", url: p + "/deliveries", as: "admin", status: 200, want: map[string]any{"deliveries": []any{}}},
		{name: "author cannot read", method: "GET", url: p, as: "author", status: 403},
		{name: "missing", method: "GET", url: "admin/webhooks/999", as: "admin", status: 404, want: map[string]any{"code": "webhook_not_found"}},
		{name: "delete", method: "DELETE", url: p, as: "admin", status: 200, want: map[string]any{"deleted": true, "previous.id": id}},
		{name: "deleted", method: "GET", url: p, as: "admin", status: 404},
	})
}

// TestWebhookDeliveries: every write type produces exactly one message,
// signed, with the item as an admin reads it.
func TestWebhookDeliveries(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "WEBHOOK_ALLOW_PRIVATE", "true")
	rc := testsupport.NewRecorder(t)
	_, secret := e.addWebhook(rc.URL)
	seen := 0
	expect := func(typ string, id int64, previous string) message {
		t.Helper()
		e.deliver()
		got := rc.All()
		if len(got) != seen+1 {
			var types []string
			for _, g := range got[seen:] {
				var m message
				json.Unmarshal(g.Body, &m)
				types = append(types, m.Type)
			}
			t.Fatalf("after the %s write: %d new messages %v, want exactly 1", typ, len(got)-seen, types)
		}
		seen++
		m := verify(t, secret, got[len(got)-1])
		if m.Type != typ || m.PreviousStatus != previous {
			t.Errorf("message %s (previous %q), want %s (previous %q)", m.Type, m.PreviousStatus, typ, previous)
		}
		if n, _ := m.Item["id"].(float64); int64(n) != id {
			t.Errorf("%s: item id %v, want %d", typ, m.Item["id"], id)
		}
		if _, err := time.Parse(time.RFC3339Nano, m.OccurredAt); err != nil {
			t.Errorf("occurred_at %q: %v", m.OccurredAt, err)
		}
		return m
	}
	// Posts: events, venues, organizers.
	for _, tc := range []struct{ res, coll, name string }{
		{"venue", "venues", "venue"}, {"organizer", "organizers", "organizer"}, {"event", "events", "title"},
	} {
		body := map[string]any{tc.name: "Hooked " + tc.res}
		if tc.res == "event" {
			body["start_date"], body["end_date"] = "2027-01-10 10:00", "2027-01-10 11:00"
		}
		id := e.must(201, "POST", tc.coll, "editor", body).id()
		m := expect(tc.res+".created", id, "")
		if m.Item[tc.name] != "Hooked "+tc.res {
			t.Errorf("%s.created item %v", tc.res, m.Item)
		}
		p := tc.coll + "/" + strconv.FormatInt(id, 10)
		e.must(200, "PATCH", p, "editor", map[string]any{"status": "draft"})
		expect(tc.res+".updated", id, "publish")
		e.must(200, "PATCH", p, "editor", map[string]any{"description": "more"})
		if m := expect(tc.res+".updated", id, ""); m.Item["description"] != "more" {
			t.Errorf("updated item %v", m.Item)
		}
		e.must(200, "DELETE", p, "editor", nil)
		expect(tc.res+".trashed", id, "draft")
		e.must(200, "DELETE", p+"?force=true", "editor", nil)
		expect(tc.res+".deleted", id, "trash")
	}
	// Terms: categories and tags.
	for _, tc := range []struct{ res, coll string }{{"category", "categories"}, {"tag", "tags"}} {
		id := e.must(201, "POST", tc.coll, "editor", map[string]any{"name": "Hooked " + tc.res}).id()
		if m := expect(tc.res+".created", id, ""); m.Item["name"] != "Hooked "+tc.res {
			t.Errorf("%s.created item %v", tc.res, m.Item)
		}
		p := tc.coll + "/" + strconv.FormatInt(id, 10)
		e.must(200, "PATCH", p, "editor", map[string]any{"name": "Renamed " + tc.res})
		expect(tc.res+".updated", id, "")
		e.must(200, "DELETE", p+"?force=true", "editor", nil)
		expect(tc.res+".deleted", id, "")
	}
	// A venue change reindexes its events but sends no event message.
	venue := e.must(201, "POST", "venues", "editor", map[string]any{"venue": "Shared Hall"}).id()
	expect("venue.created", venue, "")
	ev := e.must(201, "POST", "events", "editor", map[string]any{"title": "At the hall", "venue": venue,
		"start_date": "2027-01-10 10:00", "end_date": "2027-01-10 11:00"}).id()
	expect("event.created", ev, "")
	e.must(200, "PATCH", "venues/"+strconv.FormatInt(venue, 10), "editor", map[string]any{"city": "Utrecht"})
	expect("venue.updated", venue, "")

	// The log shows each delivery with its attempt.
	hooks := e.must(200, "GET", "admin/webhooks", "admin", nil)
	hid := strconv.FormatInt(int64(hooks.num("webhooks.0.id")), 10)
	log := e.must(200, "GET", "admin/webhooks/"+hid+"/deliveries?per_page=3", "admin", nil)
	if log.str("deliveries.0.type") != "venue.updated" || log.str("deliveries.0.status") != "delivered" ||
		log.num("deliveries.0.attempts") != 1 || log.num("deliveries.0.log.0.code") != 200 || log.path("deliveries.3") != nil {
		t.Errorf("delivery log: %s", log.raw)
	}
}

// TestWebhookRetries: a receiver that fails three times gets the message
// on the fourth attempt, with the same webhook-id; the log shows each
// attempt. A receiver that keeps failing gets its endpoint disabled after
// a day.
func TestWebhookRetries(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "WEBHOOK_ALLOW_PRIVATE", "true")
	rc := testsupport.NewRecorder(t)
	rc.SetPlan(500, 503, 502)
	hid, secret := e.addWebhook(rc.URL, "event.created")
	id := e.must(201, "POST", "events", "editor", map[string]any{"title": "Retry me", "start_date": "2027-01-10 10:00", "end_date": "2027-01-10 11:00"}).id()
	e.deliver()
	for i := 1; i < 4; i++ {
		if n := len(rc.All()); n != i {
			t.Fatalf("attempt %d: receiver saw %d requests", i, n)
		}
		// Not due again before the backoff has passed.
		e.deliver()
		if n := len(rc.All()); n != i {
			t.Fatalf("retried before its backoff: %d requests", n)
		}
		e.advanceHooks(2 * time.Hour)
		e.deliver()
	}
	got := rc.All()
	if len(got) != 4 {
		t.Fatalf("%d requests, want 4", len(got))
	}
	for _, g := range got {
		if m := verify(t, secret, g); m.ID != got[0].Header.Get("webhook-id") || m.Type != "event.created" {
			t.Errorf("attempt with id %s type %s", m.ID, m.Type)
		}
		if g.Header.Get("webhook-id") != got[0].Header.Get("webhook-id") {
			t.Errorf("webhook-id changed between attempts")
		}
	}
	if n, _ := verify(t, secret, got[3]).Item["id"].(float64); int64(n) != id {
		t.Errorf("item %v", n)
	}
	log := e.must(200, "GET", "admin/webhooks/"+strconv.FormatInt(hid, 10)+"/deliveries", "admin", nil)
	codes := ""
	for i := 0; i < 4; i++ {
		codes += strconv.Itoa(int(log.num("deliveries.0.log."+strconv.Itoa(i)+".code"))) + " "
	}
	if codes != "500 503 502 200 " || log.str("deliveries.0.status") != "delivered" || log.num("deliveries.0.attempts") != 4 {
		t.Errorf("log codes %q: %s", codes, log.raw)
	}

	// Now the endpoint fails for good: retried for a day, then the
	// message fails and the endpoint is disabled.
	rc.SetPlan(slices.Repeat([]int{500}, 1000)...)
	e.must(201, "POST", "events", "editor", map[string]any{"title": "Never lands", "start_date": "2027-01-10 10:00", "end_date": "2027-01-10 11:00"})
	e.deliver()
	p := "admin/webhooks/" + strconv.FormatInt(hid, 10)
	for range 30 {
		e.advanceHooks(90 * time.Minute)
		e.deliver()
	}
	w := e.must(200, "GET", p, "admin", nil)
	if w.path("active") != false || !strings.Contains(w.str("disabled_reason"), "failing") {
		t.Errorf("endpoint after a day of failures: %s", w.raw)
	}
	log = e.must(200, "GET", p+"/deliveries", "admin", nil)
	if log.str("deliveries.0.status") != "failed" {
		t.Errorf("message after a day of failures: %s", log.raw)
	}
	metrics := e.doWith("GET", "/metrics", "admin", nil, nil)
	for _, want := range []string{`eventcal_webhook_deliveries_total{outcome="delivered"} 1`, `eventcal_webhook_deliveries_total{outcome="failed"} 1`,
		"eventcal_webhook_queue_depth 0"} {
		if !strings.Contains(metrics.raw, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

func TestWebhookPing(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "WEBHOOK_ALLOW_PRIVATE", "true")
	rc := testsupport.NewRecorder(t)
	hid, secret := e.addWebhook(rc.URL)
	r := e.must(200, "POST", "admin/webhooks/"+strconv.FormatInt(hid, 10)+"/ping", "admin", nil)
	if r.path("ok") != true || r.num("attempt.code") != 200 {
		t.Errorf("ping: %s", r.raw)
	}
	got := rc.All()
	if len(got) != 1 || verify(t, secret, got[0]).Type != "webhook.ping" {
		t.Fatalf("receiver got %d messages", len(got))
	}
	rc.SetPlan(418)
	if r := e.must(200, "POST", "admin/webhooks/"+strconv.FormatInt(hid, 10)+"/ping", "admin", nil); r.path("ok") != false || r.num("attempt.code") != 418 {
		t.Errorf("failed ping: %s", r.raw)
	}
	e.must(403, "POST", "admin/webhooks/"+strconv.FormatInt(hid, 10)+"/ping", "editor", nil)
}

// TestWebhookOrderPerItem: while a message about an item waits for a
// retry, later messages about the same item wait behind it; messages
// about other items go on.
func TestWebhookOrderPerItem(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "WEBHOOK_ALLOW_PRIVATE", "true")
	rc := testsupport.NewRecorder(t)
	rc.SetPlan(500)
	e.addWebhook(rc.URL, "event.created", "event.updated")
	a := e.must(201, "POST", "events", "editor", map[string]any{"title": "A", "start_date": "2027-01-10 10:00", "end_date": "2027-01-10 11:00"}).id()
	e.deliver() // A created: 500
	e.must(200, "PATCH", "events/"+strconv.FormatInt(a, 10), "editor", map[string]any{"title": "A2"})
	b := e.must(201, "POST", "events", "editor", map[string]any{"title": "B", "start_date": "2027-01-10 10:00", "end_date": "2027-01-10 11:00"}).id()
	e.deliver() // B created goes; A updated waits behind A created
	types := func() []string {
		var out []string
		for _, g := range rc.All() {
			var m message
			json.Unmarshal(g.Body, &m)
			n, _ := m.Item["id"].(float64)
			out = append(out, strconv.FormatInt(int64(n), 10)+":"+m.Type)
		}
		return out
	}
	as, bs := strconv.FormatInt(a, 10), strconv.FormatInt(b, 10)
	if got := strings.Join(types(), ","); got != as+":event.created,"+bs+":event.created" {
		t.Fatalf("before the retry: %s", got)
	}
	e.advanceHooks(2 * time.Hour)
	e.deliver()
	e.deliver()
	if got := strings.Join(types(), ","); got != as+":event.created,"+bs+":event.created,"+as+":event.created,"+as+":event.updated" {
		t.Errorf("after the retry: %s", got)
	}
}
