package cli

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/calendar/eventcal/config"
)

// The shutdown of "serve", in order:
//
//  1. SIGINT or SIGTERM: /readyz answers 503 shutting_down at once, and the
//     listener keeps serving for DRAIN_DELAY, long enough for the load
//     balancer's probes to notice and stop sending new requests (a second
//     signal cuts the drain short);
//  2. the listener closes, and requests in flight get SHUTDOWN_TIMEOUT to
//     finish;
//  3. the schedule stops, a running rebuild is aborted, and the sync worker
//     stops: a batch it is indexing is abandoned, and its marks, which are
//     cleared only after the engine accepted the batch, are indexed by the
//     next leader or after the restart;
//  4. the lease is released, the engine and the store closed.
//
// A container's stop grace period must therefore exceed DRAIN_DELAY +
// SHUTDOWN_TIMEOUT (docker-compose.yml sets stop_grace_period).

// drainCutKey is the context key of the channel that ends the drain early.
type drainCutKey struct{}

// withDrainCut returns ctx carrying cut: closing it ends a drain at once.
func withDrainCut(ctx context.Context, cut <-chan struct{}) context.Context {
	return context.WithValue(ctx, drainCutKey{}, cut)
}

// drainCut returns the channel that ends the drain early (nil, which never
// fires, when ctx has none).
func drainCut(ctx context.Context) <-chan struct{} {
	cut, _ := ctx.Value(drainCutKey{}).(<-chan struct{})
	return cut
}

// shutdownSignals returns a context that ends at the first SIGINT or
// SIGTERM and carries a drain cut (withDrainCut) closed by the second one.
// stop stops listening for them.
func shutdownSignals() (ctx context.Context, stop func()) {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	cut := make(chan struct{})
	ctx, cancel := context.WithCancel(withDrainCut(context.Background(), cut))
	done := make(chan struct{})
	go func() {
		select {
		case <-sigs:
		case <-done:
			return
		}
		cancel()
		select {
		case <-sigs:
			close(cut)
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel()
	}
}

// drain marks the process as draining (/readyz 503) and keeps serving for
// cfg.DrainDelay, or until the drain is cut (drainCut) or the listener
// fails (its error is returned).
func drain(ctx context.Context, cfg *config.Config, logger *slog.Logger, draining *atomic.Bool, served <-chan error) error {
	draining.Store(true)
	if cfg.DrainDelay <= 0 {
		return nil
	}
	logger.Info("draining: /readyz answers 503, requests are still served", "delay", cfg.DrainDelay.String())
	t := time.NewTimer(cfg.DrainDelay)
	defer t.Stop()
	select {
	case <-t.C:
	case <-drainCut(ctx):
		logger.Info("drain cut short by a second signal")
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}
