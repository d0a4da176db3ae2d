package app_test

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/calendar/eventcal/app"
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
	e := newEnv(t)
	id := e.must(201, "POST", "events", "editor", map[string]any{"title": "E", "start_date": "2026-12-01", "end_date": "2026-12-01"}).id()
	event := "events/" + strconv.FormatInt(id, 10)
	var draining atomic.Bool
	use := func(store repository.Store, engine search.Engine) {
		a, err := app.New(app.Options{Config: e.cfg, Store: store, Search: engine, Draining: draining.Load})
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
