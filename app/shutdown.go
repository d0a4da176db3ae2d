package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"sync"
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
//     signal cuts the drain short). After SIGINT (Ctrl-C in a terminal:
//     orchestrators send SIGTERM) the drain also ends as soon as no
//     connection is open, so that stopping a development server does not
//     wait for nothing;
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

// errInterrupted is the cause of a context ended by SIGINT (see
// shutdownSignals): the drain then ends as soon as no connection is open.
var errInterrupted = errors.New("interrupted (SIGINT)")

// shutdownSignals returns a context that ends at the first SIGINT or
// SIGTERM and carries a drain cut (withDrainCut) closed by the second one;
// its cause is errInterrupted after SIGINT. stop stops listening for them.
func shutdownSignals() (ctx context.Context, stop func()) {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	cut := make(chan struct{})
	ctx, cancel := context.WithCancelCause(withDrainCut(context.Background(), cut))
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-sigs:
			if sig == os.Interrupt {
				cancel(errInterrupted)
			}
			cancel(nil)
		case <-done:
			return
		}
		select {
		case <-sigs:
			close(cut)
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel(nil)
	}
}

// drain marks the process as draining (/readyz 503) and keeps serving for
// cfg.DrainDelay, or until the drain is cut (drainCut) or the listener
// fails (its error is returned). When ctx ended by SIGINT (errInterrupted),
// it also ends as soon as conns has no connection open.
func drain(ctx context.Context, cfg *config.Config, logger *slog.Logger, draining *atomic.Bool, served <-chan error, conns *connCounter) error {
	draining.Store(true)
	if cfg.DrainDelay <= 0 {
		return nil
	}
	var idle <-chan struct{}
	if errors.Is(context.Cause(ctx), errInterrupted) && conns != nil {
		idle = conns.idle()
	}
	logger.Info("draining: /readyz answers 503, requests are still served", "delay", cfg.DrainDelay.String())
	t := time.NewTimer(cfg.DrainDelay)
	defer t.Stop()
	select {
	case <-t.C:
	case <-idle:
		logger.Info("drain ended: interrupted with no connection open")
	case <-drainCut(ctx):
		logger.Info("drain cut short by a second signal")
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// connCounter is a listener that counts its open connections, so that a
// drain can end when none is left (see drain).
type connCounter struct {
	net.Listener

	mu      sync.Mutex
	open    int
	waiters []chan struct{}
}

// countConns returns ln counting its open connections.
func countConns(ln net.Listener) *connCounter { return &connCounter{Listener: ln} }

// Accept counts the connection it returns until it is closed.
func (l *connCounter) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	l.open++
	l.mu.Unlock()
	return &countedConn{Conn: c, l: l}, nil
}

// idle returns a channel closed once no connection is open (at once when
// none is).
func (l *connCounter) idle() <-chan struct{} {
	ch := make(chan struct{})
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open == 0 {
		close(ch)
		return ch
	}
	l.waiters = append(l.waiters, ch)
	return ch
}

// closed counts one connection closed and wakes the idle waiters when it
// was the last one.
func (l *connCounter) closed() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open--
	if l.open == 0 {
		for _, ch := range l.waiters {
			close(ch)
		}
		l.waiters = nil
	}
}

// countedConn is a connection of a connCounter; its first Close counts.
type countedConn struct {
	net.Conn
	l    *connCounter
	once sync.Once
}

// Close closes the connection and counts it closed (once).
func (c *countedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.l.closed)
	return err
}
