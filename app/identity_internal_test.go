package app

import "testing"

// TestBuildVersionLinkerFlags: the version and revision given at link time
// (-ldflags -X, as the Dockerfile does) win over the build information.
func TestBuildVersionLinkerFlags(t *testing.T) {
	defer func(v, r string) { buildVersion, buildRevision = v, r }(buildVersion, buildRevision)
	tests := []struct {
		name, version, revision string
		wantVersion, wantRev    string
	}{
		{"none: go test has no version", "", "", "devel", "unknown"},
		{"both", "v2.0.1", "abc123", "v2.0.1", "abc123"},
		{"version only", "v2.0.1", "", "v2.0.1", "unknown"},
	}
	for _, tc := range tests {
		buildVersion, buildRevision = tc.version, tc.revision
		v, r := BuildVersion()
		if v != tc.wantVersion || r != tc.wantRev {
			t.Errorf("%s: BuildVersion() = %q, %q; want %q, %q", tc.name, v, r, tc.wantVersion, tc.wantRev)
		}
	}
}
