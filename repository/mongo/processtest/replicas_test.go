package processtest

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/calendar/eventcal/repository/mongo/mongotest"
)

// The load of TestReplicasSurviveSIGKILL is paced. Flat out, its reader
// kept FerretDB (most of it), the simulator and both replicas busy for as
// long as the test waited, and one wait is sometimes long: a webhook
// delivery claimed by the killed replica is sent again only when its
// claim expires (30 s), so that the test took 6 to 38 CPU-s from one run
// to the next (a round of the reader, listing both replicas, costs about
// 0.1 CPU-s, mostly FerretDB's). Paced, the writers still write all the
// time (a write takes longer than writerPace, so they are hardly slowed:
// the kill still lands during writes and the leader's batches; the pace
// only stops a writer spinning on its killed replica's refused
// connections), and the reader still polls both replicas back to back
// across the kill and the restart, while the writers write. Once they
// stop, nothing the reader guards changes any more except through the
// webhook redelivery: it goes on polling, once a second. What the test
// proves (no acknowledged write lost, no listed event vanishing, every
// message sent) does not depend on requests coming back to back.
//
// The kill may land while r1 holds an item lock (mongo's locks
// collection), for instance the one the store takes on FerretDB v1
// around one compare-and-set of a webhook delivery (casDelivery: a claim
// or a result). The restarted r1 (same REPLICA_ID, and it leads again, so
// it sends the messages) breaks the locks its dead predecessor held at
// once (mongo.WithReplica); before that, it waited out the lock lease
// (30 s), and one run in three or four took about 24 s more for "a
// message for every acknowledged event".
const (
	// writerPace is the least time between two writes of one writer.
	writerPace = 10 * time.Millisecond
	// readerPace is the least time between two rounds of the reader
	// (each lists both replicas) while the writers write: less than a
	// round takes.
	readerPace = 50 * time.Millisecond
	// readerSettledPace is the reader's pace once the writers stopped.
	readerSettledPace = time.Second
)

// paced waits for tick's next tick and reports true, or reports false
// once ctx ends.
func paced(ctx context.Context, tick *time.Ticker) bool {
	select {
	case <-ctx.Done():
		return false
	case <-tick.C:
		return true
	}
}

// TestReplicasSurviveSIGKILL runs two replicas of this version on one
// FerretDB and one Meilisearch simulator, writes through both without
// stopping (paced: writerPace, readerPace), kills the leader with SIGKILL while its sync worker and webhook
// sender are busy, and restarts it. Every acknowledged write must end up
// listed on both replicas (polled until the test's deadline: the lag
// target is not asserted as a time), a reader polling both must never see
// a listed event vanish, and the webhook receiver must get an
// "event.created" message for every acknowledged event, duplicates only
// under one message ID.
func TestReplicasSurviveSIGKILL(t *testing.T) {
	skipShort(t)
	t.Parallel()
	root := repoRoot(t)
	eventcal := binary(t, root, ".")
	srv := startServers(t, root)
	db := mongotest.Database(t)
	ctx := t.Context()
	leader := func() string {
		var l struct {
			Holder string `bson:"holder"`
		}
		srv.client.Database(db).Collection("leases").FindOne(ctx, bson.D{{Key: "name", Value: "leader"},
			{Key: "term", Value: bson.D{{Key: "$gt", Value: 0}, {Key: "$lt", Value: int64(1) << 62}}}},
			options.FindOne().SetSort(bson.D{{Key: "term", Value: -1}})).Decode(&l)
		return l.Holder
	}

	r1 := startReplica(t, srv, eventcal, "r1", db)
	eventually(t, "r1 leads", func() bool { return leader() == "r1" }, r1)
	r2 := startReplica(t, srv, eventcal, "r2", db)
	replicas := []*replica{r1, r2}
	rc := newReceiver(t)
	r2.must(t, "POST", "/admin/webhooks", map[string]any{"url": rc.URL, "events": []string{"event.created"}})

	var (
		mu    sync.Mutex
		acked = map[int64]bool{}
		// r1 is restarted: its process changes under the writers.
		r1mu sync.RWMutex
	)
	current := func(i int) *replica {
		r1mu.RLock()
		defer r1mu.RUnlock()
		return replicas[i]
	}
	var day atomic.Int64
	wctx, stopWriters := context.WithCancel(ctx)
	var writers sync.WaitGroup
	perWriter := make([]atomic.Int64, 2)
	for w := range 2 {
		writers.Add(1)
		go func() {
			defer writers.Done()
			tick := time.NewTicker(writerPace)
			defer tick.Stop()
			for n := 0; wctx.Err() == nil; n++ {
				if !paced(wctx, tick) {
					return
				}
				code, out, err := current(w).call("POST", "/events", eventBody(fmt.Sprintf("Replica %d write %d", w, n), int(day.Add(1))))
				if err != nil || code != http.StatusCreated {
					continue // down (killed) or refused: not acknowledged
				}
				mu.Lock()
				acked[int64(out["id"].(float64))] = true
				mu.Unlock()
				perWriter[w].Add(1)
			}
		}()
	}

	// The reader: once listed on a replica, an event stays listed there.
	var (
		vanished []string
		vmu      sync.Mutex
	)
	var polls atomic.Int64 // the reader's rounds, logged
	rctx, stopReader := context.WithCancel(ctx)
	var readerDone sync.WaitGroup
	readerDone.Add(1)
	go func() {
		defer readerDone.Done()
		seen := []map[int64]bool{{}, {}}
		tick := time.NewTicker(readerPace)
		defer tick.Stop()
		settled := wctx.Done()
		for paced(rctx, tick) {
			select {
			case <-settled:
				tick.Reset(readerSettledPace)
				settled = nil
			default:
			}
			polls.Add(1)
			for i := range 2 {
				ids, err := current(i).listedIDs()
				if err != nil {
					continue // down
				}
				for id := range seen[i] {
					if !ids[id] {
						vmu.Lock()
						vanished = append(vanished, fmt.Sprintf("event %d vanished from the list of %s", id, current(i).id))
						vmu.Unlock()
					}
				}
				for id := range ids {
					seen[i][id] = true
				}
			}
		}
	}()

	atLeast := func(n int64) func() bool {
		return func() bool { return perWriter[0].Load() >= n && perWriter[1].Load() >= n }
	}
	eventually(t, "writes through both replicas", atLeast(15), r1, r2)
	// Kill the leader while writes (and so its batches) keep coming.
	r1.kill()
	before, roundsAtKill := perWriter[1].Load(), polls.Load()
	eventually(t, "writes through r2 while r1 is down", func() bool { return perWriter[1].Load() >= before+5 }, r2)
	// At least one whole round of the reader while r1 is down (the round
	// under way at the kill may have started before it).
	eventually(t, "the reader polls both replicas while r1 is down", func() bool { return polls.Load() >= roundsAtKill+2 }, r2)
	r1mu.Lock()
	r1.run(t) // same REPLICA_ID: takes its lease back at once
	r1mu.Unlock()
	eventually(t, "writes through the restarted r1", atLeast(30), r1, r2)
	stopWriters()
	writers.Wait()

	mu.Lock()
	want := make([]int64, 0, len(acked))
	for id := range acked {
		want = append(want, id)
	}
	mu.Unlock()
	sort.Slice(want, func(i, j int) bool { return want[i] < want[j] })
	for _, r := range replicas {
		eventually(t, "every acknowledged write listed on "+r.id, func() bool {
			ids, err := r.listedIDs()
			if err != nil {
				return false
			}
			for _, id := range want {
				if !ids[id] {
					return false
				}
			}
			return true
		}, r1, r2)
	}
	eventually(t, "a message for every acknowledged event", func() bool {
		got := map[int64]bool{}
		for _, m := range rc.messages() {
			got[m.Item] = true
		}
		for _, id := range want {
			if !got[id] {
				return false
			}
		}
		return true
	}, r1, r2)
	stopReader()
	readerDone.Wait()
	for _, v := range vanished {
		t.Error(v)
	}
	ids := map[hook]bool{}
	msgIDs := map[string]map[string]bool{}
	for _, m := range rc.messages() {
		key := fmt.Sprintf("%s %d", m.Type, m.Item)
		if msgIDs[key] == nil {
			msgIDs[key] = map[string]bool{}
		}
		msgIDs[key][m.ID] = true
		ids[m] = true
	}
	for key, set := range msgIDs {
		if len(set) > 1 {
			t.Errorf("%s was sent under %d message IDs: %v", key, len(set), set)
		}
	}
	t.Logf("%d acknowledged events, %d messages (%d distinct), %d reader rounds, leader at the end: %s", len(want), len(rc.messages()), len(ids), polls.Load(), leader())
}
