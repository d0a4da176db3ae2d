package api

import (
	"context"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/calendar/eventcal/app/apierr"
)

// DefaultReadyTimeout bounds each dependency check of /readyz
// (Options.ReadyTimeout).
const DefaultReadyTimeout = 2 * time.Second

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
// Each dependency is checked concurrently, with its own deadline
// (Options.ReadyTimeout, 2 s by default): a store that hangs makes its own
// check "unavailable" when its deadline passes, and never the engine's (nor
// the other way round), and the probe answers within one deadline, not the
// sum of them.
//
// Only the store decides: item reads and every write need it, while lists
// answer 503 on their own while the search engine is down, so a replica
// whose engine is down stays in rotation for the rest. During the shutdown
// drain (Options.Draining) it answers 503 shutting_down at once, while the
// other routes keep serving, so that load balancers stop sending requests
// before the listener closes. A 503 is the error envelope, with the checks
// in its data.
func (s *Server) ready(c *fiber.Ctx) error {
	parent := c.UserContext()
	storeCheck := s.check(parent, s.store.Ping)
	searchCheck := s.check(parent, func(ctx context.Context) error {
		if s.search == nil {
			return apierr.Unavailable("search")
		}
		return s.search.Ping(ctx)
	})
	store, search := <-storeCheck, <-searchCheck
	switch {
	case s.draining != nil && s.draining():
		return apierr.New(503, "shutting_down", "The service is shutting down; try again on another replica.").
			With("store", store).With("search", search).With("draining", true)
	case store != checkOK:
		return apierr.Unavailable("store").With("store", store).With("search", search).With("draining", false)
	}
	return c.JSON(s.identity.describe(fiber.Map{"status": "ready", "store": store, "search": search}))
}

// check runs ping in its own goroutine with its own deadline and sends
// "ok" or "unavailable" on the channel it returns: "unavailable" as soon
// as the deadline passes, even when ping ignores its context and keeps
// running (it then finishes in the background).
func (s *Server) check(parent context.Context, ping func(context.Context) error) <-chan string {
	out := make(chan string, 1)
	go func() {
		ctx, cancel := context.WithTimeout(parent, s.readyTimeout)
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- ping(ctx) }()
		select {
		case err := <-done:
			if err != nil {
				out <- checkUnavailable
				return
			}
			out <- checkOK
		case <-ctx.Done():
			out <- checkUnavailable
		}
	}()
	return out
}
