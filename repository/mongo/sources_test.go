package mongo

import (
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/repository/mongo/mongotest"
)

// TestSourceRunIDsRedrawn: a run ID the counter hands out again (as
// FerretDB v1's non-atomic $inc may) is refused by the _id index and
// drawn anew, so no run is overwritten and IDs stay distinct and
// increasing; no ID claim is kept per run.
func TestSourceRunIDsRedrawn(t *testing.T) {
	t.Parallel()
	s := leaseStore(t, mongotest.Start(t))
	ctx := t.Context()
	src := &repository.Source{URL: "https://a.example/cal.ics", Format: repository.SourceICS}
	if err := s.CreateSource(ctx, src); err != nil {
		t.Fatal(err)
	}
	started := time.Date(2031, 3, 14, 10, 0, 0, 0, time.UTC)
	var ids []int64
	for i := range 2 {
		r := &repository.SourceRun{SourceID: src.ID, Status: repository.RunSucceeded, Trigger: "api", Started: started.Add(time.Duration(i) * time.Minute)}
		if err := s.CreateSourceRun(ctx, r); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	// The counter goes back: the next two draws are taken.
	if _, err := s.counters.UpdateOne(ctx, bson.D{{Key: "_id", Value: seqSourceRun}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "value", Value: int64(0)}}}}); err != nil {
		t.Fatal(err)
	}
	r := &repository.SourceRun{SourceID: src.ID, Status: repository.RunRunning, Trigger: "schedule", Started: started.Add(time.Hour)}
	if err := s.CreateSourceRun(ctx, r); err != nil {
		t.Fatalf("CreateSourceRun after the counter went back: %v", err)
	}
	if r.ID <= ids[1] {
		t.Errorf("new run ID %d, want past %v", r.ID, ids)
	}
	runs, err := s.ListSourceRuns(ctx, src.ID, 0)
	if err != nil || len(runs) != 3 || runs[0].ID != r.ID || runs[1].ID != ids[1] || runs[2].ID != ids[0] {
		t.Fatalf("runs = %+v, %v", runs, err)
	}
	if runs[1].Status != repository.RunSucceeded || runs[1].Trigger != "api" {
		t.Errorf("an earlier run was overwritten: %+v", runs[1])
	}
	if n, err := s.claims.CountDocuments(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$regex", Value: "^" + seqSourceRun + ":"}}}}); err != nil || n != 0 {
		t.Errorf("%d ID claims of runs, %v; want none", n, err)
	}
}
