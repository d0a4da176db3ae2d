package search

import (
	"context"
	"errors"
	"testing"
)

func TestYield(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name      string
		ctx       func(calls *int) context.Context
		wantCalls int
		wantErr   error
	}{
		{"no function", func(*int) context.Context { return context.Background() }, 0, nil},
		{"function called", func(calls *int) context.Context {
			return WithYield(context.Background(), func(context.Context) error { *calls++; return nil })
		}, 1, nil},
		{"its error returned", func(calls *int) context.Context {
			return WithYield(context.Background(), func(context.Context) error { *calls++; return boom })
		}, 1, boom},
		{"removed", func(calls *int) context.Context {
			return WithoutYield(WithYield(context.Background(), func(context.Context) error { *calls++; return nil }))
		}, 0, nil},
		// A write made by the yield function never yields in turn.
		{"not nested", func(calls *int) context.Context {
			return WithYield(context.Background(), func(ctx context.Context) error {
				*calls++
				return Yield(ctx)
			})
		}, 1, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			err := Yield(tt.ctx(&calls))
			if calls != tt.wantCalls || !errors.Is(err, tt.wantErr) {
				t.Errorf("calls %d, err %v; want %d, %v", calls, err, tt.wantCalls, tt.wantErr)
			}
		})
	}
}
