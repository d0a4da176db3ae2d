package app

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/calendar/eventcal/config/testdeadline"
	"github.com/calendar/eventcal/repository"
)

// TestBackgroundWritesShowAtOnce: what a calendar source's run writes in
// the background (not through a write route) shows in the answers the
// embedded service renders once the run's events are indexed, as a write
// route's would: the term counts of a category and a tag the run's events
// carry, on the term and on an event embedding it. They were the counts
// taken before the run: the renderer kept them (its write generation
// moved with write routes only), and a page rendered with them stayed in
// the response cache for its minute (found by TestRoundTrip, whose first
// service showed them against the loaded copies' true counts).
func TestBackgroundWritesShowAtOnce(t *testing.T) {
	t.Parallel()
	feed := tripFeedServer(t)
	env := tripEnv(map[string]string{"DATA_DIR": t.TempDir()})
	svc := startService(t, env)
	c := newCaller(t, svc)
	admin := tripAdminToken
	music := idOf(c.must(201, "POST", "/categories", admin, map[string]any{"name": "Music"}))
	family := idOf(c.must(201, "POST", "/tags", admin, map[string]any{"name": "Family"}))
	event := idOf(c.must(201, "POST", "/events", admin, map[string]any{"title": "Opening", "start_date": "2027-03-12 20:00:00",
		"end_date": "2027-03-12 23:00:00", "categories": []int64{music}, "tags": []int64{family}}))
	waitSettled(t, svc, nil)
	paths := []string{itemPath("categories", music), itemPath("tags", family), itemPath("events", event)}
	counts := func() []string {
		var out []string
		for _, p := range paths {
			var body struct {
				Count      *int
				Categories []struct{ Count int }
				Tags       []struct{ Count int }
			}
			if err := json.Unmarshal(mustBody(t, c, p), &body); err != nil {
				t.Fatal(err)
			}
			if body.Count != nil {
				out = append(out, fmt.Sprint(*body.Count))
			} else {
				out = append(out, fmt.Sprint(body.Categories[0].Count, body.Tags[0].Count))
			}
		}
		return out
	}
	if got := fmt.Sprint(counts()); got != "[1 1 1 1]" {
		t.Fatalf("counts before the run: %s, want [1 1 1 1]", got)
	}
	// Anonymous readers read them too (their answers are cached apart).
	for _, p := range paths {
		if code, raw := c.do("GET", p, "", nil); code != 200 {
			t.Fatalf("GET %s: %d %s", p, code, raw)
		}
	}

	// The source adds Music and Family to the two events it imports.
	src := idOf(c.must(201, "POST", "/sources", admin, map[string]any{"url": feed.URL + "/partner.ics", "name": "Partner", "status": "publish",
		"categories": []int64{music}, "tags": []int64{family}}))
	c.must(202, "POST", itemPath("sources", src)+"/run", admin, nil)
	deadline := testdeadline.Of(t)
	for {
		var runs struct{ Runs []struct{ Status string } }
		if err := json.Unmarshal(mustBody(t, c, itemPath("sources", src)+"/runs"), &runs); err == nil && len(runs.Runs) == 1 && runs.Runs[0].Status == repository.RunSucceeded {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the source's run never succeeded")
		}
		time.Sleep(20 * time.Millisecond) // polling the run
	}
	waitSettled(t, svc, nil)
	if got := fmt.Sprint(counts()); got != "[3 3 3 3]" {
		t.Errorf("counts after the run (as admin): %s, want [3 3 3 3]", got)
	}
	for _, p := range paths {
		_, raw := c.do("GET", p, "", nil)
		var body struct {
			Count      *int
			Categories []struct{ Count int }
		}
		if err := json.Unmarshal(raw, &body); err != nil {
			t.Fatal(err)
		}
		if body.Count != nil && *body.Count != 3 || body.Count == nil && body.Categories[0].Count != 3 {
			t.Errorf("anonymous GET %s after the run: %s, want the count 3", p, raw)
		}
	}
}
