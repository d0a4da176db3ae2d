package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/calendar/eventcal/config/testdeadline"
	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/search/meili"
)

// TestCommandServesHealthAndSearch builds the command, runs it on a free
// port with a master key, and checks GET /health and one place added and
// found through the service's Meilisearch client.
func TestCommandServesHealthAndSearch(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "meilisim")
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if out, err := exec.Command(goTool, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-addr", "127.0.0.1:0", "-master-key", "KEY", "-version", "1.18.0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cancel()
		_ = cmd.Wait()
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if err != nil || !ok {
		t.Fatalf("first line %q, %v; want listening on ADDR", line, err)
	}
	url := "http://" + addr

	resp, err := http.Get(url + "/health")
	if err != nil {
		t.Fatal(err)
	}
	var health map[string]any
	err = json.NewDecoder(resp.Body).Decode(&health)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || health["status"] != "available" {
		t.Fatalf("GET /health = %d %v, %v; want 200 {status: available}", resp.StatusCode, health, err)
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
