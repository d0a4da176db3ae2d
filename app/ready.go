package app

import (
	"context"
	"time"

	"github.com/gofiber/fiber/v2"
)

// readyTimeout bounds each dependency check of /readyz.
const readyTimeout = 2 * time.Second

// The values of the store and search members of /readyz.
const (
	checkOK          = "ok"
	checkUnavailable = "unavailable"
)

// ready answers GET /readyz, the load balancer's probe. The body reports
// the store and the search engine separately:
//
//	{"status": "ready", "store": "ok", "search": "unavailable"}
//
// plus the instance's identity, as /healthz reports it (identity.go).
//
// Only the store decides: item reads and every write need it, while lists
// answer 503 on their own while the search engine is down, so a replica
// whose engine is down stays in rotation for the rest. During the shutdown
// drain (Options.Draining) it answers 503 shutting_down at once, while the
// other routes keep serving, so that load balancers stop sending requests
// before the listener closes. A 503 is the error envelope, with the checks
// in its data.
func (s *Server) ready(c *fiber.Ctx) error {
	ctx, cancel := context.WithTimeout(c.UserContext(), readyTimeout)
	defer cancel()
	store, search := checkOK, checkOK
	if err := s.store.Ping(ctx); err != nil {
		store = checkUnavailable
	}
	if s.search == nil || s.search.Ping(ctx) != nil {
		search = checkUnavailable
	}
	switch {
	case s.draining != nil && s.draining():
		return newError(503, "shutting_down", "The service is shutting down; try again on another replica.").
			with("store", store).with("search", search).with("draining", true)
	case store != checkOK:
		return errUnavailable("store").with("store", store).with("search", search).with("draining", false)
	}
	return c.JSON(s.identity.describe(fiber.Map{"status": "ready", "store": store, "search": search}))
}
