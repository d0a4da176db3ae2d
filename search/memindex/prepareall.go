package memindex

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/calendar/eventcal/search"
)

// prepareRun is about how many documents one goroutine of prepareAll
// prepares at a time (a run never splits an event's documents).
const prepareRun = 2048

// prepareAll prepares docs (docs[i] joining grps[i]) as a loop calling
// prepare with the document before each as prev would, on GOMAXPROCS
// goroutines: each takes runs of about prepareRun documents that start
// where the event ID changes, so the first document of a run would
// not have reused its prev's tokens (prepare reuses only those of the
// same event) and is prepared without one. It fills an empty index at
// open from one write of every document, where tokenizing is most of
// the cost.
func prepareAll(docs []search.EventDocument, grps []*group, run int) []prepared {
	preps := make([]prepared, len(docs))
	bounds := []int{0}
	for start := 0; start < len(docs); {
		end := min(start+max(run, 1), len(docs))
		for end < len(docs) && docs[end].ID == docs[end-1].ID {
			end++
		}
		bounds = append(bounds, end)
		start = end
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(max(1, runtime.GOMAXPROCS(0)), len(bounds)-1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				c := int(next.Add(1) - 1)
				if c+1 >= len(bounds) {
					return
				}
				for i := bounds[c]; i < bounds[c+1]; i++ {
					var prev *prepared
					if i > bounds[c] {
						prev = &preps[i-1]
					}
					preps[i] = prepare(&docs[i], prev)
					preps[i].grp = grps[i]
				}
			}
		}()
	}
	wg.Wait()
	return preps
}
