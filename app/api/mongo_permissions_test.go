package api_test

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/calendar/eventcal/app/api"
	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/repository/mongo"
	"github.com/calendar/eventcal/repository/mongo/mongotest"
	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/search/embedded"
	"github.com/calendar/eventcal/sync/indexing"
)

// newMongoEnv is newEnv on a MongoDB store (an embedded FerretDB): the
// same users and tokens, the app and sync worker over the Mongo engine.
func newMongoEnv(t *testing.T) *env {
	t.Helper()
	uri := mongotest.Start(t)
	dir := t.TempDir()
	vars := map[string]string{"DATA_DIR": dir, "SITE_URL": "http://example.test", "ADMIN_TOKEN": "admin-secret"}
	cfg, err := config.Load(func(k string) string { return vars[k] })
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, err := mongo.Open(ctx, uri, mongotest.Database(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close(context.Background()) })
	rawEngine, err := embedded.Open(filepath.Join(dir, "index"))
	if err != nil {
		t.Fatal(err)
	}
	eng := search.NewCached(rawEngine, time.Minute)
	if err := eng.Init(ctx); err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	e := &env{t: t, store: st, cfg: cfg, tokens: map[string]string{}, users: map[string]*repository.User{},
		now: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC), engine: eng}
	e.worker = &indexing.Worker{Store: st, Engine: eng, Log: quiet, Now: func() time.Time { return e.now },
		Docs: &indexing.DocBuilder{Store: st, Languages: cfg.Languages, DefaultLanguage: cfg.DefaultLanguage, Location: cfg.Location}}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); e.worker.Run(runCtx) }()
	t.Cleanup(func() { stop(); <-done; eng.Close() })
	a, err := api.New(api.Options{Config: cfg, Store: st, Search: eng, Indexer: e.worker, Logger: quiet,
		Now: func() time.Time { return e.now }})
	if err != nil {
		t.Fatal(err)
	}
	e.app = a
	for _, role := range []string{"contributor", "author", "editor"} {
		e.addUser(role, role)
	}
	e.addUser("admin1", "admin")
	e.tokens["admin"] = e.tokens["admin1"]
	e.addUser("contributor2", "contributor")
	e.addUser("author2", "author")
	return e
}

// Issue 7, findings 4 and 6 on MongoDB (FerretDB): the duplicate-detection
// rules by role, the term rights and the three creation races.
func TestMongoPermissionsAndRaces(t *testing.T) {
	e := newMongoEnv(t)
	t.Run("races", func(t *testing.T) { checkRaces(t, e.app, e.store, e.tokens["editor"]) })
	t.Run("duplicates", func(t *testing.T) {
		town := e.must(201, "POST", "venues", "admin", map[string]any{"venue": "Mongo Hall", "phone": "111"}).id()
		secret := e.must(201, "POST", "venues", "contributor2", map[string]any{"venue": "Mongo Secret", "phone": "222"}).id()
		e.run(t, []scenario{
			{name: "contributor reuses published unchanged", method: "POST", url: "venues", as: "contributor",
				body: map[string]any{"venue": "mongo hall", "phone": "999"}, status: 201, want: map[string]any{"id": town, "phone": "111"}},
			{name: "author does not see a draft", method: "POST", url: "venues", as: "author",
				body: map[string]any{"venue": "Mongo Secret", "phone": "evil"}, status: 201,
				check: func(t *testing.T, r *resp) {
					if r.id() == secret {
						t.Error("a hidden draft was reused")
					}
				}},
			{name: "owner updates own draft", method: "POST", url: "venues", as: "contributor2",
				body: map[string]any{"venue": "Mongo Secret", "phone": "223"}, status: 201, want: map[string]any{"id": secret, "phone": "223"}},
			{name: "editor updates", method: "POST", url: "venues", as: "editor",
				body: map[string]any{"venue": "Mongo Hall", "phone": "444"}, status: 201, want: map[string]any{"id": town, "phone": "444"}},
			{name: "contributor new category refused", method: "POST", url: "events", as: "contributor",
				body: map[string]any{"title": "T", "start_date": "2026-12-01 10:00", "end_date": "2026-12-01 11:00", "categories": "Mongo New"}, status: 403},
			{name: "author new category", method: "POST", url: "events", as: "author",
				body: map[string]any{"title": "T", "start_date": "2026-12-01 10:00", "end_date": "2026-12-01 11:00", "categories": "Mongo New", "tags": "Race-Tag"}, status: 201,
				want: map[string]any{"categories.0.name": "Mongo New", "tags.0.slug": "race-tag"}},
		})
	})
}
