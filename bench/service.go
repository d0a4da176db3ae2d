package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"time"

	"github.com/calendar/eventcal/app/api"
	"github.com/calendar/eventcal/app/sources"
	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/search/embedded"
	"github.com/calendar/eventcal/sync/indexing"
)

// service is the embedded stack a bench mode measures, started as the
// service starts it (app): the store of -store, Bleve with the result
// cache, the sync worker and the API on a loopback port.
type service struct {
	cfg       *config.Config
	store     repository.Store
	storeName string
	rawEngine *embedded.Engine // the engine without the result cache
	engine    search.Engine    // what the API reads: rawEngine behind search.NewCached
	worker    *indexing.Worker
	log       *slog.Logger // discards: the bench prints only its tables
	ln        net.Listener
}

// startService starts the stack on DATA_DIR dir with the settings in env
// (DATA_DIR and LOG_LEVEL=error are added). stop undoes everything started.
func startService(ctx context.Context, dir string, env map[string]string) (svc *service, stop func(), err error) {
	var undo []func()
	stop = func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
	defer func() {
		if err != nil {
			stop()
		}
	}()
	full := map[string]string{"DATA_DIR": dir, "LOG_LEVEL": "error"}
	for k, v := range env {
		full[k] = v
	}
	s := &service{log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if s.cfg, err = config.Load(func(k string) string { return full[k] }); err != nil {
		return nil, stop, err
	}
	st, storeName, closeStore, err := openStore(ctx, dir)
	if err != nil {
		return nil, stop, err
	}
	undo = append(undo, closeStore)
	s.store, s.storeName = st, storeName
	raw, err := embedded.Open(filepath.Join(dir, "index"))
	if err != nil {
		return nil, stop, err
	}
	s.rawEngine = raw
	// As the service does: list results are reused until a write.
	s.engine = search.NewCached(raw, time.Minute)
	undo = append(undo, func() { s.engine.Close() })
	if err := s.engine.Init(ctx); err != nil {
		return nil, stop, err
	}
	cfg := s.cfg
	s.worker = &indexing.Worker{Store: st, Engine: s.engine, Log: s.log,
		Docs: &indexing.DocBuilder{Store: st, Languages: cfg.Languages, DefaultLanguage: cfg.DefaultLanguage, Location: cfg.Location,
			Horizon: cfg.RecurrenceHorizon, MaxOccurrences: cfg.MaxSeriesOccurrences}}
	wctx, cancel := context.WithCancel(ctx)
	undo = append(undo, cancel)
	go s.worker.Run(wctx)
	// The calendar sources' runner, as serve builds it (the API's POST
	// /sources/{id}/run starts its runs).
	deps := sources.ServiceRunnerDeps(cfg, st, s.log)
	deps.WritesPerSecond = sourcesRate
	runner := sources.NewRunner(deps)
	undo = append(undo, runner.Close)
	a, err := api.New(api.Options{Config: cfg, Store: st, Search: s.engine, Indexer: s.worker, Logger: s.log, ResponseCacheTTL: time.Minute,
		SourceRunner: runner})
	if err != nil {
		return nil, stop, err
	}
	if s.ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		return nil, stop, err
	}
	go a.Listener(s.ln)
	undo = append(undo, func() { _ = a.ShutdownWithTimeout(shutdownWait) })
	return s, stop, nil
}

// apiBase is the URL of the API root of the started service.
func (s *service) apiBase() string { return "http://" + s.ln.Addr().String() + s.cfg.APIRoot() }

// shutdownWait bounds a server's shutdown at the end of a run: the
// clients' idle keep-alive connections would otherwise hold it open
// (fasthttp waits for every connection to close).
const shutdownWait = 2 * time.Second
