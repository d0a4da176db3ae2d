package app

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/calendar/eventcal/repository/sqlite"
)

// TestStatusListsFailingMarks: `eventcal status` names each mark the sync
// worker could not index, with its attempts, next attempt and error.
func TestStatusListsFailingMarks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	seedEvents(t, dir, 3)
	st, err := sqlite.Open(context.Background(), filepath.Join(dir, "calendar.db"))
	if err != nil {
		t.Fatal(err)
	}
	marks, err := st.PendingMarks(context.Background(), 0)
	if err != nil || len(marks) != 3 {
		t.Fatalf("PendingMarks = %v, %v", marks, err)
	}
	m := marks[1]
	m.Attempts, m.LastError, m.NextAttempt = 4, "payload_too_large (413)", time.Date(2030, 5, 6, 7, 8, 9, 0, time.UTC)
	if err := st.FailMark(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	st.Close(context.Background())

	r := runCLI(t, map[string]string{"DATA_DIR": dir, "LISTEN_ADDR": "127.0.0.1:1"}, "status")
	if r.code != exitOK {
		t.Fatalf("status: exit %d: %s", r.code, r.stderr)
	}
	if got := statusLine(r.stdout, "failing marks"); !strings.HasPrefix(got, "failing marks 1 ") {
		t.Errorf("failing marks line %q\n%s", got, r.stdout)
	}
	want := "post " + strconv.FormatInt(m.ID, 10) + " 4 attempts, next 2030-05-06T07:08:09Z: payload_too_large (413)"
	if got := statusLine(r.stdout, "  post"); got != want {
		t.Errorf("failing mark line %q, want %q\n%s", got, want, r.stdout)
	}
}
