package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/calendar/eventcal/app/api"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/search"
)

// hiddenSeries is a draft series whose words, slug and rule must never
// reach an anonymous reader.
func hiddenSeries(status string) map[string]any {
	return weekly(map[string]any{"title": "Clandestine rehearsal", "slug": "clandestine-rehearsal",
		"description": "Backstage only", "status": status, "recurrence": map[string]any{"rules": []any{"FREQ=WEEKLY;COUNT=4;WKST=SU"}}})
}

// hiddenMarkers are the texts of hiddenSeries an anonymous response must
// not carry.
var hiddenMarkers = []string{"Clandestine", "clandestine-rehearsal", "Backstage", "WKST=SU"}

// publishOccurrenceInStore writes, as stored data can hold it, an override
// publishing one occurrence of the series id.
func publishOccurrenceInStore(t *testing.T, e *env, id int64, key string) {
	t.Helper()
	pub := repository.StatusPublish
	if _, err := e.store.UpdateRecord(context.Background(), id, func(p *repository.Record) error {
		p.Event.Overrides = append(p.Event.Overrides, repository.OccurrenceOverride{Key: key, Status: &pub})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// protectedOccurrencesRedacted asserts that the description of a
// password-protected series reaches no anonymous reader, whatever its
// occurrence's override says.
func protectedOccurrencesRedacted(t *testing.T, e *env, id int64, key string) {
	t.Helper()
	window := "start_date=2027-01-01&end_date=2027-12-31"
	for _, u := range []string{"events?" + window, "events.ics?" + window, fmt.Sprintf("events/%d/occurrences?%s", id, window),
		fmt.Sprintf("events/%d/occurrences/%s", id, key), fmt.Sprintf("events/%d.ics", id), "events?search=backstage"} {
		if r := e.do("GET", u, "", nil); strings.Contains(r.raw, "Backstage") {
			t.Errorf("anonymous GET %s shows the protected description: %.300s", u, r.raw)
		}
	}
	if r := e.do("GET", fmt.Sprintf("events/%d/occurrences/%s", id, key), "", nil); r.status != 403 || r.str("code") != "event-password-protected" {
		t.Errorf("anonymous occurrence of a protected series: %d %.300s", r.status, r.raw)
	}
}

// anonymousSeesNothing asserts that no anonymous read of any format shows
// the series id or one of its occurrences.
func anonymousSeesNothing(t *testing.T, e *env, id int64, key string) {
	t.Helper()
	window := "start_date=2027-01-01&end_date=2027-12-31"
	for _, c := range []struct {
		url    string
		status int
	}{
		{"events?" + window, 200},
		{"events?" + window + "&hide_subsequent_recurrences=true", 200},
		{"events?search=clandestine&" + window, 200},
		{"events?search=backstage", 200},
		{"events?" + window + "&per_page=50&page=1&featured=false", 200},
		{"events.ics?" + window, 200},
		{fmt.Sprintf("events/%d", id), 403},
		{fmt.Sprintf("events/%d.ics", id), 403},
		{fmt.Sprintf("events/%d/occurrences?%s", id, window), 403},
		{fmt.Sprintf("events/%d/occurrences/%s", id, key), 403},
		{"events/by-slug/clandestine-rehearsal", 403},
	} {
		r := e.do("GET", c.url, "", nil)
		if r.status != c.status {
			t.Errorf("anonymous GET %s: status %d, want %d: %.300s", c.url, r.status, c.status, r.raw)
		}
		for _, m := range hiddenMarkers {
			if strings.Contains(r.raw, m) {
				t.Errorf("anonymous GET %s shows %q: %.300s", c.url, m, r.raw)
			}
		}
		if c.status == 200 && !strings.HasSuffix(strings.SplitN(c.url, "?", 2)[0], ".ics") {
			if n := r.num("total"); n != 0 {
				t.Errorf("anonymous GET %s: total %v, want 0", c.url, n)
			}
		}
	}
}

// TestOccurrenceNeverMoreVisibleThanSeries: an occurrence of a draft
// series cannot be published (400, nothing stored); one published in the
// stored data anyway is shown to no anonymous caller in any format (JSON
// lists, window lists, search, the occurrence routes, both iCalendar
// feeds, json_ld), while its editor still reads it, as a draft; the
// webhook rendering reports it as a draft.
func TestOccurrenceNeverMoreVisibleThanSeries(t *testing.T) {
	t.Parallel()
	const key = "20270325T190000"
	for _, role := range []string{"author", "editor"} {
		t.Run("direct by "+role, func(t *testing.T) {
			e := newEnv(t)
			id := e.must(201, "POST", "events", role, hiddenSeries("draft")).id()
			before, err := e.store.GetRecord(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			r := e.do("PATCH", fmt.Sprintf("events/%d/occurrences/%s", id, key), role, map[string]any{"status": "publish"})
			if r.status != 400 || r.str("code") != "rest_invalid_param" ||
				!strings.Contains(r.raw, "An occurrence can be published only when its series is") || !strings.Contains(r.raw, "is draft") {
				t.Fatalf("publishing an occurrence of a draft series: %d %s", r.status, r.raw)
			}
			after, err := e.store.GetRecord(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			if after.Revision != before.Revision || len(after.Event.Overrides) != 0 {
				t.Fatalf("refused write stored something: revision %d -> %d, overrides %+v", before.Revision, after.Revision, after.Event.Overrides)
			}
			// With the title in the same request, nothing of it is kept either.
			e.must(400, "PATCH", fmt.Sprintf("events/%d/occurrences/%s", id, key), role, map[string]any{"status": "publish", "title": "Leaked"})
			e.flush()
			anonymousSeesNothing(t, e, id, key)
			// Once the series is published, so may its occurrences be.
			e.must(200, "PATCH", fmt.Sprintf("events/%d", id), role, map[string]any{"status": "publish"})
			e.must(200, "PATCH", fmt.Sprintf("events/%d/occurrences/%s", id, key), role, map[string]any{"status": "publish"})
		})
	}
	for _, status := range []string{"draft", "private", "pending", "password"} {
		t.Run("stored "+status, func(t *testing.T) {
			e := newEnv(t)
			body := hiddenSeries(status)
			if status == "password" {
				body = hiddenSeries("publish")
				body["password"] = "sesame"
			}
			id := e.must(201, "POST", "events", "editor", body).id()
			publishOccurrenceInStore(t, e, id, key)
			e.flush()
			if status == "password" {
				// A protected series is listed, redacted, as a protected
				// event is; its occurrences are protected by its password.
				protectedOccurrencesRedacted(t, e, id, key)
				return
			}
			anonymousSeesNothing(t, e, id, key)
			occ := e.must(200, "GET", fmt.Sprintf("events/%d/occurrences/%s", id, key), "editor", nil)
			if occ.str("status") != status || occ.str("title") != "Clandestine rehearsal" {
				t.Errorf("editor reads the occurrence: status %q (want the series' %q): %s", occ.str("status"), status, occ.raw)
			}
			list := e.must(200, "GET", "events?start_date=2027-01-01&end_date=2027-12-31&status="+status, "editor", nil)
			if list.num("total") != 4 || list.str("events.1.occurrence.key") != key || list.str("events.1.status") != status {
				t.Errorf("editor's list: %s", list.raw)
			}
			feed := e.do("GET", fmt.Sprintf("events/%d.ics", id), "editor", nil)
			if feed.status != 200 || !strings.Contains(feed.raw, "SUMMARY:Clandestine rehearsal") {
				t.Errorf("editor's feed: %d %s", feed.status, feed.raw)
			}
			p, err := e.store.GetRecord(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := api.NewItemRenderer(api.Options{Config: e.cfg, Store: e.store}).RenderRecord(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			var item map[string]any
			if err := json.Unmarshal(raw, &item); err != nil {
				t.Fatal(err)
			}
			if got := jsonPath(item, "changed_occurrences.0.status"); got != status {
				t.Errorf("webhook item: changed occurrence status %v, want %q", got, status)
			}
		})
	}
}

// TestStaleIndexedOccurrenceHidden: an index whose occurrence document
// still says publish for an occurrence of a draft series (written before
// occurrences followed their series) does not make the lists show it.
func TestStaleIndexedOccurrenceHidden(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const key = "20270325T190000"
	id := e.must(201, "POST", "events", "editor", hiddenSeries("draft")).id()
	publishOccurrenceInStore(t, e, id, key)
	e.flush()
	// The document of the old builder: the override's status as it is.
	docs, err := e.worker.Docs.Events(context.Background(), []*repository.Record{mustPost(t, e, id)})
	if err != nil {
		t.Fatal(err)
	}
	var stale []search.EventDocument
	for _, d := range docs {
		if d.Occurrence == key {
			d.Status = repository.StatusPublish
		}
		stale = append(stale, d)
	}
	if err := e.engine.IndexEvents(context.Background(), stale); err != nil {
		t.Fatal(err)
	}
	if r := e.must(200, "GET", "events?start_date=2027-01-01&end_date=2027-12-31&_=raw", "", nil); len(r.path("events").([]any)) != 0 {
		t.Fatalf("stale occurrence listed: %s", r.raw)
	}
	anonymousSeesNothingInFeeds(t, e)
}

// anonymousSeesNothingInFeeds checks the list feed for hiddenMarkers.
func anonymousSeesNothingInFeeds(t *testing.T, e *env) {
	t.Helper()
	r := e.must(200, "GET", "events.ics?start_date=2027-01-01&end_date=2027-12-31", "", nil)
	for _, m := range hiddenMarkers {
		if strings.Contains(r.raw, m) {
			t.Errorf("anonymous feed shows %q: %s", m, r.raw)
		}
	}
}

// mustPost reads a post from the store.
func mustPost(t *testing.T, e *env, id int64) *repository.Record {
	t.Helper()
	p, err := e.store.GetRecord(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
