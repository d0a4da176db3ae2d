package api

import (
	"testing"

	"github.com/calendar/eventcal/config"
)

// TestBuildVersionLinkerFlags: the version is config.Version (what the
// source is, or what -ldflags -X linked in instead), and the revision
// given at link time (as the Dockerfile does) wins over the build
// information.
func TestBuildVersionLinkerFlags(t *testing.T) {
	t.Parallel()
	source := config.Version
	tests := []struct {
		name, version, revision string
		wantVersion, wantRev    string
	}{
		{"none: go test has no revision", source, "", source, "unknown"},
		{"both", "2.0.1", "abc123", "2.0.1", "abc123"},
		{"version only", "2.0.1-rc.1", "", "2.0.1-rc.1", "unknown"},
	}
	if v, r := BuildVersion(); v != config.Version || (buildRevision != "" && r != buildRevision) {
		t.Errorf("BuildVersion() = %q, %q; config.Version %q, linked revision %q", v, r, config.Version, buildRevision)
	}
	for _, tc := range tests {
		v, r := buildVersion(tc.version, tc.revision)
		if v != tc.wantVersion || r != tc.wantRev {
			t.Errorf("%s: buildVersion(%q, %q) = %q, %q; want %q, %q", tc.name, tc.version, tc.revision, v, r, tc.wantVersion, tc.wantRev)
		}
	}
}
