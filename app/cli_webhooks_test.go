package app

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/calendar/eventcal/repository/sqlite"
)

func TestWebhookCommands(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st, err := sqlite.Open(context.Background(), filepath.Join(dir, "calendar.db"))
	if err != nil {
		t.Fatal(err)
	}
	st.Close(context.Background())
	pings := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("webhook-signature") != "" {
			pings++
		}
	}))
	defer srv.Close()
	env := map[string]string{"DATA_DIR": dir}
	private := map[string]string{"DATA_DIR": dir, "WEBHOOK_ALLOW_PRIVATE": "true"}

	runCLISteps(t, []cliStep{
		{"usage", env, []string{"webhook"}, exitUsage, "", "webhook add --url", ""},
		{"help", env, []string{"webhook", "-h"}, exitOK, "event.created", "", ""},
		{"unknown", env, []string{"webhook", "frob"}, exitUsage, "", `unknown command "webhook frob"`, ""},
		{"add needs url", env, []string{"webhook", "add"}, exitUsage, "", "--url is required", ""},
		{"add refuses loopback", env, []string{"webhook", "add", "--url", srv.URL}, exitUsage, "", "private", ""},
		{"add refuses bad events", env, []string{"webhook", "add", "--url", "https://x.example/h", "--events", "event.exploded"}, exitUsage, "", "unknown message type", ""},
		{"add", private, []string{"webhook", "add", "--url", srv.URL, "--events", "event.created,venue.deleted", "--description", "CRM"}, exitOK, "1\twhsec_", "shown once", ""},
		{"list", env, []string{"webhook", "list"}, exitOK, "event.created,venue.deleted", "", ""},
		{"ping", private, []string{"webhook", "ping", "--id", "1"}, exitOK, `"code":200`, "", ""},
		{"disable", env, []string{"webhook", "update", "--id", "1", "--active", "false"}, exitOK, "", "", ""},
		{"list shows disabled", env, []string{"webhook", "list"}, exitOK, "disabled by an admin", "", ""},
		{"update bad secret", env, []string{"webhook", "update", "--id", "1", "--secret", "x"}, exitUsage, "", "whsec_", ""},
		{"update missing", env, []string{"webhook", "update", "--id", "9", "--active", "true"}, exitFailure, "", "no webhook with ID 9", ""},
		{"deliveries", env, []string{"webhook", "deliveries", "--id", "1"}, exitOK, "MESSAGE", "", "msg_"},
		{"delete needs id", env, []string{"webhook", "delete"}, exitUsage, "", "--id is required", ""},
		{"delete", env, []string{"webhook", "delete", "--id", "1"}, exitOK, "", "", ""},
		{"delete again", env, []string{"webhook", "delete", "--id", "1"}, exitFailure, "", "no webhook with ID 1", ""},
		{"list empty", env, []string{"webhook", "list"}, exitOK, "ID", "", "CRM"},
	})
	if pings != 1 {
		t.Errorf("receiver got %d signed pings, want 1", pings)
	}
}
