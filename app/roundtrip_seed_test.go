package app

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/calendar/eventcal/config/testdeadline"
	"github.com/calendar/eventcal/config/testsupport"
	"github.com/calendar/eventcal/repository"
)

// This file seeds a rich calendar through the API of a running service, for
// the round trip of roundtrip_test.go, and receives the webhook messages the
// services send.

// tripAdminToken is ADMIN_TOKEN on every service of the round trip.
const tripAdminToken = "trip-ops-token"

// caller sends requests to a running service with a bearer token of its
// own choosing per request.
type caller struct {
	t    *testing.T
	base string // scheme://host:port plus the API root
	http *http.Client
}

// newCaller returns a caller for svc.
func newCaller(t *testing.T, svc *service) *caller {
	return &caller{t: t, base: "http://" + svc.addr.String() + svc.cfg.APIRoot(), http: &http.Client{Timeout: time.Minute}}
}

// do sends body (JSON, when not nil) to path as token ("" anonymous) and
// returns the status and the raw answer.
func (c *caller) do(method, path, token string, body any) (int, []byte) {
	c.t.Helper()
	var rdr io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			c.t.Fatal(err)
		}
		rdr = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.base+path, rdr)
	if err != nil {
		c.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := c.http.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	return res.StatusCode, raw
}

// must is do that fails the test unless the status is want, decoding the
// answer into a map.
func (c *caller) must(want int, method, path, token string, body any) map[string]any {
	c.t.Helper()
	code, raw := c.do(method, path, token, body)
	if code != want {
		c.t.Fatalf("%s %s: %d, want %d: %s", method, path, code, want, raw)
	}
	var out map[string]any
	if len(raw) > 0 && raw[0] == '{' {
		if err := json.Unmarshal(raw, &out); err != nil {
			c.t.Fatalf("%s %s: %v in %s", method, path, err, raw)
		}
	}
	return out
}

// idOf is the "id" of a decoded answer.
func idOf(m map[string]any) int64 {
	f, _ := m["id"].(float64)
	return int64(f)
}

// itemPath is "/kind/ID".
func itemPath(kind string, id int64) string { return "/" + kind + "/" + strconv.FormatInt(id, 10) }

// hookBody is the part of a message body the round trip reads.
type hookBody struct {
	ID   string `json:"id"`
	Type string `json:"type"`
	Item struct {
		ID    int64  `json:"id"`
		Title string `json:"title"`
	} `json:"item"`
}

// verifyHook checks m's signature with secret as a receiver would (the
// Standard Webhooks library, the timestamp within five minutes of now)
// and decodes its body.
func verifyHook(secret string, m testsupport.Recorded) (hookBody, error) {
	var b hookBody
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		return b, err
	}
	if err := wh.Verify(m.Body, m.Header); err != nil {
		return b, fmt.Errorf("message %s to %s: %w", m.Header.Get("webhook-id"), m.Path, err)
	}
	if err := json.Unmarshal(m.Body, &b); err != nil {
		return b, err
	}
	if b.ID != m.Header.Get("webhook-id") {
		return b, fmt.Errorf("body id %q, header %q", b.ID, m.Header.Get("webhook-id"))
	}
	return b, nil
}

// tripFeed is the iCalendar feed the seeded calendar source imports.
const tripFeed = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//partner//EN\r\n" +
	"BEGIN:VEVENT\r\nUID:concert@partner.example\r\nDTSTAMP:20270101T000000Z\r\nDTSTART:20270318T190000Z\r\nDTEND:20270318T210000Z\r\n" +
	"SUMMARY:Partner concert\r\nDESCRIPTION:Strings and brass.\r\nLOCATION:Partner hall\r\nCATEGORIES:Partners\r\nEND:VEVENT\r\n" +
	"BEGIN:VEVENT\r\nUID:lecture@partner.example\r\nDTSTAMP:20270101T000000Z\r\nDTSTART:20270319T190000Z\r\nDTEND:20270319T210000Z\r\n" +
	"SUMMARY:Partner lecture\r\nRRULE:FREQ=WEEKLY;COUNT=3\r\nEND:VEVENT\r\n" +
	"END:VCALENDAR\r\n"

// tripFeedServer serves tripFeed (at any path) until the test ends.
func tripFeedServer(t *testing.T) *httptest.Server {
	feed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/calendar")
		_, _ = w.Write([]byte(tripFeed))
	}))
	t.Cleanup(feed.Close)
	return feed
}

// seeded is what seedCalendar made.
type seeded struct {
	// tokens are the API tokens of the stored users, by login: one per
	// role, a disabled user's, and an expired one.
	tokens map[string]string
	// readers are the tokens the comparison reads as: anonymous and one
	// valid token of every role, then the disabled user's and the expired
	// one (each refused alike).
	readers []string
	// secrets are the webhook signing secrets by endpoint path.
	secrets map[string]string
	// sourceID is the calendar source; eventID an ordinary published event.
	sourceID, eventID int64
	// items counts the events, venues, organizers, categories and tags
	// the administrator's lists name.
	items int
}

// tripEnv returns the settings every service of the round trip shares,
// with the engine-specific ones added.
func tripEnv(extra map[string]string) map[string]string {
	env := map[string]string{
		"LISTEN_ADDR": "127.0.0.1:0", "DRAIN_DELAY": "0", "ADMIN_TOKEN": tripAdminToken,
		// The same public address on every service, so that the links in
		// their answers are the same.
		"SITE_URL":  "https://calendar.example.org",
		"LANGUAGES": "en,fr,de", "DEFAULT_LANGUAGE": "en", "TIMEZONE": "Europe/Paris",
		"CURRENCY_SYMBOL": "€", "CURRENCY_CODE": "EUR", "CURRENCY_POSITION": "suffix",
		"WEBHOOK_ALLOW_PRIVATE": "true", "SOURCES_ALLOW_PRIVATE": "true",
	}
	for k, v := range extra {
		env[k] = v
	}
	return env
}

// seedCalendar fills the service svc (on the embedded store, env its
// settings) through its API and its administration commands: users of
// every role with tokens (one user disabled, one token expired), webhook
// endpoints with their secrets (rcv receives), a category hierarchy and
// tags, venues (with geo) and organizers, texts in every language, events
// in every status (one trashed, one deleted for good, one
// password-protected, one canceled, one with its own currency, one with an
// image), series with changed, cancelled and removed occurrences, additions
// and exclusions, a split, and a calendar source that ran once
// (feedURL serves tripFeed).
func seedCalendar(t *testing.T, svc *service, env map[string]string, rcv *testsupport.Recorder, feedURL string) *seeded {
	t.Helper()
	c := newCaller(t, svc)
	admin := tripAdminToken
	s := &seeded{tokens: map[string]string{}, secrets: map[string]string{}}

	// Users of every role, through the administration command while the
	// service runs, and a token each through the API.
	userIDs := map[string]int64{}
	for _, u := range []struct{ login, role string }{
		{"carla", "contributor"}, {"arno", "author"}, {"eddie", "editor"}, {"ada", "admin"}, {"dora", "author"},
	} {
		r := runCLI(t, env, "user", "add", "--login", u.login, "--role", u.role)
		if r.code != exitOK {
			t.Fatalf("user add %s: exit %d: %s", u.login, r.code, r.stderr)
		}
		n, err := strconv.ParseInt(strings.TrimSpace(r.stdout), 10, 64)
		if err != nil {
			t.Fatalf("user add printed %q", r.stdout)
		}
		userIDs[u.login] = n
		tok := c.must(201, "POST", "/admin/tokens", admin, map[string]any{"user": n, "name": u.login + "'s laptop", "expires_in": 90 * 24 * 3600})
		s.tokens[u.login] = tok["token"].(string)
	}
	// A second token without expiry; dora disabled (her token refused).
	tok := c.must(201, "POST", "/admin/tokens", admin, map[string]any{"user": userIDs["eddie"], "name": "ci"})
	s.tokens["eddie-ci"] = tok["token"].(string)
	c.must(200, "PATCH", itemPath("admin/users", userIDs["dora"]), admin, map[string]any{"disabled": true})
	// An expired token: the API makes none (the shortest lasts a minute),
	// so it is written into the store as it would be found there later.
	expired, err := repository.NewTokenSecret()
	if err != nil {
		t.Fatal(err)
	}
	st, err := openStore(context.Background(), svc.cfg)
	if err != nil {
		t.Fatal(err)
	}
	created := time.Now().UTC().Add(-48 * time.Hour).Truncate(time.Second)
	if err := st.CreateToken(context.Background(), &repository.Token{Hash: repository.HashToken(expired), UserID: userIDs["arno"],
		Name: "old", Created: created, Expires: created.Add(24 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	closeStore(st)
	s.tokens["arno-expired"] = expired
	s.readers = []string{"", s.tokens["carla"], s.tokens["arno"], s.tokens["eddie"], s.tokens["ada"], s.tokens["dora"], expired}

	// Webhook endpoints: one for everything with a secret the service
	// draws, one for event messages with a secret given, one inactive.
	hook := c.must(201, "POST", "/admin/webhooks", admin, map[string]any{"url": rcv.URL + "/all", "events": []string{"*"}, "description": "CRM"})
	s.secrets["/all"] = hook["secret"].(string)
	key := make([]byte, 32)
	rand.Read(key)
	given := "whsec_" + base64.StdEncoding.EncodeToString(key)
	c.must(201, "POST", "/admin/webhooks", admin, map[string]any{"url": rcv.URL + "/events", "events": []string{"event.created", "event.updated"}, "secret": given})
	s.secrets["/events"] = given
	off := c.must(201, "POST", "/admin/webhooks", admin, map[string]any{"url": rcv.URL + "/off", "events": []string{"venue.created"}})
	c.must(200, "PATCH", itemPath("admin/webhooks", idOf(off)), admin, map[string]any{"active": false})

	// Labels: a category hierarchy three deep with a sibling, tags, names in
	// every language.
	lang := func(path, l string) string { return path + "?multilang_language=" + l }
	music := idOf(c.must(201, "POST", "/categories", admin, map[string]any{"name": "Music", "description": "<p>All <em>music</em>.</p>"}))
	c.must(200, "POST", lang(itemPath("categories", music), "fr"), admin, map[string]any{"name": "Musique", "description": "<p>Toute la musique.</p>"})
	c.must(200, "POST", lang(itemPath("categories", music), "de"), admin, map[string]any{"name": "Musik"})
	jazz := idOf(c.must(201, "POST", "/categories", admin, map[string]any{"name": "Jazz", "parent": music}))
	bebop := idOf(c.must(201, "POST", "/categories", admin, map[string]any{"name": "Bebop", "parent": jazz, "slug": "be-bop"}))
	theatre := idOf(c.must(201, "POST", lang("/categories", "fr"), admin, map[string]any{"name": "Théâtre"}))
	c.must(200, "POST", itemPath("categories", theatre), admin, map[string]any{"name": "Theatre"})
	outdoor := idOf(c.must(201, "POST", "/tags", admin, map[string]any{"name": "Outdoor"}))
	c.must(200, "POST", lang(itemPath("tags", outdoor), "fr"), admin, map[string]any{"name": "En plein air"})
	c.must(200, "POST", lang(itemPath("tags", outdoor), "de"), admin, map[string]any{"name": "Im Freien"})
	c.must(201, "POST", "/tags", admin, map[string]any{"name": "Family", "description": "For all ages"})
	gone := idOf(c.must(201, "POST", "/tags", admin, map[string]any{"name": "Gone"}))
	c.must(200, "DELETE", itemPath("tags", gone), admin, nil)

	// Venues with geo and organizers, in several statuses and languages.
	pleyel := idOf(c.must(201, "POST", "/venues", admin, map[string]any{"venue": "Salle Pleyel", "address": "252 Rue du Faubourg Saint-Honoré",
		"city": "Paris", "zip": "75008", "country": "France", "phone": "+33 1 76 49 43 13", "website": "https://www.sallepleyel.com",
		"geo_lat": 48.8771, "geo_lng": 2.3003, "description": "<p>A concert hall.</p>"}))
	c.must(200, "POST", lang(itemPath("venues", pleyel), "fr"), admin, map[string]any{"venue": "Salle Pleyel", "description": "<p>Une salle de concert.</p>"})
	cgb := idOf(c.must(201, "POST", "/venues", admin, map[string]any{"venue": "Concertgebouw", "city": "Amsterdam", "country": "Netherlands",
		"geo_lat": "52.3563", "geo_lng": "4.8787", "show_map": false}))
	c.must(201, "POST", "/venues", admin, map[string]any{"venue": "Back room", "status": "draft"})
	c.must(201, "POST", "/venues", s.tokens["eddie"], map[string]any{"venue": "Private salon", "status": "private", "geo_lat": -33.8568, "geo_lng": 151.2153})
	orch := idOf(c.must(201, "POST", "/organizers", admin, map[string]any{"organizer": "Orchestre de Paris", "email": "info@orchestre.example",
		"phone": "+33 1 00 00 00 00", "website": "https://orchestre.example"}))
	c.must(200, "POST", lang(itemPath("organizers", orch), "de"), admin, map[string]any{"organizer": "Pariser Orchester"})
	club := idOf(c.must(201, "POST", "/organizers", s.tokens["arno"], map[string]any{"organizer": "Jazz Club", "status": "publish"}))

	// Events in every status, in every language.
	ev := func(token string, body map[string]any) int64 {
		t.Helper()
		return idOf(c.must(201, "POST", "/events", token, body))
	}
	main := ev(admin, map[string]any{"title": "Opening night", "description": "<p>The <strong>season</strong> opens.</p>",
		"excerpt": "Season opening", "start_date": "2027-03-12 20:00:00", "end_date": "2027-03-12 23:00:00",
		"venue": pleyel, "organizer": []int64{orch, club}, "categories": []any{bebop, theatre}, "tags": []any{outdoor, "Family"},
		"cost": "25", "website": "https://calendar.example.org/opening", "featured": true, "sticky": true,
		"image": "https://images.example.org/opening.jpg", "ticketed": true})
	c.must(200, "POST", lang(itemPath("events", main), "fr"), admin, map[string]any{"title": "Soirée d'ouverture", "description": "<p>La saison s'ouvre.</p>", "excerpt": "Ouverture"})
	c.must(200, "POST", lang(itemPath("events", main), "de"), admin, map[string]any{"title": "Eröffnungsabend"})
	c.must(200, "POST", itemPath("events", main), admin, map[string]any{"excerpt": "The season's opening"})
	s.eventID = main
	ev(admin, map[string]any{"title": "Next season", "status": "future", "date": "2030-01-01 09:00:00",
		"start_date": "2030-02-01 19:00:00", "end_date": "2030-02-01 21:00:00", "venue": cgb})
	ev(admin, map[string]any{"title": "Draft idea", "status": "draft", "start_date": "2027-05-01 10:00:00", "end_date": "2027-05-01 11:00:00"})
	ev(s.tokens["carla"], map[string]any{"title": "Contributed", "status": "publish", "start_date": "2027-05-02 10:00:00",
		"end_date": "2027-05-02 11:00:00", "categories": []any{"Jazz"}})
	ev(s.tokens["eddie"], map[string]any{"title": "Members only", "status": "private", "start_date": "2027-05-03 10:00:00", "end_date": "2027-05-03 11:00:00"})
	trashed := ev(admin, map[string]any{"title": "Called off", "start_date": "2027-05-04 10:00:00", "end_date": "2027-05-04 11:00:00"})
	c.must(200, "DELETE", itemPath("events", trashed), admin, nil)
	deleted := ev(admin, map[string]any{"title": "Never was", "start_date": "2027-05-05 10:00:00", "end_date": "2027-05-05 11:00:00"})
	c.must(200, "DELETE", itemPath("events", deleted)+"?force=true", admin, nil)
	ev(admin, map[string]any{"title": "Secret rehearsal", "password": "s3same", "description": "<p>Behind closed doors.</p>",
		"start_date": "2027-05-06 18:00:00", "end_date": "2027-05-06 20:00:00", "venue": pleyel})
	ev(s.tokens["arno"], map[string]any{"title": "Open air", "event_status": "canceled", "event_status_reason": "Storm warning",
		"start_date": "2027-06-20 14:00:00", "end_date": "2027-06-20 18:00:00", "tags": []any{outdoor},
		"cost": []any{"10", "15.50"}, "currency_symbol": "$", "currency_code": "USD", "currency_position": "prefix"})
	ev(admin, map[string]any{"title": "Festival day", "all_day": true, "start_date": "2027-07-14", "end_date": "2027-07-14",
		"event_status": "postponed", "hide_from_listings": false, "image": "https://images.example.org/festival.png"})
	ev(admin, map[string]any{"title": "Streamed talk", "event_status": "moved_online", "timezone": "America/New_York",
		"start_date": "2027-03-14 02:30:00", "end_date": "2027-03-14 04:00:00"})

	// Series: changed, cancelled and removed occurrences, an addition and
	// an exclusion, then a split ("this and following").
	series := ev(admin, map[string]any{"title": "Evening class", "start_date": "2027-03-23 19:00", "end_date": "2027-03-23 21:00",
		"timezone": "Europe/Amsterdam", "venue": cgb, "categories": []any{jazz},
		"recurrence": map[string]any{"rules": []string{"FREQ=WEEKLY;BYDAY=TU,TH;UNTIL=20270630T235959Z"},
			"exclusions": []string{"2027-04-06 19:00:00"}, "additions": []string{"2027-04-17 10:00:00"}}})
	c.must(200, "POST", lang(itemPath("events", series), "fr"), admin, map[string]any{"title": "Cours du soir"})
	occ := itemPath("events", series) + "/occurrences/"
	c.must(200, "PATCH", occ+"20270325T190000", admin, map[string]any{"title": "Evening class (room 2)", "start_date": "2027-03-25 20:00"})
	c.must(200, "PATCH", lang(occ+"20270325T190000", "fr"), admin, map[string]any{"title": "Cours du soir (salle 2)"})
	c.must(200, "PATCH", occ+"20270330T190000", admin, map[string]any{"event_status": "canceled", "event_status_reason": "Teacher ill"})
	c.must(200, "DELETE", occ+"20270401T190000", admin, nil)
	c.must(201, "POST", occ+"20270413T190000/split", admin, map[string]any{"title": "Evening class, new term", "end_date": "2027-04-13 21:30"})
	ev(admin, map[string]any{"title": "Morning run", "start_date": "2027-04-01 07:00:00", "end_date": "2027-04-01 08:00:00", "tags": []any{outdoor},
		"recurrence": map[string]any{"rules": []string{"FREQ=DAILY;COUNT=5"}}})
	ev(admin, map[string]any{"title": "Monthly meeting", "start_date": "2027-01-04 18:00:00", "end_date": "2027-01-04 19:00:00", "status": "draft",
		"recurrence": map[string]any{"rules": []string{"FREQ=MONTHLY;BYDAY=1MO;COUNT=12"}}})

	// A calendar source run once: its events carry the source.
	src := idOf(c.must(201, "POST", "/sources", s.tokens["eddie"], map[string]any{"url": feedURL, "name": "Partner", "status": "publish",
		"categories": []any{music}, "tags": []any{"Family"}}))
	s.sourceID = src
	c.must(202, "POST", itemPath("sources", src)+"/run", s.tokens["eddie"], nil)
	deadline := testdeadline.Of(t)
	for {
		var runs struct {
			Runs []struct{ Status, Error string }
		}
		_, raw := c.do("GET", itemPath("sources", src)+"/runs", admin, nil)
		if json.Unmarshal(raw, &runs) == nil && len(runs.Runs) == 1 && runs.Runs[0].Status != repository.RunRunning {
			if runs.Runs[0].Status != repository.RunSucceeded {
				t.Fatalf("the source's run: %s", raw)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the source's run never ended: %s", raw)
		}
		time.Sleep(50 * time.Millisecond) // polling the run
	}
	return s
}

// countItems returns how many events, venues, organizers, categories and
// tags the administrator's lists of svc name (once the worker indexed
// every write).
func countItems(t *testing.T, svc *service) int {
	t.Helper()
	c, n := newCaller(t, svc), 0
	for _, list := range []string{
		"/events?status=publish,future,draft,pending,private,trash&start_date=1000-01-02&end_date=9999-12-30&hide_subsequent_recurrences=true",
		"/venues?status=publish,future,draft,pending,private,trash", "/organizers?status=publish,future,draft,pending,private,trash",
		"/categories?hide_empty=false", "/tags?hide_empty=false",
	} {
		var total struct{ Total int }
		if err := json.Unmarshal(mustBody(t, c, list), &total); err != nil || total.Total == 0 {
			t.Fatalf("GET %s: %v, total %d", list, err, total.Total)
		}
		n += total.Total
	}
	return n
}
