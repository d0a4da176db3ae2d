package api_test

import (
	"strings"
	"testing"
)

// TestWriteRateLimit: a contributor or author who writes faster than
// WRITE_RATE after WRITE_BURST is refused with 429 and Retry-After, counted
// in eventcal_write_rate_limited_total; editors and admins are not bounded.
func TestWriteRateLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "WRITE_RATE", "0.001", "WRITE_BURST", "2")
	e.addUser("ann", "author")
	e.addUser("ed", "editor")
	venue := func(name string) map[string]any { return map[string]any{"venue": name} }
	e.must(201, "POST", "venues", "ann", venue("A1"))
	e.must(201, "POST", "venues", "ann", venue("A2"))
	r := e.do("POST", "venues", "ann", venue("A3"))
	if r.status != 429 || r.str("code") != "rest_too_many_requests" || r.header.Get("Retry-After") == "" ||
		!strings.Contains(r.str("message"), "Too many writes") {
		t.Fatalf("third write: %d %s (Retry-After %q)", r.status, r.raw, r.header.Get("Retry-After"))
	}
	// The refusal comes before anything is read or written.
	if lst := e.must(200, "GET", "venues?search=A3", "admin", nil); strings.Contains(lst.raw, `"A3"`) {
		t.Fatal("a refused write was stored")
	}
	for i := 0; i < 5; i++ {
		e.must(201, "POST", "venues", "ed", venue("E"))
		e.must(201, "POST", "venues", "admin", venue("X"))
	}
	// Anonymous writes stay 401: the bound is per account.
	e.must(401, "POST", "venues", "", venue("anon"))
	if m := e.scrape(); !strings.Contains(m, "eventcal_write_rate_limited_total 1") {
		t.Fatal("eventcal_write_rate_limited_total is not 1")
	}
}
