package rrule

import (
	"testing"
	"time"
)

// TestNoHiddenEnd: a rule without UNTIL or COUNT goes on past 292 years
// after its start (upstream ended it there, at DTSTART plus the largest
// time.Duration).
func TestNoHiddenEnd(t *testing.T) {
	r, err := NewRRule(ROption{Freq: YEARLY, Dtstart: time.Date(2000, 1, 1, 10, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	next := r.Iterator()
	var last time.Time
	for range 400 {
		v, ok := next()
		if !ok {
			break
		}
		last = v
	}
	if last.Year() != 2399 {
		t.Errorf("400th date %v, want in 2399", last)
	}
}

// TestCounter: an iterator stops once its counted work would pass the
// limit, and a period after UNTIL ends a rule that never gives a date
// (upstream scanned to the year 9999).
func TestCounter(t *testing.T) {
	never := ROption{Freq: DAILY, Bysetpos: []int{2}, Dtstart: time.Date(2000, 1, 1, 10, 0, 0, 0, time.UTC)}
	r, err := NewRRule(never)
	if err != nil {
		t.Fatal(err)
	}
	c := &Counter{Limit: 1000}
	if _, ok := r.CountedIterator(c)(); ok || !c.Exhausted || c.Work > 1000 || c.Work < 998 {
		t.Errorf("impossible rule: counter %+v", c)
	}
	never.Until = time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	r, _ = NewRRule(never)
	c = &Counter{}
	if _, ok := r.CountedIterator(c)(); ok || c.Exhausted || c.Work != 2*367 {
		t.Errorf("impossible rule with UNTIL: counter %+v, want %d work (367 days, 1 + 1 BYSETPOS each)", c, 2*367)
	}
}
