package search

import "context"

// A long write (the documents of a large series, sent in many requests)
// can let other writes through between its requests: the caller puts a
// function on the context with WithYield, and an engine whose write takes
// several requests calls Yield between two of them. The sync worker uses
// it to index the marks written meanwhile (small edits) while a large
// event is being sent, so that they never wait for the whole of it; an
// engine that writes in one step never calls it.

// yieldKey is the context key of the yield function.
type yieldKey struct{}

// WithYield returns ctx carrying fn: Yield(ctx) calls it.
func WithYield(ctx context.Context, fn func(context.Context) error) context.Context {
	return context.WithValue(ctx, yieldKey{}, fn)
}

// WithoutYield returns ctx without a yield function: writes made with it
// never let others through (a write that must not be interleaved, or one
// made while holding a lock that a yielded write would take again).
func WithoutYield(ctx context.Context) context.Context {
	if ctx.Value(yieldKey{}) == nil {
		return ctx
	}
	return context.WithValue(ctx, yieldKey{}, nil)
}

// Yield calls the yield function of ctx, if any, with a context that has
// none (the writes it makes never yield in turn), and returns its error.
// Engines call it between two requests of one write, never while a
// request of that write is unfinished.
func Yield(ctx context.Context) error {
	fn, _ := ctx.Value(yieldKey{}).(func(context.Context) error)
	if fn == nil {
		return nil
	}
	return fn(WithoutYield(ctx))
}
