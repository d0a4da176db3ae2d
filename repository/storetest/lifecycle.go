package storetest

import (
	"context"
	"testing"

	"github.com/calendar/eventcal/repository"
)

var lifecycleTests = []storeTest{
	{"Ping", func(t *testing.T, ctx context.Context, s repository.Store) {
		if err := s.Ping(ctx); err != nil {
			t.Errorf("Ping: %v", err)
		}
	}},
	{"Close", func(t *testing.T, ctx context.Context, s repository.Store) {
		mustCreatePost(t, ctx, s, minimalEvent("before-close"))
		if err := s.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	}},
}
