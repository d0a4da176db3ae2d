package main

import (
	"log/slog"
	"math/rand/v2"
	"net"
	"net/url"
	"strings"

	"github.com/calendar/eventcal/app/api"
	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/search/embedded"
	"github.com/calendar/eventcal/sync/indexing"
)

// serveUncached starts a second service on the same store and index, with
// the engine unwrapped (no result cache) and no response cache, and
// returns its API base. The linked-record and term-count caches stay: they
// are part of rendering, dropped by every write.
func serveUncached(cfg *config.Config, st repository.Store, eng *embedded.Engine, w *indexing.Worker, log *slog.Logger) (string, func(), error) {
	a, err := api.New(api.Options{Config: cfg, Store: st, Search: eng, Indexer: w, Logger: log, ResponseCacheBytes: -1, NoRecurrenceCache: true})
	if err != nil {
		return "", nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	go a.Listener(ln)
	return "http://" + ln.Addr().String() + cfg.APIRoot(), func() { _ = a.ShutdownWithTimeout(shutdownWait) }, nil
}

// typeaheadPath is one request of a search box typed into: three times in
// four, a growing prefix of two words ("j", "ja", ..., "jazz n", ...);
// otherwise two whole words, the second with one typo (an adjacent
// transposition or a substitution after the first letter, on words of five
// letters or more).
func typeaheadPath(r *rand.Rand) string {
	first, second := words[r.IntN(len(words))], words[r.IntN(len(words))]
	var q string
	if r.IntN(4) > 0 {
		typed := first + " " + second
		q = typed[:1+r.IntN(len(typed))]
	} else {
		for len(second) < 5 {
			second = words[r.IntN(len(words))]
		}
		b := []byte(second)
		i := 1 + r.IntN(len(b)-2)
		if r.IntN(2) == 0 {
			b[i], b[i+1] = b[i+1], b[i]
		} else {
			b[i] = "aeiou"[r.IntN(5)]
		}
		q = first + " " + string(b) + " "
	}
	return "/events?search=" + url.QueryEscape(strings.TrimLeft(q, " "))
}
