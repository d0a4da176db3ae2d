package meili

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/calendar/eventcal/config/testdeadline"
	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/search/meili/meilisim"
	"github.com/calendar/eventcal/search/searchtest"
)

// TestConformance runs the shared conformance suite against a real
// Meilisearch server when TEST_MEILI_URL (and, if the server has a master
// key, TEST_MEILI_KEY) is set. Every engine the suite asks for gets its own
// index prefix, and its indexes are deleted when its test ends.
func TestConformance(t *testing.T) {
	t.Parallel()
	url, key, ok := realMeili()
	if !ok {
		t.Skip("TEST_MEILI_URL not set: the suite runs against the simulator in TestSuiteAgainstFake")
	}
	run := time.Now().UnixNano()
	var n atomic.Int64
	newEngine := func(t *testing.T) search.Engine {
		// No Languages: the engine learns them from the fixtures, which
		// also exercises settings updates on a live server.
		prefix := fmt.Sprintf("conformance_%d_%d_", run, n.Add(1))
		e, err := Open(t.Context(), url, key, Options{IndexPrefix: prefix})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), testdeadline.Timeout(t))
			defer cancel()
			for _, ix := range indexes {
				if err := e.DeleteIndex(ctx, e.IndexUID(ix)); err != nil {
					t.Errorf("DeleteIndex: %v", err)
				}
			}
		})
		return e
	}
	searchtest.Run(t, newEngine) // NearEdges included
}

// TestNearEdgesAgainstFake runs the shared generated-data check of the
// Near rule (searchtest.RunNearEdges: points exactly on the circle, a
// float step or a millimetre either side, at the poles and across the
// antimeridian) against the fake, whose _geoRadius is Meilisearch's rule
// from its source, with a cos one last place off for most arguments
// (another C library's), where only the engine's edge ring keeps the
// result exact. With Go's cos (the fake and search.DistanceM then agree
// everywhere) the same check runs in TestSuiteAgainstFake (its
// NearEdges, on a fake configured alike): it is not run twice.
func TestNearEdgesAgainstFake(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cos  func(float64) float64
	}{
		{"another C library's cos", meilisim.OtherLibmCos},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeMeili(t)
			f.Emulate, f.GeoCos = true, tt.cos
			searchtest.RunNearEdges(t, func(t *testing.T) search.Engine {
				e, err := Open(t.Context(), f.srv.URL, "", Options{TaskPollInterval: time.Millisecond})
				if err != nil {
					t.Fatalf("Open: %v", err)
				}
				return e
			})
		})
	}
}

// TestSuiteAgainstFake runs the conformance suite against the fake's
// emulation of Meilisearch (fakesearch_test.go). It needs no server and
// checks the engine's side of the contract: the requests it builds, the
// settings they depend on, and the rules it decides itself. Whether
// Meilisearch answers those requests as the emulation does is what
// TestConformance checks against a real server.
func TestSuiteAgainstFake(t *testing.T) {
	t.Parallel()
	f := newFakeMeili(t)
	f.Emulate = true
	var n atomic.Int64
	searchtest.Run(t, func(t *testing.T) search.Engine {
		e, err := Open(t.Context(), f.srv.URL, "", Options{
			IndexPrefix:      fmt.Sprintf("suite_%d_", n.Add(1)),
			TaskPollInterval: time.Millisecond,
		})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		return e
	})
}
