package testsupport

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestRecorder: the planned statuses first, in order, then 200, or 503
// while Failing; every request recorded with its path, header and body.
func TestRecorder(t *testing.T) {
	rc := NewRecorder(t)
	rc.SetPlan(500, 418)
	post := func(path string) int {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, rc.URL+path, strings.NewReader("body of "+path))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Probe", path)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	var got []int
	got = append(got, post("/a"), post("/b"), post("/c"))
	rc.Failing.Store(true)
	got = append(got, post("/d"))
	rc.SetPlan(202)
	got = append(got, post("/e"), post("/f"))
	want := []int{500, 418, 200, 503, 202, 503}
	all := rc.All()
	if len(all) != len(want) {
		t.Fatalf("%d requests recorded, want %d", len(all), len(want))
	}
	for i, r := range all {
		path := "/" + string(rune('a'+i))
		if got[i] != want[i] || r.Status != want[i] || r.Path != path || string(r.Body) != "body of "+path || r.Header.Get("X-Probe") != path || r.Got.IsZero() {
			t.Errorf("request %d: answered %d, recorded %+v; want %d to %s", i, got[i], r, want[i], path)
		}
	}
}

// TestClock: Set and Advance move what Now reads.
func TestClock(t *testing.T) {
	start := time.Unix(1_000_000, 0)
	c := NewClock(start)
	if !c.Now().Equal(start) {
		t.Fatalf("Now = %v, want %v", c.Now(), start)
	}
	c.Advance(90 * time.Second)
	if want := start.Add(90 * time.Second); !c.Now().Equal(want) {
		t.Errorf("after Advance: %v, want %v", c.Now(), want)
	}
	c.Set(start.Add(-time.Hour))
	if want := start.Add(-time.Hour); !c.Now().Equal(want) {
		t.Errorf("after Set: %v, want %v", c.Now(), want)
	}
}
