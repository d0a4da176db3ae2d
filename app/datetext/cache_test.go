package datetext

import "testing"

// TestBoundedCache: a value put is got back; the cache holds at most
// cacheSize entries, emptied when full before the next put.
func TestBoundedCache(t *testing.T) {
	var c boundedCache[int, string]
	if _, ok := c.get(1); ok {
		t.Fatal("an empty cache has 1")
	}
	for i := range cacheSize {
		c.put(i, "v")
	}
	if v, ok := c.get(cacheSize - 1); !ok || v != "v" || len(c.m) != cacheSize {
		t.Fatalf("full cache: get = %q, %v; %d entries, want %d", v, ok, len(c.m), cacheSize)
	}
	c.put(-1, "after")
	if _, ok := c.get(0); ok || len(c.m) != 1 {
		t.Errorf("after a put into a full cache: %d entries (0 kept: %v), want only the new one", len(c.m), ok)
	}
	if v, ok := c.get(-1); !ok || v != "after" {
		t.Errorf("get(-1) = %q, %v; want after", v, ok)
	}
}
