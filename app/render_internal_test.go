package app

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
	"time"
)

// TestLocalDateMatchesFormat checks the hand-written date formatter
// against time.Format on ordinary, edge and out-of-range years.
func TestLocalDateMatchesFormat(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		paris = time.FixedZone("CET", 3600)
	}
	times := []time.Time{
		time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC),
		time.Date(2026, 3, 29, 1, 59, 59, 999999999, time.UTC),
		time.Date(1, 1, 1, 0, 0, 1, 0, time.UTC),
		time.Date(999, 12, 31, 23, 59, 59, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-5, 6, 7, 8, 9, 10, 0, time.UTC),
		time.Unix(1700000000, 0),
	}
	for _, tm := range times {
		for _, loc := range []*time.Location{time.UTC, paris, time.FixedZone("x", -9*3600-30*60)} {
			if got, want := localDate(tm, loc), tm.In(loc).Format(wpLayout); got != want {
				t.Errorf("localDate(%v, %v) = %q, want %q", tm, loc, got, want)
			}
		}
	}
	if got := localDate(time.Time{}, time.UTC); got != "" {
		t.Errorf("zero time: %q", got)
	}
}

// TestDateDetailsShapes checks the substring fast path of dateDetails
// against the parsed fields, and the strings it does not take.
func TestDateDetailsShapes(t *testing.T) {
	slow := func(local string) string {
		tm, err := time.Parse(wpLayout, local)
		o := newObj()
		if err == nil {
			o.set("year", tm.Format("2006")).set("month", tm.Format("01")).set("day", tm.Format("02")).
				set("hour", tm.Format("15")).set("minutes", tm.Format("04")).set("seconds", tm.Format("05"))
		}
		raw, _ := o.MarshalJSON()
		return string(raw)
	}
	for _, s := range []string{"2026-11-22 09:05:03", "0001-01-01 00:00:00", "2026-11-22 9:05:03",
		"2026-11-22 09:05:03.250", "2026-02-30 10:00:00", "2026-11-22", "", "2026-11-22T09:05:03", "２026-11-22 09:05:03"} {
		raw, _ := dateDetails(s).MarshalJSON()
		if got, want := string(raw), slow(s); got != want {
			t.Errorf("dateDetails(%q) = %s, want %s", s, got, want)
		}
	}
}

// TestWriteFloatMatchesEncodingJSON checks the float fast path of
// writeJSON against encoding/json.
func TestWriteFloatMatchesEncodingJSON(t *testing.T) {
	for _, f := range []float64{0, math.Copysign(0, -1), 1, -1.5, 48.8566, 2.3522, 1e-6, 9.99e-7, 1e-7, -1.234e-9, 1e20, 1e21, 1.5e300,
		math.MaxFloat64, math.SmallestNonzeroFloat64, 123456789.123456789, 0.1 + 0.2} {
		want, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := writeJSON(&buf, f); err != nil {
			t.Fatal(err)
		}
		if buf.String() != string(want) {
			t.Errorf("writeJSON(%v) = %s, want %s", f, buf.String(), want)
		}
	}
	var buf bytes.Buffer
	if err := writeJSON(&buf, math.NaN()); err == nil {
		t.Error("NaN: no error")
	}
}

// TestObjIndexedAndDeleted checks an object past indexFrom keys and
// deletions in it.
func TestObjIndexedAndDeleted(t *testing.T) {
	o := newObj()
	keys := []string{}
	for i := range 2 * indexFrom {
		k := string(rune('A' + i))
		keys = append(keys, k)
		o.set(k, i)
	}
	o.set("B", "again")
	o.del("A")
	o.del("missing")
	o.add("zz", true)
	if v, ok := o.get("B"); !ok || v != "again" {
		t.Errorf("B = %v", v)
	}
	if _, ok := o.get("A"); ok {
		t.Error("A still there")
	}
	if len(o.keys) != 2*indexFrom || o.keys[0] != "B" || o.keys[len(o.keys)-1] != "zz" {
		t.Errorf("keys %v", o.keys)
	}
	for i, k := range o.keys {
		if o.find(k) != i {
			t.Errorf("find(%q) = %d, want %d", k, o.find(k), i)
		}
	}
	o.filter(func(k string, _ any) bool { return k != "C" })
	if o.find("C") != -1 || o.find("D") != 1 || o.at("D") != 3 {
		t.Errorf("after filter: keys %v", o.keys)
	}
}

// TestFrozenObj checks that a frozen object and copies of it, changed in
// every way, write what an unfrozen one does.
func TestFrozenObj(t *testing.T) {
	build := func() *obj {
		return newObj().set("a", "x</y").set("n", int64(3)).set("f", 1.5).
			set("d", newObj().set("y", "2026")).set("l", []any{newObj().set("k", true)}).set("z", nil)
	}
	write := func(o *obj) string {
		var buf bytes.Buffer
		if err := writeJSON(&buf, o); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	frozen := build().freeze()
	if got, want := write(frozen), write(build()); got != want {
		t.Fatalf("frozen %s, want %s", got, want)
	}
	changes := []func(o *obj){
		func(o *obj) { o.set("n", 4) },
		func(o *obj) { o.add("new", "v") },
		func(o *obj) { o.del("d") },
		func(o *obj) { o.put(0, "changed") },
		func(o *obj) { dropEmpty(o) },
		func(o *obj) { o.set("z", "now set").set("extra", []string{"e"}) },
	}
	for i, change := range changes {
		c, plain := copyObj(frozen, 2), build()
		change(c)
		change(plain)
		if got, want := write(c), write(plain); got != want {
			t.Errorf("change %d: copy writes %s, want %s", i, got, want)
		}
		if got, want := write(frozen), write(build()); got != want {
			t.Errorf("change %d altered the frozen object: %s", i, got)
		}
		f := build().freeze()
		change(f)
		if got, want := write(f), write(plain); got != want {
			t.Errorf("change %d on a frozen object: %s, want %s", i, got, want)
		}
	}
}
