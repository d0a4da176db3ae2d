package mongo

import (
	"context"
	"fmt"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/calendar/eventcal/repository"
)

// aggregateReads answers the aggregate reads of repository.EventLinks and
// AccountDocuments (counts over the events, computed by the server).
type aggregateReads struct{ *conn }

// PlaceEvents returns the aggregates of the events linked to each venue or
// organizer among ids, in one aggregation: the multikey index on
// event.venues (or event.organizers) selects the linked events, and the
// server groups them by place and status, returning one small row per
// pair. The events are read inside the server only; none is sent or
// decoded.
//
// On FerretDB v1, which lacks the $max accumulator and cannot $unwind a
// nested array, one find reads the same projected rows (status, start and
// links only) and they are grouped here. The tests run on FerretDB, so
// they exercise that path; the aggregation runs on MongoDB only.
//
// Unlike the SQLite engine's, the cost grows with the number of linked
// events (read in the server, without decoding documents): a constant cost
// would need a second collection kept in step with every event write,
// which cannot be made atomic without transactions (see the package
// comment).
func (s *aggregateReads) PlaceEvents(ctx context.Context, kind repository.Kind, ids []int64) (map[int64]repository.PlaceEvents, error) {
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
	match := bson.D{
		{Key: field, Value: bson.D{{Key: "$in", Value: ids}}},
		{Key: "kind", Value: repository.KindEvent},
		{Key: "status", Value: bson.D{{Key: "$in", Value: repository.Statuses}}},
	}
	project := bson.D{{Key: "_id", Value: 0}, {Key: "status", Value: 1}, {Key: field, Value: 1}, {Key: "event.start_utc", Value: 1}}
	want := make(map[int64]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	add := func(place int64, status string, start time.Time) {
		pe, ok := out[place]
		if !ok {
			pe.LatestStart = map[string]int64{}
		}
		if cur, ok := pe.LatestStart[status]; !ok || start.Unix() > cur {
			pe.LatestStart[status] = start.Unix()
		}
		pe.HasEvents = pe.HasEvents || repository.CountsForHasEvents(status)
		out[place] = pe
	}
	if !s.noMaxAccumulator {
		cur, err := s.posts.Aggregate(ctx, bson.A{
			bson.D{{Key: "$match", Value: match}},
			bson.D{{Key: "$project", Value: project}},
			bson.D{{Key: "$unwind", Value: "$" + field}},
			bson.D{{Key: "$match", Value: bson.D{{Key: field, Value: bson.D{{Key: "$in", Value: ids}}}}}},
			bson.D{{Key: "$group", Value: bson.D{
				{Key: "_id", Value: bson.D{{Key: "place", Value: "$" + field}, {Key: "status", Value: "$status"}}},
				{Key: "latest", Value: bson.D{{Key: "$max", Value: "$event.start_utc"}}},
			}}},
		})
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
			add(r.ID.Place, r.ID.Status, r.Latest)
		}
		return out, nil
	}
	// FerretDB v1: its $unwind of a nested array breaks the connection, so
	// read the same projected rows with find and group them here.
	cur, err := s.posts.Find(ctx, match, options.Find().SetProjection(project).SetBatchSize(oneReply))
	if err != nil {
		return nil, fmt.Errorf("mongo: place events: %w", err)
	}
	defer cur.Close(ctx)
	for cur.Next(ctx) {
		var row struct {
			Status string `bson:"status"`
			Event  struct {
				Venues     []int64   `bson:"venues"`
				Organizers []int64   `bson:"organizers"`
				StartUTC   time.Time `bson:"start_utc"`
			} `bson:"event"`
		}
		if err := cur.Decode(&row); err != nil {
			return nil, fmt.Errorf("mongo: place events: %w", err)
		}
		places := row.Event.Venues
		if kind == repository.KindOrganizer {
			places = row.Event.Organizers
		}
		for _, place := range places {
			if want[place] {
				add(place, row.Status, row.Event.StartUTC)
			}
		}
	}
	if err := cur.Err(); err != nil {
		return nil, fmt.Errorf("mongo: place events: %w", err)
	}
	return out, nil
}

// FindRecordIDs returns the IDs of the posts matching q, ascending, fetching
// only _id.
func (s *recordStore) FindRecordIDs(ctx context.Context, q repository.RecordQuery) ([]int64, error) {
	filter, ok := s.postFilter(q, true)
	if !ok {
		return []int64{}, nil
	}
	opts := options.Find().SetSort(bson.D{{Key: s.idField(), Value: 1}}).SetProjection(s.idProjection()).SetBatchSize(oneReply)
	if q.Limit > 0 {
		opts.SetLimit(int64(q.Limit))
	}
	cur, err := s.posts.Find(ctx, filter, opts)
	if err != nil {
		return nil, fmt.Errorf("mongo: find post IDs: %w", err)
	}
	ids, err := storedIDs(ctx, cur)
	if err != nil {
		return nil, fmt.Errorf("mongo: find post IDs: %w", err)
	}
	return ids, nil
}

// isFerretDB reports whether the server is FerretDB, whose buildInfo
// answer carries its own version. FerretDB v1 has no $max accumulator (only
// $count and $sum), and asking for it leaks a cursor inside FerretDB, so it
// is not tried.
func isFerretDB(ctx context.Context, db *mongo.Database) (bool, error) {
	var info bson.M
	if err := db.RunCommand(ctx, bson.D{{Key: "buildInfo", Value: 1}}).Decode(&info); err != nil {
		return false, fmt.Errorf("mongo: buildInfo: %w", err)
	}
	_, ok := info["ferretdbVersion"]
	return ok, nil
}

// oneReply is the batch size of finds whose whole answer should come in
// the first reply (no getMore) up to this many records (MongoDB also caps
// a reply at 16 MiB). The driver and FerretDB allocate by the batch size,
// so it is not "unlimited".
const oneReply = 10000

// replyFor returns the batch size that brings n records in the first
// reply and closes the cursor there: one more than n (a full batch would
// leave it open, costing a getMore that finds nothing).
func replyFor(n int) int32 { return int32(min(n, oneReply-1) + 1) }

// CountLabelEvents returns, for each of the terms ids used by at least one
// published event, how many published events use it, in one command
// whatever the number of terms (repository.TermEventCounter).
//
// On MongoDB it is one aggregation: the multikey indexes on
// event.categories and event.tags select the events, and the server
// groups them by term, returning one row per term. On FerretDB v1, which
// groups by a dotted path wrongly (TermCounts), one find reads the
// matching events' two lists (projected, all in the first reply) and they
// are counted here. Either way an event that lists a term twice counts
// once.
func (s *aggregateReads) CountLabelEvents(ctx context.Context, ids []int64) (map[int64]int, error) {
	out := map[int64]int{}
	ids = uniqueIDs(ids)
	if len(ids) == 0 {
		return out, nil
	}
	if s.ferretDB {
		// One scan, reused across renders (termcounts.go).
		all, err := s.allTermCounts(ctx)
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			if n := all[id]; n > 0 {
				out[id] = n
			}
		}
		return out, nil
	}
	in := bson.D{{Key: "$in", Value: ids}}
	match := bson.D{
		{Key: "kind", Value: repository.KindEvent},
		{Key: "status", Value: repository.StatusPublish},
		{Key: "$or", Value: bson.A{
			bson.D{{Key: "event.categories", Value: in}},
			bson.D{{Key: "event.tags", Value: in}},
		}},
	}
	if !s.noMaxAccumulator {
		orEmpty := func(path string) bson.D { return bson.D{{Key: "$ifNull", Value: bson.A{path, bson.A{}}}} }
		cur, err := s.posts.Aggregate(ctx, bson.A{
			bson.D{{Key: "$match", Value: match}},
			bson.D{{Key: "$project", Value: bson.D{{Key: "_id", Value: 0}, {Key: "t", Value: bson.D{
				{Key: "$setUnion", Value: bson.A{orEmpty("$event.categories"), orEmpty("$event.tags")}}}}}}},
			bson.D{{Key: "$unwind", Value: "$t"}},
			bson.D{{Key: "$match", Value: bson.D{{Key: "t", Value: in}}}},
			bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: "$t"}, {Key: "n", Value: bson.D{{Key: "$sum", Value: 1}}}}}},
		}, options.Aggregate().SetBatchSize(oneReply))
		if err != nil {
			return nil, fmt.Errorf("mongo: count term events: %w", err)
		}
		var rows []struct {
			ID int64 `bson:"_id"`
			N  int   `bson:"n"`
		}
		if err := cur.All(ctx, &rows); err != nil {
			return nil, fmt.Errorf("mongo: count term events: %w", err)
		}
		for _, r := range rows {
			out[r.ID] = r.N
		}
		return out, nil
	}
	want := make(map[int64]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	if err := s.scanTermEvents(ctx, match, func(id int64) bool { return want[id] }, out); err != nil {
		return nil, err
	}
	return out, nil
}

// uniqueIDs returns ids sorted, without repeats (a new slice).
func uniqueIDs(ids []int64) []int64 {
	out := slices.Clone(ids)
	slices.Sort(out)
	return slices.Compact(out)
}

// scanTermEvents reads the categories and tags of the events filter
// matches, one batch at a time, and adds one to out[id] per event that
// carries term id and keep(id) accepts. It is the plan for servers
// that answer an aggregation no faster than a scan (FerretDB).
func (s *aggregateReads) scanTermEvents(ctx context.Context, filter bson.D, keep func(int64) bool, out map[int64]int) error {
	cur, err := s.posts.Find(ctx, filter, options.Find().
		SetProjection(bson.D{{Key: "_id", Value: 0}, {Key: "event.categories", Value: 1}, {Key: "event.tags", Value: 1}}).
		SetBatchSize(oneReply))
	if err != nil {
		return fmt.Errorf("mongo: count term events: %w", err)
	}
	defer cur.Close(ctx)
	for cur.Next(ctx) {
		var row struct {
			Event struct {
				Categories []int64 `bson:"categories"`
				Tags       []int64 `bson:"tags"`
			} `bson:"event"`
		}
		if err := cur.Decode(&row); err != nil {
			return fmt.Errorf("mongo: count term events: %w", err)
		}
		seen := map[int64]bool{}
		for _, id := range append(row.Event.Categories, row.Event.Tags...) {
			if keep(id) && !seen[id] {
				seen[id] = true
				out[id]++
			}
		}
	}
	if err := cur.Err(); err != nil {
		return fmt.Errorf("mongo: count term events: %w", err)
	}
	return nil
}

// AccountDocuments returns the index documents of the author's events
// (repository.Store): one find on the (kind, author) index that returns
// each event's Documents only, summed here (FerretDB v1 lacks the
// accumulators an aggregation would use). Its cost grows with the
// account's events, which the bound it serves keeps small.
func (s *aggregateReads) AccountDocuments(ctx context.Context, author int64) (int, error) {
	filter := bson.D{{Key: "kind", Value: repository.KindEvent}, {Key: "author", Value: author}}
	opts := options.Find().SetProjection(bson.D{{Key: "_id", Value: 0}, {Key: "event.documents", Value: 1}})
	cur, err := s.posts.Find(ctx, filter, opts)
	if err != nil {
		return 0, fmt.Errorf("mongo: account documents: %w", err)
	}
	defer cur.Close(ctx)
	n := 0
	for cur.Next(ctx) {
		var row struct {
			Event struct {
				Documents int `bson:"documents"`
			} `bson:"event"`
		}
		if err := cur.Decode(&row); err != nil {
			return 0, fmt.Errorf("mongo: account documents: %w", err)
		}
		n += max(row.Event.Documents, 1)
	}
	if err := cur.Err(); err != nil {
		return 0, fmt.Errorf("mongo: account documents: %w", err)
	}
	return n, nil
}

// The MongoDB store counts labels' events in one command.
var _ repository.LabelEventCounter = (*Store)(nil)
