package present

import (
	"bytes"
	"encoding/json"
	"github.com/calendar/eventcal/app/datetext"
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
			if got, want := localDate(tm, loc), tm.In(loc).Format(datetext.Layout); got != want {
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
		tm, err := time.Parse(datetext.Layout, local)
		o := NewObj()
		if err == nil {
			o.Set("year", tm.Format("2006")).Set("month", tm.Format("01")).Set("day", tm.Format("02")).
				Set("hour", tm.Format("15")).Set("minutes", tm.Format("04")).Set("seconds", tm.Format("05"))
		}
		raw, _ := o.MarshalJSON()
		return string(raw)
	}
	for _, s := range []string{"2026-11-22 09:05:03", "0001-01-01 00:00:00", "2026-11-22 9:05:03",
		"2026-11-22 09:05:03.250", "2026-02-30 10:00:00", "2026-11-22", "", "2026-11-22T09:05:03", "２026-11-22 09:05:03"} {
		d := dateDetails(s)
		raw, _ := d.MarshalJSON()
		if got, want := string(raw), slow(s); got != want {
			t.Errorf("dateDetails(%q) = %s, want %s", s, got, want)
		}
	}
}

// TestWriteFloatMatchesEncodingJSON checks the float fast path of
// WriteJSON against encoding/json.
func TestWriteFloatMatchesEncodingJSON(t *testing.T) {
	for _, f := range []float64{0, math.Copysign(0, -1), 1, -1.5, 48.8566, 2.3522, 1e-6, 9.99e-7, 1e-7, -1.234e-9, 1e20, 1e21, 1.5e300,
		math.MaxFloat64, math.SmallestNonzeroFloat64, 123456789.123456789, 0.1 + 0.2} {
		want, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := WriteJSON(&buf, f); err != nil {
			t.Fatal(err)
		}
		if buf.String() != string(want) {
			t.Errorf("WriteJSON(%v) = %s, want %s", f, buf.String(), want)
		}
	}
	var buf bytes.Buffer
	if err := WriteJSON(&buf, math.NaN()); err == nil {
		t.Error("NaN: no error")
	}
}

// TestObjIndexedAndDeleted checks an object past indexFrom keys and
// deletions in it.
func TestObjIndexedAndDeleted(t *testing.T) {
	o := NewObj()
	for i := range 2 * indexFrom {
		o.Set(string(rune('A'+i)), i)
	}
	o.Set("B", "again")
	o.Del("A")
	o.Del("missing")
	o.Add("zz", true)
	if v, ok := o.Get("B"); !ok || v != "again" {
		t.Errorf("B = %v", v)
	}
	if _, ok := o.Get("A"); ok {
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
	o.Filter(func(k string, _ any) bool { return k != "C" })
	if o.find("C") != -1 || o.find("D") != 1 || o.At("D") != 3 {
		t.Errorf("after filter: keys %v", o.keys)
	}
}
