package mongo

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"

	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/repository/mongo/mongotest"
)

// TestRaiseSequencesLostRaise: a raise that a concurrent write undoes (on
// FerretDB v1 a draw reads the counter, and writes back the value it read
// plus one after the $max landed) is raised again, so RaiseSequences
// returns only once the counter holds at least the value asked for.
func TestRaiseSequencesLostRaise(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	var (
		s       *Store
		armed   atomic.Bool
		updates atomic.Int32
		mu      sync.Mutex
		undoErr error
	)
	monitor := &event.CommandMonitor{Succeeded: func(cctx context.Context, e *event.CommandSucceededEvent) {
		if e.CommandName != "update" || e.DatabaseName == "" {
			return
		}
		updates.Add(1)
		if !armed.CompareAndSwap(true, false) {
			return
		}
		// The first raise landed; a draw that read the counter before it
		// writes its lower value back now.
		_, err := s.counters.UpdateOne(context.WithoutCancel(cctx), bson.D{{Key: "_id", Value: seqPost}},
			bson.D{{Key: "$set", Value: bson.D{{Key: "value", Value: int64(3)}}}})
		mu.Lock()
		undoErr = err
		mu.Unlock()
	}}
	s, err := Open(ctx, mongotest.Start(t), mongotest.Database(t), WithCommandMonitor(monitor))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	for range 2 {
		if err := s.CreateRecord(ctx, &repository.Record{Kind: repository.KindVenue, Status: repository.StatusPublish,
			Title: repository.Text{"en": "v"}, Slug: repository.Text{"en": "v"}, Venue: &repository.VenueFields{}}); err != nil {
			t.Fatal(err)
		}
	}
	updates.Store(0)
	armed.Store(true)
	if err := s.RaiseSequences(ctx, map[string]int64{repository.SeqRecords: 500}); err != nil {
		t.Fatalf("RaiseSequences: %v", err)
	}
	mu.Lock()
	if undoErr != nil {
		t.Fatalf("undoing the raise: %v", undoErr)
	}
	mu.Unlock()
	if armed.Load() {
		t.Fatal("the raise sent no update command")
	}
	seqs, err := s.Sequences(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if seqs[repository.SeqRecords] != 500 {
		t.Errorf("records sequence after a raise undone once = %d; want 500", seqs[repository.SeqRecords])
	}
	// The raise, the undo and the raise again.
	if n := updates.Load(); n != 3 {
		t.Errorf("%d update commands; want 3 (raise, undo, raise again)", n)
	}
}
