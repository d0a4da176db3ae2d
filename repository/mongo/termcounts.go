package mongo

import (
	"context"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/calendar/eventcal/repository"
)

// termCountsTTL is how long the FerretDB plan reuses the term counts of
// one scan (as long as the API's own count cache, app countTTL). A post
// written through this store makes them stale at once.
const termCountsTTL = 2 * time.Second

// termCountsMemo holds, on FerretDB only, the published-event count of
// every term, from one read of every published event.
//
// Why: no filter that selects the events of some terms is answered by
// FerretDB's SQL (TestPushdown), so each CountLabelEvents decoded every
// post in Go, and an event's render counts its terms: that scan was most
// of a read by ID. Reusing one scan for termCountsTTL across renders (and
// across concurrent callers, which wait for the one running) makes a read
// by ID a few _id look-ups. Writes of other processes show after at most
// termCountsTTL, as they do through the API's count cache. MongoDB keeps
// its one aggregation per call.
type termCountsMemo struct {
	mu      sync.Mutex
	gen     uint64 // bumped by every post write of this store
	counts  map[int64]int
	of      uint64 // the gen the counts were read at
	at      time.Time
	loading sync.Mutex
}

// postsWritten makes the memo stale.
func (m *termCountsMemo) postsWritten() {
	m.mu.Lock()
	m.gen++
	m.mu.Unlock()
}

// fresh returns the counts when they were read within termCountsTTL and
// after every post write up to generation min.
func (m *termCountsMemo) fresh(min uint64) (map[int64]int, bool) {
	if m.counts != nil && m.of >= min && time.Since(m.at) < termCountsTTL {
		return m.counts, true
	}
	return nil, false
}

// allTermCounts returns the published-event count of every term that a
// published event uses (an event listing a term twice counts once). The
// counts reflect every post write of this store that landed before the
// call.
func (s *aggregateReads) allTermCounts(ctx context.Context) (map[int64]int, error) {
	m := &s.termCounts
	m.mu.Lock()
	need := m.gen
	c, ok := m.fresh(need)
	m.mu.Unlock()
	if ok {
		return c, nil
	}
	// One read at a time: callers that wait take the counts of a read
	// that started after their call did.
	m.loading.Lock()
	defer m.loading.Unlock()
	m.mu.Lock()
	c, ok = m.fresh(need)
	gen := m.gen
	m.mu.Unlock()
	if ok {
		return c, nil
	}
	counts := map[int64]int{}
	published := bson.D{{Key: "kind", Value: repository.KindEvent}, {Key: "status", Value: repository.StatusPublish}}
	if err := s.scanTermEvents(ctx, published, func(int64) bool { return true }, counts); err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.counts, m.of, m.at = counts, gen, time.Now()
	m.mu.Unlock()
	return counts, nil
}
