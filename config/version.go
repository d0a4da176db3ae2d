package config

// Version is the release of eventcal this source is: the newest release
// heading of CHANGELOG.md names the same version (TestChangelogNamesVersion).
// The binary reports it in "eventcal --version", GET /healthz and /readyz,
// the eventcal_build_info metric, the interface document's info.version
// and the User-Agent of the requests it sends (UserAgent).
//
// A build may replace it at link time, for a release candidate or a
// patched build:
//
//	go build -ldflags "-X github.com/calendar/eventcal/config.Version=0.30.1-rc.1" .
var Version = "0.30.0"

// UserAgent is the User-Agent header of the requests the process sends on
// behalf of component ("webhooks", "import", "cli"):
// "eventcal-<component>/<Version>", so that a receiver's logs tell which
// part of which release called.
func UserAgent(component string) string {
	return "eventcal-" + component + "/" + Version
}
