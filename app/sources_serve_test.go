package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/calendar/eventcal/config/testdeadline"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/repository/sqlite"
	"github.com/calendar/eventcal/sync/schedule"
)

// TestServeRunsScheduledSources: serve runs a source with a schedule on
// it (trigger "schedule": its events are imported and listed), starts
// the runs the API asks for with the same runner (POST
// /sources/{id}/run answers 202, not 503), and counts both in /metrics.
// The scheduled source runs at its offset within the minute, which the
// test picks a few seconds after the start.
func TestServeRunsScheduledSources(t *testing.T) {
	t.Parallel()
	var fetched atomic.Int32
	feedSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetched.Add(1)
		w.Header().Set("Content-Type", "text/calendar")
		_, _ = w.Write([]byte(sourceFeed))
	}))
	defer feedSrv.Close()
	dir := t.TempDir()
	st, err := sqlite.Open(context.Background(), filepath.Join(dir, "calendar.db"))
	if err != nil {
		t.Fatal(err)
	}
	// The scheduled source's slot within the minute follows from its ID
	// (the spread rule): manual sources created first give it the ID
	// whose slot comes a few seconds after the service starts, so the
	// test does not wait most of a minute (a slot missed during a slow
	// start only means the next one, a minute later).
	scheduledID := int64(1)
	for now := time.Now(); ; scheduledID++ {
		next, ok := schedule.SourceNext(scheduledID, "@every 1m", time.UTC, now)
		if !ok {
			t.Fatal("no slot for @every 1m")
		}
		if wait := next.Sub(now); wait >= 4*time.Second && wait <= 12*time.Second || scheduledID == 120 {
			break
		}
	}
	var seed []*repository.Source
	for range scheduledID - 1 {
		seed = append(seed, &repository.Source{URL: feedSrv.URL + "/filler.ics", Format: repository.SourceICS, Name: "Filler",
			Status: repository.StatusDraft, OnRemoved: repository.OnRemovedTrash})
	}
	seed = append(seed,
		&repository.Source{URL: feedSrv.URL + "/scheduled.ics", Format: repository.SourceICS, Name: "Scheduled", Schedule: "@every 1m",
			Status: repository.StatusPublish, OnRemoved: repository.OnRemovedTrash},
		&repository.Source{URL: feedSrv.URL + "/manual.ics", Format: repository.SourceICS, Name: "Manual",
			Status: repository.StatusDraft, OnRemoved: repository.OnRemovedTrash})
	manualID := scheduledID + 1
	for _, s := range seed {
		if err := st.CreateSource(context.Background(), s); err != nil {
			t.Fatal(err)
		}
	}
	st.Close(context.Background())

	svc := startService(t, map[string]string{"DATA_DIR": dir, "LISTEN_ADDR": "127.0.0.1:0", "DRAIN_DELAY": "0",
		"SOURCES_ALLOW_PRIVATE": "true", "ADMIN_TOKEN": "ops-token"})
	api := &apiClient{base: "http://" + svc.addr.String() + svc.cfg.APIRoot(), token: "ops-token", http: &http.Client{Timeout: time.Minute}}
	type runList struct {
		Runs []struct {
			Status, Trigger, Error string
			Created                int
		} `json:"runs"`
	}
	deadline := testdeadline.Of(t)
	poll := func(what string, ok func() bool) {
		t.Helper()
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("never %s\n%s", what, svc.logs.String())
			}
			time.Sleep(100 * time.Millisecond) // polling the service
		}
	}

	// The manual source runs when asked through the API.
	var started struct{ Status, Trigger string }
	if code, err := api.send(http.MethodPost, fmt.Sprintf("/sources/%d/run", manualID), nil, &started); code != http.StatusAccepted || err != nil || started.Trigger != "api" {
		t.Fatalf("POST /sources/%d/run = %d %v %+v; want 202 with the run of trigger api", manualID, code, err, started)
	}
	poll("the manual run finished", func() bool {
		var runs runList
		_, err := api.send(http.MethodGet, fmt.Sprintf("/sources/%d/runs", manualID), nil, &runs)
		return err == nil && len(runs.Runs) == 1 && runs.Runs[0].Status == repository.RunSucceeded && runs.Runs[0].Created == 2
	})

	// The scheduled source runs on its own, and its events are listed.
	poll("a scheduled run succeeded", func() bool {
		var runs runList
		_, err := api.send(http.MethodGet, fmt.Sprintf("/sources/%d/runs", scheduledID), nil, &runs)
		return err == nil && len(runs.Runs) >= 1 && runs.Runs[len(runs.Runs)-1].Trigger == "schedule" &&
			runs.Runs[len(runs.Runs)-1].Status == repository.RunSucceeded
	})
	var runs runList
	if _, err := api.send(http.MethodGet, fmt.Sprintf("/sources/%d/runs", scheduledID), nil, &runs); err != nil || runs.Runs[len(runs.Runs)-1].Created != 2 {
		t.Fatalf("runs of the scheduled source: %+v, %v; want the first one creating 2 events", runs, err)
	}
	poll("the scheduled source's events are listed", func() bool {
		res, err := http.Get(api.base + "/events?start_date=2027-01-01")
		if err != nil {
			return false
		}
		defer res.Body.Close()
		var list struct{ Total int }
		// The published events; the manual source's are drafts.
		return json.NewDecoder(res.Body).Decode(&list) == nil && list.Total == 2
	})
	req, _ := http.NewRequest(http.MethodGet, "http://"+svc.addr.String()+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer ops-token")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body bytes.Buffer
	if _, err := body.ReadFrom(res.Body); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`eventcal_source_scheduled 1`,
		`eventcal_source_scheduled_runs_total{result="succeeded"}`,
		`eventcal_source_runs_total{outcome="succeeded"}`,
	} {
		if !strings.Contains(body.String(), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(body.String(), `eventcal_source_scheduled_runs_total{result="succeeded"} 0`) {
		t.Error("/metrics counts no scheduled run")
	}
	if err := svc.stop(t); err != nil {
		t.Errorf("stop: %v", err)
	}
}
