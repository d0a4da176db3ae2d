package api

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"runtime/debug"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/calendar/eventcal/config"
)

// Set at link time by release builds (the Dockerfile passes its REVISION
// build argument):
//
//	go build -ldflags "-X github.com/calendar/eventcal/app/api.buildRevision=$(git rev-parse HEAD)"
//
// An image is built without .git, so the Go toolchain cannot stamp the
// revision itself; empty means "ask the build information". The version
// is config.Version (set at link time with -X .../config.Version=...).
var buildRevision string

// BuildVersion names the running build: config.Version (the release this
// source is, or what the build linked in instead), and the revision given
// at link time (buildRevision), else the VCS revision from the build
// information, else "unknown" (go run, go test, -buildvcs=false).
func BuildVersion() (version, revision string) {
	return buildVersion(config.Version, buildRevision)
}

// buildVersion is BuildVersion for the given config.Version and linked
// revision: a pure function of them and the build information, so that
// its test sets no package variable that concurrent tests read (api.New
// reads both through NewIdentity).
func buildVersion(source, linked string) (version, revision string) {
	version, revision = source, "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && s.Value != "" {
				revision = s.Value
			}
		}
	}
	if linked != "" {
		revision = linked
	}
	return version, revision
}

// Identity names one running instance of the service. /healthz and /readyz
// report it, and the "starting" log line names the same instance, so that
// whoever polls a port can tell which process answered (another process
// already on the port, an old replica, a build from another revision).
type Identity struct {
	// Version and Revision name the build (BuildVersion).
	Version  string
	Revision string
	// Instance is random, drawn once per process start.
	Instance string
	// Started is when the process started serving; PID is its process ID.
	Started time.Time
	PID     int
}

// NewIdentity draws the identity of this process: the build's version and
// revision, a new random instance identifier, the time now and the
// process ID.
func NewIdentity() Identity {
	version, revision := BuildVersion()
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return Identity{Version: version, Revision: revision, Instance: hex.EncodeToString(b[:]),
		Started: time.Now().UTC().Truncate(time.Second), PID: os.Getpid()}
}

// describe adds the identity to a probe's body.
func (id Identity) describe(body fiber.Map) fiber.Map {
	body["version"] = id.Version
	body["revision"] = id.Revision
	body["instance"] = id.Instance
	body["started"] = id.Started.Format(time.RFC3339)
	body["pid"] = id.PID
	return body
}

// health answers GET /healthz: the process is up, and which one it is.
//
//	{"status": "ok", "version": "0.30.0", "revision": "4f2a…", "instance": "9c1e54a0b7d3f218",
//	 "started": "2026-11-25T18:30:00Z", "pid": 4711}
//
// It checks no dependency (that is /readyz): it answers as long as the
// process serves HTTP.
func (s *Server) health(c *fiber.Ctx) error {
	return c.JSON(s.identity.describe(fiber.Map{"status": "ok"}))
}
