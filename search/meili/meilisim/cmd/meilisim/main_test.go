package main

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/calendar/eventcal/config/testdeadline"
	"github.com/calendar/eventcal/config/testsupport"
	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/search/meili"
)

// TestMain runs the command's main when a test starts this binary as the
// command (testsupport.MainCommand).
func TestMain(m *testing.M) {
	testsupport.RunMain(main)
	os.Exit(m.Run())
}

// TestCommandServesHealthAndSearch builds the command, runs it on a free
// port with a master key for each supported version, polls GET /health
// until it answers (within the test's deadline), checks GET /version and
// one place added and found through the service's Meilisearch client,
// and stops it. A version the simulator does not model is refused.
func TestCommandServesHealthAndSearch(t *testing.T) {
	bin := testsupport.MainCommand(t) // this test binary running main
	for _, version := range []string{"1.18.0", "1.50.0"} {
		t.Run(version, func(t *testing.T) { serveAndSearch(t, bin, version) })
	}
	for _, version := range []string{"1.17.0", "1.51.0", "1.18"} {
		t.Run("refuses "+version, func(t *testing.T) {
			out, err := exec.CommandContext(t.Context(), bin, "-addr", "127.0.0.1:0", "-version", version).CombinedOutput()
			if err == nil || !strings.Contains(string(out), "version") {
				t.Errorf("-version %s: %v %q, want an error naming the version", version, err, out)
			}
		})
	}
}

// serveAndSearch runs the command built at bin with -version version.
func serveAndSearch(t *testing.T, bin, version string) {
	ctx := t.Context()
	_, addr := testsupport.StartServer(t, bin, "-addr", "127.0.0.1:0", "-master-key", "KEY", "-version", version)
	url := "http://" + addr

	// Poll /health with a deadline (no fixed sleep).
	deadline := time.Now().Add(testdeadline.Timeout(t))
	var health map[string]any
	for {
		resp, err := http.Get(url + "/health")
		if err == nil {
			health = nil
			err = json.NewDecoder(resp.Body).Decode(&health)
			resp.Body.Close()
			if err == nil && resp.StatusCode == 200 && health["status"] == "available" {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET /health never answered 200 {status: available}: %v %v", health, err)
		}
		time.Sleep(10 * time.Millisecond) // a poll interval, not a wait for an outcome
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/version", nil)
	req.Header.Set("Authorization", "Bearer KEY")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&v)
	resp.Body.Close()
	if v["pkgVersion"] != version {
		t.Errorf("GET /version = %v, want pkgVersion %s", v, version)
	}

	e, err := meili.Open(ctx, url, "KEY", meili.Options{Languages: []string{"en"}, TaskTimeout: testdeadline.Timeout(t)})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer e.Close()
	if err := e.Init(ctx); err != nil {
		t.Fatalf("Init: %v", err)
	}
	doc := search.PlaceDocument{ID: 7, Kind: search.Venues, Status: "publish",
		Text: map[string]search.Text{"en": {Title: "Temple Avenue Hall"}}}
	if err := e.IndexPlaces(ctx, []search.PlaceDocument{doc}); err != nil {
		t.Fatalf("IndexPlaces: %v", err)
	}
	r, err := e.SearchPlaces(ctx, search.PlaceQuery{Kind: search.Venues, Lang: "en", Query: "temple", Limit: 10})
	if err != nil || r.Total != 1 || len(r.IDs) != 1 || r.IDs[0] != 7 {
		t.Fatalf("SearchPlaces = %+v, %v; want venue 7", r, err)
	}
	if _, err := meili.Open(ctx, url, "WRONG", meili.Options{Languages: []string{"en"}}); err == nil {
		t.Error("Open with a wrong key succeeded; the master key is not enforced")
	}
}
