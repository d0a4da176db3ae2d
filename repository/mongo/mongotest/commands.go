package mongotest

import (
	"context"
	"sync"

	"go.mongodb.org/mongo-driver/v2/event"
)

// Commands records what a MongoDB client sends, one value per command it
// starts, for the tests that count or inspect a store's commands: pass
// Monitor to the client (mongo.WithCommandMonitor) and read with Take.
// Record turns a started command into the value kept, or reports false to
// pass it over. It is safe for the concurrent use of a client.
type Commands[T any] struct {
	Record func(*event.CommandStartedEvent) (T, bool)
	mu     sync.Mutex
	got    []T
}

// CommandNames is a Commands that keeps each command's name.
func CommandNames() *Commands[string] {
	return &Commands[string]{Record: func(e *event.CommandStartedEvent) (string, bool) { return e.CommandName, true }}
}

// Monitor returns the driver's command monitor feeding c.
func (c *Commands[T]) Monitor() *event.CommandMonitor {
	return &event.CommandMonitor{Started: func(_ context.Context, e *event.CommandStartedEvent) {
		v, ok := c.Record(e)
		if !ok {
			return
		}
		c.mu.Lock()
		c.got = append(c.got, v)
		c.mu.Unlock()
	}}
}

// Take returns what was recorded since the last Take and forgets it.
func (c *Commands[T]) Take() []T {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.got
	c.got = nil
	return out
}
