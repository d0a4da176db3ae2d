package mongo

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/calendar/eventcal/repository"
)

// PlaceEvents returns the aggregates of the events linked to each venue or
// organizer among ids, in one aggregation: the multikey index on
// event.venues (or event.organizers) selects the linked events, and the
// server groups them by place and status, returning one small row per
// pair. The events are read inside the server only; none is sent or
// decoded. (A per-place constant cost, as the SQLite engine has, would
// need a second collection kept in step with every event write, which
// cannot be made atomic without transactions: see the package comment.)
func (s *Store) PlaceEvents(ctx context.Context, kind repository.PostKind, ids []int64) (map[int64]repository.PlaceEvents, error) {
	out := make(map[int64]repository.PlaceEvents, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	field := "event.venues"
	if kind == repository.KindOrganizer {
		field = "event.organizers"
	} else if kind != repository.KindVenue {
		return out, nil
	}
	pipeline := bson.A{
		bson.D{{Key: "$match", Value: bson.D{
			{Key: field, Value: bson.D{{Key: "$in", Value: ids}}},
			{Key: "kind", Value: repository.KindEvent},
			{Key: "status", Value: bson.D{{Key: "$in", Value: repository.Statuses}}},
		}}},
		bson.D{{Key: "$project", Value: bson.D{{Key: "_id", Value: 0}, {Key: "status", Value: 1}, {Key: field, Value: 1}, {Key: "event.start_utc", Value: 1}}}},
		bson.D{{Key: "$unwind", Value: "$" + field}},
		bson.D{{Key: "$match", Value: bson.D{{Key: field, Value: bson.D{{Key: "$in", Value: ids}}}}}},
		bson.D{{Key: "$group", Value: bson.D{
			{Key: "_id", Value: bson.D{{Key: "place", Value: "$" + field}, {Key: "status", Value: "$status"}}},
			{Key: "latest", Value: bson.D{{Key: "$max", Value: "$event.start_utc"}}},
		}}},
	}
	cur, err := s.posts.Aggregate(ctx, pipeline)
	if err != nil {
		return nil, fmt.Errorf("mongo: place events: %w", err)
	}
	var rows []struct {
		ID struct {
			Place  int64  `bson:"place"`
			Status string `bson:"status"`
		} `bson:"_id"`
		Latest time.Time `bson:"latest"`
	}
	if err := cur.All(ctx, &rows); err != nil {
		return nil, fmt.Errorf("mongo: place events: %w", err)
	}
	for _, r := range rows {
		pe, ok := out[r.ID.Place]
		if !ok {
			pe.LatestStart = map[string]int64{}
		}
		pe.LatestStart[r.ID.Status] = r.Latest.Unix()
		pe.HasEvents = pe.HasEvents || repository.CountsForHasEvents(r.ID.Status)
		out[r.ID.Place] = pe
	}
	return out, nil
}

// FindPostIDs returns the IDs of the posts matching q, ascending, fetching
// only _id.
func (s *Store) FindPostIDs(ctx context.Context, q repository.PostQuery) ([]int64, error) {
	filter, ok := postFilter(q, true)
	if !ok {
		return []int64{}, nil
	}
	opts := options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetProjection(bson.D{{Key: "_id", Value: 1}})
	if q.Limit > 0 {
		opts.SetLimit(int64(q.Limit))
	}
	cur, err := s.posts.Find(ctx, filter, opts)
	if err != nil {
		return nil, fmt.Errorf("mongo: find post IDs: %w", err)
	}
	var docs []struct {
		ID int64 `bson:"_id"`
	}
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("mongo: find post IDs: %w", err)
	}
	ids := make([]int64, len(docs))
	for i, d := range docs {
		ids[i] = d.ID
	}
	return ids, nil
}
