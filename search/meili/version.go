package meili

import (
	"context"
	"fmt"
	"strings"

	"golang.org/x/mod/semver"
)

// MinVersion is the oldest Meilisearch release the engine works with.
//
//   - The settings update always sends typoTolerance.disableOnNumbers, which
//     Meilisearch accepts from v1.15 (older releases refuse the whole update
//     with invalid_settings_typo_tolerance, so Init would never succeed).
//   - A rebuild's swap-indexes request carries "rename" (meilisearch-go
//     v0.36.3 always sends it), which Meilisearch accepts from v1.18 (older
//     releases refuse the swap, so every rebuild would fail at its end).
const MinVersion = "1.18.0"

// UnsupportedVersionError is the error of Open on a Meilisearch server
// older than MinVersion.
type UnsupportedVersionError struct {
	// Version is the server's pkgVersion (GET /version).
	Version string
}

// Error is one line naming the server's version and the minimum.
func (e *UnsupportedVersionError) Error() string {
	return fmt.Sprintf("meili: Meilisearch %s is not supported: v%s or newer is required (settings send typoTolerance.disableOnNumbers, v1.15+; index swaps send rename, v1.18+)",
		displayVersion(e.Version), MinVersion)
}

// checkVersion asks the server for its version (GET /version) and refuses
// one older than MinVersion, or one it cannot read.
func (e *core) checkVersion(ctx context.Context) error {
	v, err := e.client.VersionWithContext(ctx)
	if err != nil {
		return e.fail("version", err)
	}
	if !supportedVersion(v.PkgVersion) {
		return &UnsupportedVersionError{Version: v.PkgVersion}
	}
	return nil
}

// supportedVersion reports whether pkgVersion (such as "1.18.0", as
// GET /version reports it) is a semantic version at least MinVersion. A
// pre-release of MinVersion ("1.18.0-rc.1") is older than MinVersion.
func supportedVersion(pkgVersion string) bool {
	v := "v" + strings.TrimPrefix(strings.TrimSpace(pkgVersion), "v")
	return semver.IsValid(v) && semver.Compare(v, "v"+MinVersion) >= 0
}

// displayVersion renders a reported version for the error message.
func displayVersion(v string) string {
	if v == "" {
		return "(no version reported)"
	}
	return "v" + strings.TrimPrefix(v, "v")
}
