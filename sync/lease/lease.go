package lease

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
)

// Lease decides which process runs the sync worker, full rebuilds and the
// scheduled jobs when several service processes share one store: exactly
// the one holding the lease. With MongoDB the lease is a document in the
// database ((*mongo.Store).Lease); with the embedded SQLite store only one
// process serves a DATA_DIR (Bleve locks it), so the lease is always held
// (Held).
//
// IsLeader makes a Lease a gocron Elector (gocron.WithDistributedElector):
// the scheduler asks it before every run and skips the run when it fails.
type Lease interface {
	// IsLeader returns nil while this process holds the lease, else an
	// error saying why not.
	IsLeader(ctx context.Context) error
	// Changed returns a channel that is closed at the next change of
	// IsLeader's answer. Take the channel before asking IsLeader, so that
	// no change is missed.
	Changed() <-chan struct{}
	// Keep acquires the lease when it is free or expired and renews it
	// while held, until ctx ends. It does not release the lease: a process
	// that stops keeping it (it crashed, or ctx ended) loses it when it
	// expires.
	Keep(ctx context.Context)
	// Release gives the lease up at once, so that another process takes it
	// over without waiting for the expiry (graceful shutdown).
	Release(ctx context.Context) error
}

// Fencer is implemented by leases that can check with the store, not only
// with this process's clock, that the lease is still held (the MongoDB
// lease): a former holder that paused past its lease, its clock stopped
// with it, still has IsLeader answer nil, but Fence refuses it once
// another process took over. Fence returns the epoch (fencing token) of
// the hold.
type Fencer interface {
	Fence(ctx context.Context) (epoch int64, err error)
}

// CheckFence returns nil when this process holds l, asking the store where
// l is a Fencer and IsLeader otherwise. The work the lease guards calls it
// right before it writes.
func CheckFence(ctx context.Context, l Lease) error {
	if l == nil {
		return nil
	}
	if f, ok := l.(Fencer); ok {
		if _, err := f.Fence(ctx); err != nil {
			return fmt.Errorf("%w: %w", ErrNotLeader, err)
		}
		return nil
	}
	if err := l.IsLeader(ctx); err != nil {
		return fmt.Errorf("%w: %w", ErrNotLeader, err)
	}
	return nil
}

// ErrNotLeader is returned by indexing.Reindexer.Start in a process that
// does not hold the lease: another process runs rebuilds.
var ErrNotLeader = errors.New("sync: another process holds the lease")

// Held returns the lease of a process that is alone on its store: always
// held, kept and released for free.
func Held() Lease { return held{} }

// held is the lease of Held.
type held struct{}

// IsLeader always answers nil.
func (held) IsLeader(context.Context) error { return nil }

// Changed returns nil: the answer never changes.
func (held) Changed() <-chan struct{} { return nil }

// Keep waits for ctx to end.
func (held) Keep(ctx context.Context) { <-ctx.Done() }

// Release does nothing.
func (held) Release(context.Context) error { return nil }

// RunWhileLeader calls fn whenever this process holds the lease, with a
// context that ends when the lease is lost (or ctx ends), until ctx ends.
// A lost and regained lease calls fn again. The sync worker runs this way:
// it pauses when the lease is lost and resumes when it is regained.
func RunWhileLeader(ctx context.Context, l Lease, fn func(ctx context.Context)) {
	for ctx.Err() == nil {
		changed := l.Changed()
		if l.IsLeader(ctx) == nil {
			runCtx, stop := WhileLeader(ctx, l)
			fn(runCtx)
			stop()
			if ctx.Err() != nil {
				return
			}
		}
		// Lost, never held, or fn returned on its own while still held:
		// wait for the next change rather than spinning.
		select {
		case <-ctx.Done():
		case <-changed:
		}
	}
}

// WhileLeader returns a context that is cancelled, with ErrNotLeader as its
// cause, as soon as the lease is lost; stop releases its resources.
func WhileLeader(ctx context.Context, l Lease) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	go func() {
		for {
			changed := l.Changed()
			if err := l.IsLeader(ctx); err != nil {
				cancel(fmt.Errorf("%w: %w", ErrNotLeader, err))
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-changed:
			}
		}
	}()
	return ctx, func() { cancel(context.Canceled) }
}

// Details is implemented by leases that say more of their state in
// LogChanges' lines: key-value pairs as slog takes them (the MongoDB
// lease: the replica's identity and, once held, its term, the previous
// holder and its epoch).
type Details interface {
	LeaseDetails(held bool) []any
}

// LogChanges logs every change of this process's hold on the lease
// until ctx ends, one line per transition: "lease acquired" (Info) the
// first time it is held, "lease lost" (Warn, with why) when it stops being
// held, and "lease taken back" (Info, with how many times) when it is held
// again after a loss, for example once the store is reachable again after
// an outage. attrs are added to every line (the lease's name, say), and
// the lease's own LeaseDetails (Details) when it has them. A lease that never
// changes (Held) logs nothing. The service runs it once per process,
// beside Keep.
func LogChanges(ctx context.Context, l Lease, log *slog.Logger, attrs ...any) {
	if l.Changed() == nil {
		return
	}
	line := func(held bool, more ...any) []any {
		out := append(attrs[:len(attrs):len(attrs)], more...)
		if d, ok := l.(Details); ok {
			out = append(out, d.LeaseDetails(held)...)
		}
		return out
	}
	var held bool
	var gained int
	for ctx.Err() == nil {
		changed := l.Changed()
		err := l.IsLeader(ctx)
		switch {
		case err == nil && !held && gained == 0:
			gained++
			log.Info("lease acquired", line(true)...)
		case err == nil && !held:
			gained++
			log.Info("lease taken back", line(true, "times", gained-1)...)
		case err != nil && held && ctx.Err() == nil:
			log.Warn("lease lost", line(false, "err", err.Error())...)
		}
		held = err == nil
		select {
		case <-ctx.Done():
		case <-changed:
		}
	}
}
