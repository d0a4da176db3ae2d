package limits

import (
	"math"
	"testing"
)

func TestOffset(t *testing.T) {
	last := int64(MaxOffset / 50 * 50)
	for _, tt := range []struct {
		page, perPage int64
		want          int
	}{
		{1, 8, 0},
		{2, 8, 8},
		{3, 50, 100},
		{0, 8, 0},
		{-5, 8, 0},
		{2, 0, 0},
		{math.MaxInt64, 50, int(last)},
		{math.MaxInt64, math.MaxInt64, MaxOffset},
		{1, math.MaxInt64, 0},
		{MaxOffset/50 + 1, 50, int(last)},
		{MaxOffset / 50, 50, int(last) - 50},
		{2, math.MaxInt64, MaxOffset},
	} {
		got := Offset(tt.page, tt.perPage)
		if got != tt.want {
			t.Errorf("Offset(%d, %d) = %d, want %d", tt.page, tt.perPage, got, tt.want)
		}
		if got < 0 || got > MaxOffset || (tt.perPage > 0 && tt.perPage <= MaxOffset && int64(got)%tt.perPage != 0) {
			t.Errorf("Offset(%d, %d) = %d: out of range or not a whole page", tt.page, tt.perPage, got)
		}
	}
}
