package meili

import (
	"errors"
	"strings"
	"testing"

	"github.com/calendar/eventcal/search"
)

// TestVersionCheck: Open asks GET /version and refuses a server older than
// MinVersion with a one-line error naming the minimum.
func TestVersionCheck(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		version string
		ok      bool
	}{
		{"1.12.0", false},      // the release docker-compose.yml used to pin
		{"1.15.2", false},      // accepts disableOnNumbers, refuses swap "rename"
		{"1.17.1", false},      //
		{"1.18.0-rc.1", false}, // a pre-release of the minimum is older than it
		{"", false},            // no version: unknown, refused
		{"not-a-version", false},
		{"1.18.0", true},
		{"1.18.3", true},
		{"1.50.0", true},
		{"2.0.0", true},
	} {
		t.Run("v"+tc.version, func(t *testing.T) {
			f := newFakeMeili(t)
			f.Version = tc.version
			e, err := Open(t.Context(), f.srv.URL, "test-key", Options{})
			if tc.ok {
				if err != nil {
					t.Fatalf("Open on %q: %v", tc.version, err)
				}
				e.Close()
				return
			}
			if err == nil {
				e.Close()
				t.Fatalf("Open on %q succeeded, want refused", tc.version)
			}
			var ve *UnsupportedVersionError
			if !errors.As(err, &ve) || ve.Version != tc.version {
				t.Fatalf("error %v (%T), want an *UnsupportedVersionError for %q", err, err, tc.version)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") || !strings.Contains(msg, "v"+MinVersion+" or newer is required") {
				t.Errorf("message %q: want one line naming v%s", msg, MinVersion)
			}
			if errors.Is(err, search.ErrUnavailable) {
				t.Errorf("an old server counts as unavailable (retried forever): %v", err)
			}
			if len(f.Calls("GET", "/version")) != 1 {
				t.Errorf("GET /version calls: %d, want 1", len(f.Calls("GET", "/version")))
			}
		})
	}
}
