package values

import (
	"testing"
	"time"
)

// TestReadDate: a date parameter is read once (ReadDate, here in UTC) and
// refused outside the stores' years or when it is no date; DateIn gives
// its instant in another zone without reading it again, and refuses it
// when the instant there falls outside the stores' years.
func TestReadDate(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		raw    string
		want   string // in UTC; "" for an error
		wantNY string // DateIn in New York; "" for an error
	}{
		{"2026-12-01 10:00", "2026-12-01 10:00:00", "2026-12-01 10:00:00"},
		{"1764583200", "2025-12-01 10:00:00", "2025-12-01 05:00:00"},
		{"99999999999999", "", ""},
		{"2026-02-30", "", ""},
		{"tomorrow", "2026-11-23 00:00:00", "2026-11-23 00:00:00"},
		// The last day the stores hold, in UTC; in New York its instant
		// is in the year after.
		{"9999-12-31 23:30:00", "9999-12-31 23:30:00", ""},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			d, err := ReadDate(tt.raw, time.UTC, now, "en")
			if tt.want == "" {
				if err == nil {
					t.Errorf("%q read as %v", tt.raw, d)
				}
				if DateProblem(tt.raw, time.UTC, now, "en") == "" {
					t.Errorf("DateProblem(%q) is empty", tt.raw)
				}
				return
			}
			got, _ := d.In(time.UTC)
			if err != nil || got.Format("2006-01-02 15:04:05") != tt.want {
				t.Errorf("%q = %v, %v; want %s", tt.raw, got, err, tt.want)
			}
			inNY, err := DateIn(d, ny)
			switch {
			case tt.wantNY == "" && err == nil:
				t.Errorf("%q in New York: %v, want an error", tt.raw, inNY)
			case tt.wantNY != "" && (err != nil || inNY.Format("2006-01-02 15:04:05") != tt.wantNY):
				t.Errorf("%q in New York = %v, %v; want %s", tt.raw, inNY, err, tt.wantNY)
			}
		})
	}
}
