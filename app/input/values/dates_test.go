package values

import (
	"testing"
	"time"
)

func TestParseDateInRange(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		raw  string
		want string // "" for an error
	}{
		{"2026-12-01 10:00", "2026-12-01 10:00:00"},
		{"99999999999999", ""},
		{"2026-02-30", ""},
		{"tomorrow", "2026-11-23 00:00:00"},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			got, err := ParseDateInRange(tt.raw, time.UTC, now, "en")
			if tt.want == "" {
				if err == nil {
					t.Errorf("%q parsed as %v", tt.raw, got)
				}
				if DateProblem(tt.raw, time.UTC, now, "en") == "" {
					t.Errorf("DateProblem(%q) is empty", tt.raw)
				}
				return
			}
			if err != nil || got.Format("2006-01-02 15:04:05") != tt.want {
				t.Errorf("%q = %v, %v; want %s", tt.raw, got, err, tt.want)
			}
		})
	}
}
