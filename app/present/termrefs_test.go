package present

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/calendar/eventcal/repository"
)

// TestResolveTermRefBounds: kept references are answered without resolving
// again until the generation moves; errors are never kept; and ever new
// unknown references never keep more than maxTermRefs.
func TestResolveTermRefBounds(t *testing.T) {
	var gen int64
	rn := &Renderer{links: linkedRecords{gen: func() int64 { return gen }, ttl: time.Hour}}
	calls := 0
	resolve := func(id int64, err error) func() (int64, error) {
		return func() (int64, error) { calls++; return id, err }
	}
	key := func(ref string) TermRefKey { return TermRefKey{Tax: repository.LabelCategory, Lang: "en", Ref: ref} }
	down := errors.New("down")
	for _, tc := range []struct {
		name      string
		bump      bool
		ref       string
		id        int64
		err       error
		wantID    int64
		wantErr   bool
		wantCalls int
	}{
		{"first read resolves", false, "jazz", 7, nil, 7, false, 1},
		{"kept", false, "jazz", 8, nil, 7, false, 0},
		{"generation moved: resolved again", true, "jazz", 8, nil, 8, false, 1},
		{"unknown resolves", false, "swing", 0, nil, 0, false, 1},
		{"unknown kept", false, "swing", 9, nil, 0, false, 0},
		{"error returned", false, "rock", 0, down, 0, true, 1},
		{"error not kept", false, "rock", 3, nil, 3, false, 1},
	} {
		if tc.bump {
			gen++
		}
		calls = 0
		id, err := ResolveTermRef(rn, key(tc.ref), resolve(tc.id, tc.err))
		if id != tc.wantID || (err != nil) != tc.wantErr || calls != tc.wantCalls {
			t.Fatalf("%s: got %d, %v after %d resolves; want %d, error %v, %d resolves", tc.name, id, err, calls, tc.wantID, tc.wantErr, tc.wantCalls)
		}
	}
	for i := range 3 * maxTermRefs {
		if _, err := ResolveTermRef(rn, key("random-"+strconv.Itoa(i)), resolve(0, nil)); err != nil {
			t.Fatal(err)
		}
		if n := rn.links.keptTermRefs(); n > maxTermRefs {
			t.Fatalf("after %d unknown references %d are kept, over %d", i+1, n, maxTermRefs)
		}
	}
}
