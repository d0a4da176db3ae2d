// Package wallclock turns wall-clock times in a time zone into instants
// the way RFC 5545 (3.3.5) says, the same in every zone: a local time that
// occurs twice (clocks set back) is its first occurrence, and a local time
// that does not exist (clocks set forward) is read with the UTC offset in
// effect before the gap, so 02:30 on a spring-forward day is 03:30 after
// it, in New York as in Amsterdam or Sydney.
//
// time.Date leaves both cases unspecified; in practice it resolves a gap
// to the time after it east of Greenwich and to the time before it west
// of Greenwich (02:30 becomes 01:30 EST in New York), hence this package.
package wallclock

import "time"

// Resolve returns the instant of the wall-clock time w (its year, month,
// day, hour, minute, second and nanosecond, whatever its location) in
// zone, following RFC 5545 for repeated and skipped local times.
func Resolve(w time.Time, zone *time.Location) time.Time {
	if zone == nil {
		zone = time.UTC
	}
	y, m, d := w.Date()
	h, mi, s := w.Clock()
	u := time.Date(y, m, d, h, mi, s, w.Nanosecond(), time.UTC)
	// The offsets in effect around the wall time: two days either side
	// covers any transition it can be in.
	offsets := [3]int{offsetAt(u.Add(-48*time.Hour), zone), offsetAt(u, zone), offsetAt(u.Add(48*time.Hour), zone)}
	var best time.Time
	maxOff := offsets[0]
	for _, o := range offsets {
		maxOff = max(maxOff, o)
		t := u.Add(-time.Duration(o) * time.Second)
		if offsetAt(t, zone) != o {
			continue // this offset does not give back the wall time
		}
		if best.IsZero() || t.Before(best) {
			best = t // a repeated time: the first occurrence
		}
	}
	if best.IsZero() {
		// A gap: the offset after it is the largest around; the instant
		// read with it is before the transition, where the offset before
		// the gap applies. Reading the wall time with that offset lands
		// after the transition, as far into the new time as the wall time
		// was into the gap.
		before := offsetAt(u.Add(-time.Duration(maxOff)*time.Second), zone)
		best = u.Add(-time.Duration(before) * time.Second)
	}
	return best.In(zone)
}

// InGap reports whether the wall-clock time w does not exist in zone
// (it falls in a gap where clocks are set forward).
func InGap(w time.Time, zone *time.Location) bool {
	t := Resolve(w, zone)
	y, m, d := w.Date()
	h, mi, s := w.Clock()
	ty, tm, td := t.Date()
	th, tmi, ts := t.Clock()
	return y != ty || m != tm || d != td || h != th || mi != tmi || s != ts
}

// Parse reads s with layout as a wall-clock time in zone (Resolve).
func Parse(layout, s string, zone *time.Location) (time.Time, error) {
	w, err := time.Parse(layout, s)
	if err != nil {
		return time.Time{}, err
	}
	return Resolve(w, zone), nil
}

// Floating returns t's wall-clock time in zone as a UTC time with the same
// fields (the form Resolve reads).
func Floating(t time.Time, zone *time.Location) time.Time {
	if zone != nil {
		t = t.In(zone)
	}
	y, m, d := t.Date()
	h, mi, s := t.Clock()
	return time.Date(y, m, d, h, mi, s, t.Nanosecond(), time.UTC)
}

func offsetAt(t time.Time, zone *time.Location) int {
	_, o := t.In(zone).Zone()
	return o
}
