package api

import (
	"strings"
	"time"

	"github.com/calendar/eventcal/app/handlers"
	"github.com/calendar/eventcal/config"
)

// TEC_COMPAT serves the API a second time under The Events Calendar's own
// root, /wp-json/tribe/events/v1, so that a frontend written for the
// original switches by changing its host only (issue 23). The second
// mount is the same handlers built on a copy of the settings whose API
// root is that one: every link a response carries (rest_url, term urls,
// the list links and Link headers, Location, the namespace index, the
// interface document) then names the root the request came in by, and
// nothing in handlers knows about two roots (present leaves out the event
// fields the original does not have, event_status and
// event_status_reason, when its root is the TEC root). Both share the
// store, the index, the response cache (its keys name the root) and the
// generation that drops cached linked records on every write; each has
// its own term-count cache, so a count may lag the other root's writes
// by its TTL (2 s).

// compatAPI returns the handlers of the TEC root, nil without TEC_COMPAT
// (or when the API is served there already).
func (s *Server) compatAPI(opts Options, recordTTL, countTTL time.Duration) *handlers.API {
	roots := s.cfg.APIRoots()
	if len(roots) < 2 {
		return nil
	}
	cfg := compatConfig(s.cfg)
	return s.newHandlers(cfg, opts, recordTTL, countTTL)
}

// compatConfig is cfg with The Events Calendar's root as the API root.
func compatConfig(cfg *config.Config) *config.Config {
	c := *cfg
	c.RestRoot, c.APINamespace = strings.TrimSuffix(config.TECRoot, "/tribe/events/v1"), "tribe/events/v1"
	return &c
}

// underAPIRoot reports whether path is under one of the roots the API is
// served at.
func (s *Server) underAPIRoot(path string) bool {
	for _, root := range s.cfg.APIRoots() {
		if path == root || strings.HasPrefix(path, root+"/") {
			return true
		}
	}
	return false
}
