package app

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/repository/sqlite"
)

// sourceFeed is a small iCalendar feed: two events.
const sourceFeed = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\n" +
	"BEGIN:VEVENT\r\nUID:one@partner.example\r\nDTSTAMP:20270101T000000Z\r\nDTSTART:20270318T190000Z\r\nDTEND:20270318T210000Z\r\nSUMMARY:Concert\r\nEND:VEVENT\r\n" +
	"BEGIN:VEVENT\r\nUID:two@partner.example\r\nDTSTAMP:20270101T000000Z\r\nDTSTART:20270319T190000Z\r\nDTEND:20270319T210000Z\r\nSUMMARY:Lecture\r\nEND:VEVENT\r\n" +
	"END:VCALENDAR\r\n"

// TestSourceCommands runs "source add|list|run|runs" on an embedded
// store against feeds served by a local server: a source is added
// through the sources service's checks (an unknown category, a bad
// schedule, a private address without SOURCES_ALLOW_PRIVATE are
// refused), runs to its end printing its counts, fails with status 1
// and its error when the feed answers 500, and its runs are listed
// newest first.
func TestSourceCommands(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st, err := sqlite.Open(context.Background(), filepath.Join(dir, "calendar.db"))
	if err != nil {
		t.Fatal(err)
	}
	cat := &repository.Label{Taxonomy: repository.LabelCategory, Name: repository.Text{"en": "Partners"}, Slug: repository.Text{"en": "partners"}}
	if err := st.CreateLabel(context.Background(), cat); err != nil {
		t.Fatal(err)
	}
	st.Close(context.Background())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/broken.ics" {
			http.Error(w, "down", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/calendar")
		_, _ = w.Write([]byte(sourceFeed))
	}))
	defer srv.Close()
	env := map[string]string{"DATA_DIR": dir}
	private := map[string]string{"DATA_DIR": dir, "SOURCES_ALLOW_PRIVATE": "true"}

	runCLISteps(t, []cliStep{
		{"usage", env, []string{"source"}, exitUsage, "", "source add --url", ""},
		{"help", env, []string{"source", "-h"}, exitOK, "@every <duration>", "", ""},
		{"unknown", env, []string{"source", "frob"}, exitUsage, "", `unknown command "source frob"`, ""},
		{"add needs url", env, []string{"source", "add"}, exitUsage, "", "--url is required", ""},
		{"add refuses loopback", env, []string{"source", "add", "--url", srv.URL + "/cal.ics"}, exitUsage, "", "SOURCES_ALLOW_PRIVATE", ""},
		{"add refuses ftp", env, []string{"source", "add", "--url", "ftp://feeds.example/cal.ics"}, exitUsage, "", "http://", ""},
		{"add refuses a bad schedule", private, []string{"source", "add", "--url", srv.URL + "/cal.ics", "--schedule", "@every 30s"}, exitUsage, "", "once a minute", ""},
		{"add refuses an unknown category", private, []string{"source", "add", "--url", srv.URL + "/cal.ics", "--category", "partners", "--category", "Opera"}, exitUsage, "", `"Opera"`, ""},
		{"add refuses a bad status", private, []string{"source", "add", "--url", srv.URL + "/cal.ics", "--status", "live"}, exitUsage, "", "draft, pending", ""},
		{"list empty", env, []string{"source", "list"}, exitOK, "ID", "", "cal.ics"},
		{"add", private, []string{"source", "add", "--url", srv.URL + "/cal.ics", "--name", "Partner", "--schedule", "@daily", "--category", "partners"}, exitOK, "1\n", "source run 1", ""},
		{"add broken", private, []string{"source", "add", "--url", srv.URL + "/broken.ics", "--format", "ics", "--on-removed", "keep"}, exitOK, "2\n", "", ""},
		{"list", env, []string{"source", "list"}, exitOK, "Partner", "", ""},
		{"list says never", env, []string{"source", "list"}, exitOK, "never", "", ""},
		{"run needs an id", private, []string{"source", "run"}, exitUsage, "", "a source ID is required", ""},
		{"run of a bad id", private, []string{"source", "run", "x"}, exitUsage, "", "not a source ID", ""},
		{"run of a missing source", private, []string{"source", "run", "9"}, exitFailure, "", "no source with ID 9", ""},
		{"run", private, []string{"source", "run", "1"}, exitOK, "succeeded; created 2, updated 0, unchanged 0, removed 0, failed 0", "", ""},
		{"run again", private, []string{"source", "run", "1"}, exitOK, "succeeded; created 0, updated 0", "", ""},
		{"run a failing feed", private, []string{"source", "run", "2"}, exitFailure, "error: ", "", "succeeded"},
		{"the failing run says why", private, []string{"source", "run", "2"}, exitFailure, "500", "", ""},
		{"runs", env, []string{"source", "runs", "1"}, exitOK, "cli", "", ""},
		{"runs with a limit after the id", env, []string{"source", "runs", "1", "--limit", "1"}, exitOK, "succeeded", "", ""},
		{"runs of a missing source", env, []string{"source", "runs", "9"}, exitFailure, "", "no source with ID 9", ""},
		{"list shows the last run", env, []string{"source", "list"}, exitOK, "succeeded 20", "", ""},
	})

	// The runs list is newest first and bounded by --limit; the events
	// imported carry the source's category and the default status.
	r := runCLI(t, env, "source", "runs", "1", "--limit", "1")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 2 {
		t.Fatalf("runs --limit 1:\n%s", r.stdout)
	}
	st, err = sqlite.Open(context.Background(), filepath.Join(dir, "calendar.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close(context.Background())
	runs, err := st.ListSourceRuns(context.Background(), 1, 10)
	if err != nil || len(runs) != 2 || runs[0].ID < runs[1].ID || runs[0].Trigger != "cli" {
		t.Fatalf("runs %+v, %v", runs, err)
	}
	if got := strings.Fields(lines[1])[0]; got != strconv.FormatInt(runs[0].ID, 10) {
		t.Errorf("runs --limit 1 shows run %s, want the newest, %d", got, runs[0].ID)
	}
	items, err := st.SourceItems(context.Background(), 1)
	if err != nil || len(items) != 2 {
		t.Fatalf("imported %+v, %v", items, err)
	}
	for _, it := range items {
		p, err := st.GetRecord(context.Background(), it.RecordID)
		if err != nil {
			t.Fatal(err)
		}
		if p.Status != repository.StatusDraft || len(p.Event.Categories) != 1 || p.Event.Categories[0] != cat.ID {
			t.Errorf("event %d: status %s categories %v", p.ID, p.Status, p.Event.Categories)
		}
	}
}
