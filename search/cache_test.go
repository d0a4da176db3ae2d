package search

import (
	"context"
	"testing"
	"time"
)

// countingEngine answers every search with Total = number of calls so far.
type countingEngine struct {
	Engine
	calls int
}

func (e *countingEngine) SearchEvents(context.Context, EventQuery) (Result, error) {
	e.calls++
	return Result{Total: e.calls}, nil
}

func (e *countingEngine) SearchPlaces(context.Context, PlaceQuery) (Result, error) {
	e.calls++
	return Result{Total: e.calls}, nil
}

func (e *countingEngine) IndexEvents(context.Context, []EventDocument) error     { return nil }
func (e *countingEngine) IndexPlaces(context.Context, []PlaceDocument) error     { return nil }
func (e *countingEngine) DeleteEvents(context.Context, []int64) error            { return nil }
func (e *countingEngine) DeletePlaces(context.Context, PlaceKind, []int64) error { return nil }

func TestCached(t *testing.T) {
	ctx := context.Background()
	q := EventQuery{Lang: "en", Statuses: []string{"publish"}, StartGTE: Some(int64(100)), Limit: 8}
	cases := []struct {
		name string
		// between runs between the two identical searches.
		between   func(c *Cached, clock *time.Time)
		wantCalls int
	}{
		{"second search is a hit", func(*Cached, *time.Time) {}, 1},
		{"index write invalidates", func(c *Cached, _ *time.Time) { _ = c.IndexEvents(ctx, nil) }, 2},
		{"place write invalidates", func(c *Cached, _ *time.Time) { _ = c.IndexPlaces(ctx, nil) }, 2},
		{"delete invalidates", func(c *Cached, _ *time.Time) { _ = c.DeleteEvents(ctx, []int64{1}) }, 2},
		{"place delete invalidates", func(c *Cached, _ *time.Time) { _ = c.DeletePlaces(ctx, Venues, []int64{1}) }, 2},
		{"ttl expires", func(_ *Cached, clock *time.Time) { *clock = clock.Add(time.Second) }, 2},
		{"within ttl", func(_ *Cached, clock *time.Time) { *clock = clock.Add(100 * time.Millisecond) }, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			inner := &countingEngine{}
			c := NewCached(inner, 500*time.Millisecond)
			clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			c.now = func() time.Time { return clock }
			first, _ := c.SearchEvents(ctx, q)
			tc.between(c, &clock)
			second, _ := c.SearchEvents(ctx, q)
			if inner.calls != tc.wantCalls {
				t.Errorf("engine calls = %d, want %d", inner.calls, tc.wantCalls)
			}
			if tc.wantCalls == 1 && second.Total != first.Total {
				t.Errorf("hit returned %v, want %v", second, first)
			}
		})
	}
	t.Run("different queries do not share entries", func(t *testing.T) {
		inner := &countingEngine{}
		c := NewCached(inner, time.Minute)
		q2 := q
		q2.CategoryIDs = []int64{3}
		_, _ = c.SearchEvents(ctx, q)
		_, _ = c.SearchEvents(ctx, q2)
		_, _ = c.SearchPlaces(ctx, PlaceQuery{Kind: Venues})
		if inner.calls != 3 {
			t.Errorf("calls = %d, want 3", inner.calls)
		}
	})
	t.Run("disabled", func(t *testing.T) {
		inner := &countingEngine{}
		c := NewCached(inner, 0)
		_, _ = c.SearchEvents(ctx, q)
		_, _ = c.SearchEvents(ctx, q)
		if inner.calls != 2 {
			t.Errorf("calls = %d, want 2", inner.calls)
		}
	})
	t.Run("no rebuilder", func(t *testing.T) {
		if _, err := NewCached(&countingEngine{}, time.Second).BeginRebuild(ctx); err == nil {
			t.Error("want an error from an engine that cannot rebuild")
		}
	})
}
