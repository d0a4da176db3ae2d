package present

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/repository"
)

// TestEventSourceField checks the source field of events: null for an
// event made here, {id, uid} for an imported one, on every rendering of
// the API's own root (single, listed, redacted), and absent under The
// Events Calendar's root.
func TestEventSourceField(t *testing.T) {
	rn, ev, l := typedFixture(t)
	imported := *ev
	imported.ID = 11
	imported.Source = &repository.SourceLink{SourceID: 4, UID: "abc@feed.test", RecurrenceID: "20270318T190000", Hash: "h"}
	tecCfg := config.Default()
	tecCfg.RestRoot, tecCfg.APINamespace = "/wp-json", "tribe/events/v1"
	tec := &Renderer{cfg: tecCfg, siteHost: "example.test", links: linkedRecords{gen: func() int64 { return 1 }, ttl: time.Hour}}
	tec.placeRenderer = placeRenderer{tec}
	redacted := func(p *repository.Record) *Event {
		e := rn.ListedEvent(p, l, View{Lang: "en"})
		RedactEvent(e)
		return e
	}
	cases := []struct {
		name string
		ev   *Event
		want string // the source field as JSON; "" absent
	}{
		{"local, single", rn.Event(ev, l, View{Lang: "en", Single: true}), "null"},
		{"local, listed", rn.ListedEvent(ev, l, View{Lang: "en"}), "null"},
		{"imported, single", rn.Event(&imported, l, View{Lang: "en", Single: true}), `{"id":4,"uid":"abc@feed.test"}`},
		{"imported, listed", rn.ListedEvent(&imported, l, View{Lang: "en"}), `{"id":4,"uid":"abc@feed.test"}`},
		{"imported, redacted", redacted(&imported), `{"id":4,"uid":"abc@feed.test"}`},
		{"imported, TEC root", tec.Event(&imported, l, View{Lang: "en", Single: true}), ""},
		{"local, TEC root", tec.ListedEvent(ev, l, View{Lang: "en"}), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(encode(t, c.ev), &m); err != nil {
				t.Fatal(err)
			}
			got, ok := m["source"]
			switch {
			case c.want == "" && ok:
				t.Errorf("source = %s, want no source field", got)
			case c.want != "" && string(got) != c.want:
				t.Errorf("source = %s, want %s", got, c.want)
			}
		})
	}
}

// TestSourceShapes checks the values of a source and a run: dates in the
// admin shapes' format, null for what is not known yet (detected_format,
// last_run, a running run's finished and error), [] for no labels and no
// problems.
func TestSourceShapes(t *testing.T) {
	day := time.Date(2027, 3, 18, 18, 0, 0, 0, time.FixedZone("x", 3600))
	src := &repository.Source{ID: 2, Name: "Feed", URL: "https://feed.test/a.ics", Format: "auto", Schedule: "@daily", Status: "draft",
		OnRemoved: "trash", Author: 5, Created: day, Updated: day, ETag: `"secret-etag"`, ContentHash: "hash"}
	running := &repository.SourceRun{ID: 3, SourceID: 2, Status: repository.RunRunning, Trigger: "api", Started: day}
	done := &repository.SourceRun{ID: 4, SourceID: 2, Status: repository.RunSucceeded, Trigger: "schedule", Started: day,
		Finished: day.Add(time.Minute), Created: 1, Updated: 2, Unchanged: 3, Removed: 4, Failed: 1,
		Problems: []repository.RunProblem{{UID: "u1", Problem: "no start"}}}
	detected := *src
	detected.DetectedFormat, detected.Categories, detected.Tags = "ics", []int64{7, 8}, []int64{9}
	cases := []struct {
		name string
		v    any
		want string
	}{
		{"new source", NewSource(src, nil), `{"id":2,"name":"Feed","url":"https://feed.test/a.ics","format":"auto","detected_format":null,"schedule":"@daily","status":"draft","categories":[],"tags":[],"on_removed":"trash","author":5,"created":"2027-03-18T17:00:00Z","updated":"2027-03-18T17:00:00Z","last_run":null}`},
		{"source after a run", NewSource(&detected, done), `{"id":2,"name":"Feed","url":"https://feed.test/a.ics","format":"auto","detected_format":"ics","schedule":"@daily","status":"draft","categories":[7,8],"tags":[9],"on_removed":"trash","author":5,"created":"2027-03-18T17:00:00Z","updated":"2027-03-18T17:00:00Z","last_run":{"id":4,"source_id":2,"status":"succeeded","trigger":"schedule","started":"2027-03-18T17:00:00Z","finished":"2027-03-18T17:01:00Z","created":1,"updated":2,"unchanged":3,"removed":4,"failed":1,"error":null,"problems":[{"uid":"u1","problem":"no start"}]}}`},
		{"running run", NewSourceRun(running), `{"id":3,"source_id":2,"status":"running","trigger":"api","started":"2027-03-18T17:00:00Z","finished":null,"created":0,"updated":0,"unchanged":0,"removed":0,"failed":0,"error":null,"problems":[]}`},
		{"failed run", NewSourceRun(&repository.SourceRun{ID: 5, SourceID: 2, Status: repository.RunFailed, Trigger: "cli", Started: day, Finished: day, Error: "the source answered HTTP 500"}),
			`{"id":5,"source_id":2,"status":"failed","trigger":"cli","started":"2027-03-18T17:00:00Z","finished":"2027-03-18T17:00:00Z","created":0,"updated":0,"unchanged":0,"removed":0,"failed":0,"error":"the source answered HTTP 500","problems":[]}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := string(encode(t, c.v))
			if got != c.want {
				t.Errorf("got\n%s\nwant\n%s", got, c.want)
			}
			if strings.Contains(got, "secret-etag") || strings.Contains(got, "hash") {
				t.Errorf("the validators are shown: %s", got)
			}
		})
	}
}
