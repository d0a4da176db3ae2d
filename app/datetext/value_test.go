package datetext

import (
	"testing"
	"time"
)

// TestValueIn: a text read once (Read, in UTC) gives its instant in
// another zone by its form: an instant stays the same instant, a
// wall-clock time is read in the zone, a phrase is read again there at
// the time it was first read; only the phrase counts a second read.
func TestValueIn(t *testing.T) {
	now := time.Date(2026, 11, 22, 23, 30, 0, 0, time.UTC) // already the 23rd in Amsterdam
	ams, err := time.LoadLocation("Europe/Amsterdam")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		text      string
		wall      bool
		phrase    bool
		wantUTC   string
		wantAms   string
		wantReads int64
	}{
		{"2027-03-28 02:30:00", true, false, "2027-03-28 02:30:00 +0000", "2027-03-28 03:30:00 +0200", 1}, // in Amsterdam's gap: the offset before it
		{"1764583201", false, false, "2025-12-01 10:00:01 +0000", "2025-12-01 11:00:01 +0100", 1},
		{"2026-12-01T10:00:02+05:00", false, false, "2026-12-01 05:00:02 +0000", "2026-12-01 06:00:02 +0100", 1},
		{"tomorrow 9am", false, true, "2026-11-23 09:00:00 +0000", "2026-11-24 09:00:00 +0100", 3},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			reads, stop := WatchReads(tt.text)
			defer stop()
			v, err := Read(tt.text, "en", now, time.UTC)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := v.Wall(); ok != tt.wall || v.IsPhrase() != tt.phrase || v.IsZero() || v.Text() != tt.text {
				t.Errorf("Wall %v, IsPhrase %v, IsZero %v, Text %q", ok, v.IsPhrase(), v.IsZero(), v.Text())
			}
			for _, z := range []struct {
				loc  *time.Location
				want string
			}{{time.UTC, tt.wantUTC}, {ams, tt.wantAms}, {ams, tt.wantAms}} {
				got, err := v.In(z.loc)
				if err != nil || got.Format("2006-01-02 15:04:05 -0700") != z.want {
					t.Errorf("In(%s) = %v, %v; want %s", z.loc, got, err, z.want)
				}
			}
			// In(ams) twice: a phrase is read again each time it is
			// asked for in another zone (the caller keeps the instant).
			if n := reads(); n != tt.wantReads {
				t.Errorf("%d reads, want %d", n, tt.wantReads)
			}
		})
	}
	if _, err := (Value{}).In(time.UTC); err == nil {
		t.Error("the zero Value has an instant")
	}
}
