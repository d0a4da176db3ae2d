package mongo

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// # The database's clock
//
// Item locks and slug reservations record when they were taken, and a
// process decides whether another process's lock or reservation is old
// enough to take over by comparing that time with its own "now". Taken
// from each host's wall clock, a lock written by a host whose clock is
// behind would look expired to every other host at once, and one written
// by a host whose clock is ahead would block the item for as long as the
// skew after its holder died. So these times are the database server's:
// the store reads the server's clock once (the localTime of a hello
// command, at Open) and counts on from it with the local monotonic clock,
// reading it again every clockRefresh. Every process then stamps and
// compares on one clock, the server's, give or take a round trip and the
// drift of a quartz over clockRefresh.

// clockRefresh is how often the server's clock is read again.
const clockRefresh = 10 * time.Minute

// serverClock estimates the database server's clock.
type serverClock struct {
	// now is the local clock (time.Now; tests replace it). Its monotonic
	// reading measures the time since the last calibration.
	now func() time.Time

	mu sync.Mutex
	// server is the server's clock read at local time local; tried is
	// when a reading was last attempted.
	server, local, tried time.Time
}

// calibrate reads the server's clock (the hello command's localTime),
// taking it for the middle of the round trip.
func (s *conn) calibrate(ctx context.Context) error {
	before := s.clock.now()
	var reply struct {
		LocalTime time.Time `bson:"localTime"`
	}
	err := s.db.RunCommand(ctx, bson.D{{Key: "hello", Value: 1}}).Decode(&reply)
	after := s.clock.now()
	if err != nil {
		return fmt.Errorf("mongo: read the server's clock: %w", err)
	}
	if reply.LocalTime.IsZero() {
		return errors.New("mongo: the server's hello has no localTime")
	}
	s.clock.mu.Lock()
	defer s.clock.mu.Unlock()
	s.clock.server, s.clock.local, s.clock.tried = reply.LocalTime, before.Add(after.Sub(before)/2), after
	return nil
}

// dbNow returns the server's clock as estimated now, in UTC, whole
// milliseconds (as BSON keeps it). It reads the server's clock again when
// the last reading is older than clockRefresh (a failure keeps the old
// estimate); without any reading it falls back to the local clock.
func (s *conn) dbNow(ctx context.Context) time.Time {
	c := &s.clock
	c.mu.Lock()
	stale := c.now().Sub(c.tried) >= clockRefresh
	if stale {
		c.tried = c.now()
	}
	c.mu.Unlock()
	if stale {
		s.calibrate(ctx)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.now()
	if !c.server.IsZero() {
		t = c.server.Add(t.Sub(c.local))
	}
	return t.UTC().Truncate(time.Millisecond)
}
