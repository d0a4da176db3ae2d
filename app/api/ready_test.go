package api_test

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/calendar/eventcal/app/api"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/search"
)

// downStore is a store whose Ping fails.
type downStore struct{ repository.Store }

func (downStore) Ping(context.Context) error { return errors.New("connection refused") }

// downEngine is a search engine that is unreachable.
type downEngine struct{ search.Engine }

func (downEngine) Ping(context.Context) error { return search.ErrUnavailable }
func (downEngine) SearchEvents(context.Context, search.EventQuery) (search.Result, error) {
	return search.Result{}, search.ErrUnavailable
}

// TestReadiness: /readyz reports the store and the search engine
// separately; only the store (and the shutdown drain) takes the replica
// out of rotation, while lists answer 503 on their own.
func TestReadiness(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.must(201, "POST", "events", "editor", map[string]any{"title": "E", "start_date": "2026-12-01", "end_date": "2026-12-01"}).id()
	event := "events/" + strconv.FormatInt(id, 10)
	var draining atomic.Bool
	use := func(store repository.Store, engine search.Engine) {
		a, err := api.New(api.Options{Config: e.cfg, Store: store, Search: engine, Draining: draining.Load})
		if err != nil {
			t.Fatal(err)
		}
		e.app = a
	}

	use(e.store, e.engine)
	e.run(t, []scenario{
		{name: "all up", method: "GET", url: "/readyz", status: 200,
			want: map[string]any{"status": "ready", "store": "ok", "search": "ok"}},
	})

	use(e.store, downEngine{e.engine})
	e.run(t, []scenario{
		{name: "search down: still ready", method: "GET", url: "/readyz", status: 200,
			want: map[string]any{"status": "ready", "store": "ok", "search": "unavailable"}},
		{name: "search down: lists answer 503", method: "GET", url: "events", status: 503,
			want: map[string]any{"code": "search_unavailable"}},
		{name: "search down: item reads work", method: "GET", url: event, status: 200,
			want: map[string]any{"id": id}},
	})

	use(downStore{e.store}, e.engine)
	e.run(t, []scenario{
		{name: "store down: 503", method: "GET", url: "/readyz", status: 503,
			want: map[string]any{"code": "store_unavailable", "data.status": 503, "data.store": "unavailable", "data.search": "ok"}},
	})

	use(e.store, e.engine)
	draining.Store(true)
	e.run(t, []scenario{
		{name: "draining: 503 at once", method: "GET", url: "/readyz", status: 503,
			want: map[string]any{"code": "shutting_down", "data.draining": true, "data.store": "ok", "data.search": "ok"}},
		{name: "draining: requests are still served", method: "GET", url: event, status: 200,
			want: map[string]any{"id": id}},
	})
}

// hangingStore is a store whose Ping blocks until its context ends (or,
// with ignoreCtx, until the test ends), recording that it was asked.
type hangingStore struct {
	repository.Store
	ignoreCtx bool
	release   <-chan struct{}
	asked     chan struct{}
}

func (s hangingStore) Ping(ctx context.Context) error {
	s.asked <- struct{}{}
	if s.ignoreCtx {
		<-s.release
		return nil
	}
	<-ctx.Done()
	return ctx.Err()
}

// hangingEngine is hangingStore for the search engine.
type hangingEngine struct {
	search.Engine
	asked chan struct{}
}

func (e hangingEngine) Ping(ctx context.Context) error {
	e.asked <- struct{}{}
	<-ctx.Done()
	return ctx.Err()
}

// promptEngine answers Ping at once, with its context's error: it fails
// only when its deadline has already passed (as it would with a deadline
// shared with a store check that used it all up).
type promptEngine struct{ search.Engine }

func (promptEngine) Ping(ctx context.Context) error { return ctx.Err() }

// promptStore is promptEngine for the store.
type promptStore struct{ repository.Store }

func (promptStore) Ping(ctx context.Context) error { return ctx.Err() }

// TestReadinessDeadlines: each dependency is checked with its own
// deadline, concurrently: a hanging store does not make the engine
// "unavailable" (nor the other way round), and a check that ignores its
// context is abandoned at its deadline.
func TestReadinessDeadlines(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// Short deadlines: a hanging check takes this long; the prompt one
	// must answer within it (it answers at once).
	const timeout = 500 * time.Millisecond
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	storeAsked, engineAsked := make(chan struct{}, 10), make(chan struct{}, 10)
	tests := []struct {
		name   string
		store  repository.Store
		engine search.Engine
		status int
		want   map[string]any
		asked  []chan struct{}
	}{
		{"store hangs: the engine is still ok", hangingStore{Store: e.store, asked: storeAsked}, promptEngine{e.engine},
			503, map[string]any{"code": "store_unavailable", "data.store": "unavailable", "data.search": "ok"}, []chan struct{}{storeAsked}},
		{"store ignores its deadline: answered at the deadline", hangingStore{Store: e.store, ignoreCtx: true, release: release, asked: storeAsked}, promptEngine{e.engine},
			503, map[string]any{"code": "store_unavailable", "data.store": "unavailable", "data.search": "ok"}, []chan struct{}{storeAsked}},
		{"engine hangs: the store is still ok", promptStore{e.store}, hangingEngine{Engine: e.engine, asked: engineAsked},
			200, map[string]any{"status": "ready", "store": "ok", "search": "unavailable"}, []chan struct{}{engineAsked}},
		{"both hang", hangingStore{Store: e.store, asked: storeAsked}, hangingEngine{Engine: e.engine, asked: engineAsked},
			503, map[string]any{"code": "store_unavailable", "data.store": "unavailable", "data.search": "unavailable"}, []chan struct{}{storeAsked, engineAsked}},
	}
	for _, tc := range tests {
		a, err := api.New(api.Options{Config: e.cfg, Store: tc.store, Search: tc.engine, ReadyTimeout: timeout})
		if err != nil {
			t.Fatal(err)
		}
		e.app = a
		e.run(t, []scenario{{name: tc.name, method: "GET", url: "/readyz", status: tc.status, want: tc.want}})
		for _, ch := range tc.asked {
			select {
			case <-ch:
			default:
				t.Errorf("%s: the hanging dependency was never asked", tc.name)
			}
		}
	}
}
