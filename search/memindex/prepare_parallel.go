package memindex

import (
	"runtime"
	"sync/atomic"

	"github.com/calendar/eventcal/search"
)

// prepareRun is about how many documents one goroutine of startPrepare
// prepares at a time (a run never splits an event's documents).
const prepareRun = 2048

// preparing is the preparation of a write's documents under way on other
// goroutines (startPrepare).
type preparing struct {
	preps []prepared
	// bounds holds the offset of each run's first document, and
	// len(preps) last; done[c] is closed once run c is prepared.
	bounds []int
	done   []chan struct{}
	// at is the run of the last document wait was asked for.
	at int
}

// startPrepare starts preparing docs (docs[i] joining grps[i]) as a loop
// calling prepare with the document before each as prev would, on
// GOMAXPROCS goroutines: each takes runs of about run documents that
// start where the event ID changes, so the first document of a run would
// not have reused its prev's tokens (prepare reuses only those of the
// same event) and is prepared without one. The runs are taken in order,
// so the caller can use the documents in order as they are ready (wait)
// while the rest are prepared: an empty index filled by one write of
// every document (at open) links them while later ones are tokenized.
func startPrepare(docs []search.EventDocument, grps []*group, run int) *preparing {
	p := &preparing{preps: make([]prepared, len(docs)), bounds: []int{0}}
	for start := 0; start < len(docs); {
		end := min(start+max(run, 1), len(docs))
		for end < len(docs) && docs[end].ID == docs[end-1].ID {
			end++
		}
		p.bounds = append(p.bounds, end)
		p.done = append(p.done, make(chan struct{}))
		start = end
	}
	var next atomic.Int64
	for range min(max(1, runtime.GOMAXPROCS(0)), len(p.done)) {
		go func() {
			for {
				c := int(next.Add(1) - 1)
				if c >= len(p.done) {
					return
				}
				for i := p.bounds[c]; i < p.bounds[c+1]; i++ {
					var prev *prepared
					if i > p.bounds[c] {
						prev = &p.preps[i-1]
					}
					p.preps[i] = prepare(&docs[i], prev)
					p.preps[i].grp = grps[i]
				}
				close(p.done[c])
			}
		}()
	}
	return p
}

// wait returns once document i is prepared. The caller asks for the
// documents in order (i never decreases).
func (p *preparing) wait(i int) {
	for i >= p.bounds[p.at+1] {
		p.at++
	}
	<-p.done[p.at]
}

// all waits for every document and returns them prepared.
func (p *preparing) all() []prepared {
	for _, d := range p.done {
		<-d
	}
	return p.preps
}
