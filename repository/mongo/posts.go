package mongo

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/calendar/eventcal/repository"
)

// recordStore is the record part of repository.Store (events, venues,
// organizers and images; the posts collection).
type recordStore struct{ *conn }

// postOps adapts the shared write path to posts.
func (s *recordStore) postOps() itemOps[repository.Record] {
	return itemOps[repository.Record]{
		scope:   repository.MarkPost,
		seq:     seqPost,
		coll:    s.posts,
		id:      func(p *repository.Record) *int64 { return &p.ID },
		rev:     func(p *repository.Record) *int64 { return &p.Revision },
		slugs:   func(p *repository.Record) *repository.Text { return &p.Slug },
		space:   func(p *repository.Record) slugSpace { return s.postSlugs(p.Kind) },
		prepare: preparePost,
		fix:     fixPost,
		pin: func(p, old *repository.Record) {
			p.ID, p.Kind = old.ID, old.Kind
		},
	}
}

// preparePost brings p into its stored form: times in UTC whole seconds and
// the link lists of an event as arrays (never null), so that filters and
// $pull-style edits see an array and round trips compare equal.
func preparePost(p *repository.Record) {
	p.Date, p.Modified = storedTime(p.Date), storedTime(p.Modified)
	if e := p.Event; e != nil {
		e.StartUTC, e.EndUTC = storedTime(e.StartUTC), storedTime(e.EndUTC)
		fixEvent(e)
	}
}

// fixPost normalises a post read from the database.
func fixPost(p *repository.Record) {
	p.Date, p.Modified = p.Date.UTC(), p.Modified.UTC()
	if e := p.Event; e != nil {
		e.StartUTC, e.EndUTC = e.StartUTC.UTC(), e.EndUTC.UTC()
		fixEvent(e)
	}
}

// fixEvent turns nil link lists into empty ones.
func fixEvent(e *repository.EventFields) {
	for _, l := range []*[]int64{&e.Categories, &e.Tags, &e.Venues, &e.Organizers} {
		if *l == nil {
			*l = []int64{}
		}
	}
}

// CreateRecord assigns p.ID (when 0), makes its slugs unique, stores it and
// records an index mark. p is updated in place.
func (s *recordStore) CreateRecord(ctx context.Context, p *repository.Record) error {
	return createItem(ctx, s.conn, s.postOps(), p)
}

// GetRecord returns the post with this ID or ErrNotFound.
func (s *recordStore) GetRecord(ctx context.Context, id int64) (*repository.Record, error) {
	var p repository.Record
	if err := getItem(ctx, s.conn, s.postOps(), id, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// GetRecords returns the posts that exist among ids, keyed by ID.
func (s *recordStore) GetRecords(ctx context.Context, ids []int64) (map[int64]*repository.Record, error) {
	// On MongoDB one command whatever the number of IDs: repeats dropped,
	// every match in the first reply. On FerretDB one look-up per ID.
	return getItems(ctx, s.conn, s.postOps(), ids)
}

// GetRecordBySlug returns the post of this kind whose slug in lang is slug.
func (s *recordStore) GetRecordBySlug(ctx context.Context, kind repository.Kind, lang, slug string) (*repository.Record, error) {
	id, err := s.slugOwner(ctx, s.postSlugs(kind), lang, slug)
	if err != nil {
		return nil, err
	}
	p, err := s.GetRecord(ctx, id)
	if err != nil {
		return nil, err
	}
	// A reservation may be in flight (its write has not landed) or a
	// leftover: only the post itself proves the slug.
	if p.Kind != kind || p.Slug[lang] != slug {
		return nil, repository.ErrNotFound
	}
	return p, nil
}

// UpdateRecord reads the post, calls fn on it and stores the result with the
// next revision, making changed slugs unique again.
func (s *recordStore) UpdateRecord(ctx context.Context, id int64, fn func(p *repository.Record) error) (*repository.Record, error) {
	p, _, err := updateItem(ctx, s.conn, s.postOps(), id, func(p *repository.Record) (bool, error) {
		return true, fn(p)
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// DeleteRecord removes the post and its slugs permanently and records an
// index mark.
func (s *recordStore) DeleteRecord(ctx context.Context, id int64) error {
	_, err := deleteItem(ctx, s.conn, s.postOps(), id)
	return err
}

// FindRecords returns the posts matching q, by ID ascending.
func (s *recordStore) FindRecords(ctx context.Context, q repository.RecordQuery) ([]*repository.Record, error) {
	filter, ok := s.postFilter(q, true)
	if !ok {
		return []*repository.Record{}, nil
	}
	opts := findPostsOptions(q.Limit)
	if s.numeric() {
		opts.SetSort(asc("_id"))
	}
	return findItems(ctx, s.postOps(), filter, opts)
}

// findPostsOptions returns the find options of FindPosts: by id
// ascending, limited to limit when limit > 0. Under a kind filter the
// index pageByKindIndex serves this order.
func findPostsOptions(limit int) *options.FindOptionsBuilder {
	opts := options.Find().SetSort(asc(fieldID)).SetBatchSize(oneReply)
	if limit > 0 {
		opts.SetLimit(int64(limit))
	}
	return opts
}

// CountRecords returns how many posts match q, ignoring AfterID and Limit.
func (s *recordStore) CountRecords(ctx context.Context, q repository.RecordQuery) (int, error) {
	filter, ok := s.postFilter(q, false)
	if !ok {
		return 0, nil
	}
	n, err := s.posts.CountDocuments(ctx, filter)
	if err != nil {
		return 0, fmt.Errorf("mongo: count posts: %w", err)
	}
	return int(n), nil
}

// postFilter is the function postFilter for the layout s writes (the
// IDs on _id in the numeric one; migrate.go).
func (s *recordStore) postFilter(q repository.RecordQuery, paging bool) (bson.D, bool) {
	f, ok := postFilter(q, paging)
	if s.numeric() {
		for i := range f {
			if f[i].Key == fieldID {
				f[i].Key = "_id"
			}
		}
	}
	return f, ok
}

// postFilter translates q into a filter. It returns false when q can match
// nothing (a title filter in an unusable language). paging adds AfterID.
func postFilter(q repository.RecordQuery, paging bool) (bson.D, bool) {
	f := bson.D{}
	if q.Kind != "" {
		f = append(f, bson.E{Key: "kind", Value: q.Kind})
	}
	if status := inNin(q.Statuses, q.ExcludeStatuses); len(status) > 0 {
		f = append(f, bson.E{Key: "status", Value: status})
	}
	var id bson.D
	if len(q.IDs) > 0 {
		id = append(id, bson.E{Key: "$in", Value: q.IDs})
	}
	if paging && q.AfterID != 0 {
		id = append(id, bson.E{Key: "$gt", Value: q.AfterID})
	}
	if len(id) > 0 {
		f = append(f, bson.E{Key: fieldID, Value: id})
	}
	for _, l := range []struct {
		field string
		ids   []int64
	}{
		{"event.venues", q.VenueIDs},
		{"event.organizers", q.OrganizerIDs},
		{"event.categories", q.CategoryIDs},
		{"event.tags", q.TagIDs},
	} {
		if len(l.ids) > 0 {
			f = append(f, bson.E{Key: l.field, Value: bson.D{{Key: "$in", Value: l.ids}}})
		}
	}
	if q.Title != "" {
		if !validFieldName(q.TitleLang) {
			return nil, false
		}
		f = append(f, bson.E{Key: "title." + q.TitleLang, Value: equalFoldRegex(q.Title)})
	}
	if q.ImageURL != "" {
		// Only images have an image sub-document.
		f = append(f, bson.E{Key: "image.url", Value: q.ImageURL})
	}
	if q.Parent != 0 {
		f = append(f, bson.E{Key: "event.parent", Value: q.Parent})
	}
	return f, true
}

// inNin returns {$in: in, $nin: nin}, leaving out empty lists.
func inNin(in, nin []string) bson.D {
	var d bson.D
	if len(in) > 0 {
		d = append(d, bson.E{Key: "$in", Value: in})
	}
	if len(nin) > 0 {
		d = append(d, bson.E{Key: "$nin", Value: nin})
	}
	return d
}

// equalFoldRegex returns a regular expression matching exactly s, ignoring
// case. The value is quoted with regexp.QuoteMeta, whose escapes (a
// backslash before each of \.+*?()|[]{}^$) mean the literal character in
// PCRE (MongoDB) and in Go's RE2 syntax (FerretDB) alike. \z, not $, ends
// it: in PCRE $ also matches before a final newline.
func equalFoldRegex(s string) bson.Regex {
	return bson.Regex{Pattern: `^` + regexp.QuoteMeta(s) + `\z`, Options: "i"}
}

// UnlinkRecord removes venue or organizer id from every event that links it
// and records index marks for those events. It returns the changed events.
func (s *recordStore) UnlinkRecord(ctx context.Context, id int64) ([]int64, error) {
	// Venues and organizers share the post sequence, so id is in at most
	// one of the two lists and both can be searched.
	filter := bson.D{
		{Key: "kind", Value: repository.KindEvent},
		{Key: "$or", Value: bson.A{
			bson.D{{Key: "event.venues", Value: id}},
			bson.D{{Key: "event.organizers", Value: id}},
		}},
	}
	return s.editEvents(ctx, filter, func(e *repository.EventFields) bool {
		a, b := removeID(&e.Venues, id), removeID(&e.Organizers, id)
		return a || b
	})
}

// editEvents applies edit to every event matching filter (each under its
// lock, with marks) and returns the IDs of the events it changed.
func (s *recordStore) editEvents(ctx context.Context, filter bson.D, edit func(e *repository.EventFields) bool) ([]int64, error) {
	cur, err := s.posts.Find(ctx, filter,
		options.Find().SetProjection(bson.D{{Key: fieldID, Value: 1}}).SetSort(bson.D{{Key: s.idField(), Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("mongo: find linked events: %w", err)
	}
	ids, err := storedIDs(ctx, cur)
	if err != nil {
		return nil, fmt.Errorf("mongo: find linked events: %w", err)
	}
	changed := []int64{}
	for _, id := range ids {
		_, ok, err := updateItem(ctx, s.conn, s.postOps(), id, func(p *repository.Record) (bool, error) {
			return p.Event != nil && edit(p.Event), nil
		})
		switch {
		case errors.Is(err, repository.ErrNotFound):
			continue // deleted meanwhile
		case err != nil:
			return changed, err
		case ok:
			changed = append(changed, id)
		}
	}
	return changed, nil
}

// removeID removes every id from *ids and reports whether there was one.
func removeID(ids *[]int64, id int64) bool {
	n := len(*ids)
	*ids = slices.DeleteFunc(*ids, func(v int64) bool { return v == id })
	return len(*ids) != n
}
