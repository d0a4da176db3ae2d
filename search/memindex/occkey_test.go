package memindex

import (
	"cmp"
	"testing"
)

// TestOccKey: every occurrence key comes back from its occKey as it was,
// two keys compare as their strings do (keys of the service's form,
// interned ones and both mixed), a key of the service's form is a number
// (no interned name: the rows hold no pointer for it), and an interned
// key's number is given back once no row holds it.
func TestOccKey(t *testing.T) {
	keys := []string{"", "20261128T190000", "20261128T190001", "20270101T000000", "19991231T235959",
		"k000", "k104", "2026112T190000", "20261128X190000", "20261128T19000a", "202611280T19000", "20261128T1900000", "~"}
	var o occNames
	got := make([]occKey, len(keys))
	for i, k := range keys {
		got[i] = o.keyOcc(k)
		if s := o.occString(got[i]); s != k {
			t.Errorf("%q: back as %q", k, s)
		}
		if _, canonical := canonicalOcc(k); canonical != (got[i]&occCanonical != 0) {
			t.Errorf("%q: occKey %x, service form %v", k, uint64(got[i]), canonical)
		}
	}
	for _, c := range []struct {
		key       string
		canonical bool
	}{{"20261128T190000", true}, {"k000", false}, {"", false}, {"2026112T190000", false}} {
		if _, ok := canonicalOcc(c.key); ok != c.canonical {
			t.Errorf("canonicalOcc(%q): %v, want %v", c.key, ok, c.canonical)
		}
	}
	for i, a := range keys {
		for j, b := range keys {
			if c, want := o.compareOcc(got[i], got[j]), cmp.Compare(a, b); c != want {
				t.Errorf("compareOcc(%q, %q) = %d, want %d", a, b, c, want)
			}
			if c, want := o.compareOccString(got[i], b), cmp.Compare(a, b); c != want {
				t.Errorf("compareOccString(%q, %q) = %d, want %d", a, b, c, want)
			}
		}
	}
	// A second row of "k000", then both rows gone: its number is free and
	// the next interned key takes it.
	k000 := o.keyOcc("k000")
	if k000 != got[5] {
		t.Fatalf("k000 interned twice: %d and %d", got[5], k000)
	}
	o.dropOcc(k000)
	if s := o.occString(got[5]); s != "k000" {
		t.Fatalf("k000 gone while a row holds it: %q", s)
	}
	o.dropOcc(got[5])
	if again := o.keyOcc("k777"); again != got[5] {
		t.Errorf("k777 took %d, want the freed %d", again, got[5])
	}
	if s := o.occString(got[6]); s != "k104" {
		t.Errorf("k104 is %q after the reuse", s)
	}
}
