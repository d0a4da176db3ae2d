package mongo

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/calendar/eventcal/repository"
)

// maxUpdateAttempts bounds the retries of an update whose revision check
// failed. Under the item lock that only happens when a lock holder outlived
// its lease, so a handful of attempts is plenty.
const maxUpdateAttempts = 10

// itemOps adapts the write path shared by posts and terms (create, update,
// delete with locks, slug reservations and marks) to one of them.
type itemOps[T any] struct {
	scope repository.MarkKind // lock, mark and slug namespace
	seq   string              // ID sequence
	coll  *mongo.Collection
	id    func(*T) *int64
	rev   func(*T) *int64
	slugs func(*T) *repository.Text
	space func(*T) slugSpace
	// prepare brings a record into its stored form before a write.
	prepare func(*T)
	// fix normalises a record after reading it.
	fix func(*T)
	// pin restores in v what an update function must not change.
	pin func(v, old *T)
}

// createItem stores the new record v: assigns its ID, reserves its slugs,
// marks it and inserts it at revision 1 (with an explicit ID, at its own
// revision when that is above 0). On failure v is left as it was.
func createItem[T any](ctx context.Context, s *conn, ops itemOps[T], v *T) (err error) {
	idp, slugp, revp := ops.id(v), ops.slugs(v), ops.rev(v)
	origID, origSlugs, origRev := *idp, *slugp, *revp
	defer func() {
		if err != nil {
			*idp, *slugp, *revp = origID, origSlugs, origRev
		}
	}()
	// Refused before anything is written (not even an ID drawn), measured
	// as the caller gave it, as every engine measures it.
	if err := repository.CheckRecordSize(v); err != nil {
		return fmt.Errorf("mongo: create %s: %w", ops.scope, err)
	}
	ops.prepare(v)
	*slugp = slugp.Clone()
	if err := s.assignID(ctx, ops.seq, idp); err != nil {
		return err
	}
	id := *idp
	l, err := s.lock(ctx, itemKey(ops.scope, id))
	if err != nil {
		return err
	}
	defer s.unlock(ctx, l)

	if origID != 0 {
		// An explicit ID may be held by a record: refuse before touching
		// anything. The slug reservations of that record carry its ID as
		// their owner, so claimSlugs would count them as this create's
		// own, and a failed insert would not be the only sign of the
		// clash. (The insert's duplicate key below still decides when the
		// record appears after this check, and then releases only the
		// reservations this create inserted.)
		_, err := s.readItem(ctx, ops.coll, id, bson.D{{Key: "revision", Value: 1}})
		switch {
		case err == nil:
			return fmt.Errorf("mongo: create %s %d: %s %d exists: %w", ops.scope, id, ops.scope, id, repository.ErrDuplicate)
		case !isNoDocuments(err):
			return fmt.Errorf("mongo: create %s %d: %w", ops.scope, id, err)
		}
	}
	added, err := s.claimSlugs(ctx, ops.space(v), id, nil, *slugp)
	if err != nil {
		return err
	}
	if origID == 0 || origRev <= 0 {
		*revp = 1 // an explicit ID keeps a revision above 0 (a load)
	}
	seq, err := s.markBefore(ctx, ops.scope, id)
	if err == nil {
		var doc bson.Raw
		if doc, err = s.encode(v); err == nil {
			if err = repository.CheckDocumentSize(doc, repository.MaxDocumentBytes); err == nil {
				_, err = ops.coll.InsertOne(ctx, doc)
			} else {
				doc = nil
			}
		}
		if err != nil && doc != nil {
			// The insert may have landed although it failed: its reply
			// was lost, or a retry of it found its own document. Only a
			// re-read tells, and nothing is undone before it did.
			switch landed, rerr := s.landedAs(ctx, ops.coll, keyFilter(doc), doc); {
			case rerr != nil:
				return fmt.Errorf("mongo: create %s %d: %w (outcome unknown, nothing undone: %v)", ops.scope, id, err, rerr)
			case landed:
				err = nil
			}
		}
		if mongo.IsDuplicateKeyError(err) {
			err = fmt.Errorf("%s %d exists: %w", ops.scope, id, asDuplicate(err))
		}
	}
	if err != nil {
		s.releaseSlugKeys(ctx, id, added)
		return fmt.Errorf("mongo: create %s %d: %w", ops.scope, id, err)
	}
	s.written(ops.scope)
	s.markAfter(ctx, ops.scope, id, seq)
	return nil
}

// itemIO holds the document-level steps the item writes share (replace
// under a revision, read back what landed).
type itemIO struct{ *conn }

// written records that a write of scope landed (term counts reused on
// FerretDB are then stale).
func (s *itemIO) written(scope repository.MarkKind) {
	if scope == repository.MarkPost {
		s.termCounts.postsWritten()
	}
}

// getItem reads the record with this ID into v.
//
// The record may be stored in either layout (migrate.go).
func getItem[T any](ctx context.Context, s *conn, ops itemOps[T], id int64, v *T) error {
	raw, err := s.readItem(ctx, ops.coll, id, nil)
	if err == nil {
		err = decodeItem(raw, v)
	}
	switch {
	case isNoDocuments(err):
		return repository.ErrNotFound
	case err != nil:
		return fmt.Errorf("mongo: get %s %d: %w", ops.scope, id, err)
	}
	ops.fix(v)
	return nil
}

// mongoFindOption is an option of Collection.Find.
type mongoFindOption = options.Lister[options.FindOptions]

// findItems returns the records matching filter, by ID ascending.
func findItems[T any](ctx context.Context, ops itemOps[T], filter any, opts ...mongoFindOption) ([]*T, error) {
	cur, err := ops.coll.Find(ctx, filter, opts...)
	if err != nil {
		return nil, fmt.Errorf("mongo: find %ss: %w", ops.scope, err)
	}
	defer cur.Close(ctx)
	var out []*T
	// A record stored in both layouts (an interrupted conversion,
	// migrate.go) is listed once, in its later revision.
	var at map[int64]int
	for cur.Next(ctx) {
		v := new(T)
		if err := decodeItem(cur.Current, v); err != nil {
			return nil, fmt.Errorf("mongo: find %ss: %w", ops.scope, err)
		}
		ops.fix(v)
		if id := *ops.id(v); id != 0 {
			if i, dup := at[id]; dup {
				if *ops.rev(v) > *ops.rev(out[i]) {
					out[i] = v
				}
				continue
			}
			if at == nil {
				at = make(map[int64]int)
			}
			at[id] = len(out)
		}
		out = append(out, v)
	}
	if err := cur.Err(); err != nil {
		return nil, fmt.Errorf("mongo: find %ss: %w", ops.scope, err)
	}
	return out, nil
}

// getItems returns the records among ids (repeats allowed), keyed by ID:
// one find on MongoDB, one per ID on FerretDB (findByIDs).
func getItems[T any](ctx context.Context, s *conn, ops itemOps[T], ids []int64) (map[int64]*T, error) {
	out := make(map[int64]*T, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	raws, err := s.findByIDs(ctx, ops.coll, uniqueIDs(ids), nil)
	if err != nil {
		return nil, fmt.Errorf("mongo: get %ss: %w", ops.scope, err)
	}
	for _, raw := range raws {
		v := new(T)
		if err := decodeItem(raw, v); err != nil {
			return nil, fmt.Errorf("mongo: get %ss: %w", ops.scope, err)
		}
		ops.fix(v)
		out[*ops.id(v)] = v
	}
	return out, nil
}

// errRetry asks updateItem for another attempt.
var errRetry = errors.New("mongo: revision changed, retry")

// updateItem reads the record, lets fn change it and writes it back with
// the next revision. fn returns false when it changed nothing; no write
// happens then (and the record is returned as read). The result reports
// whether a write happened.
func updateItem[T any](ctx context.Context, s *conn, ops itemOps[T], id int64, fn func(*T) (bool, error)) (*T, bool, error) {
	for attempt := 0; ; attempt++ {
		v, changed, err := updateOnce(ctx, s, ops, id, fn)
		if !errors.Is(err, errRetry) {
			return v, changed, err
		}
		if attempt+1 >= maxUpdateAttempts {
			return nil, false, fmt.Errorf("mongo: update %s %d: gave up after %d attempts: concurrent writers", ops.scope, id, maxUpdateAttempts)
		}
		if err := sleep(ctx, backoff(attempt)); err != nil {
			return nil, false, fmt.Errorf("mongo: update %s %d: %w", ops.scope, id, err)
		}
	}
}

// updateOnce is one attempt of updateItem, under the item's lock.
func updateOnce[T any](ctx context.Context, s *conn, ops itemOps[T], id int64, fn func(*T) (bool, error)) (*T, bool, error) {
	l, err := s.lock(ctx, itemKey(ops.scope, id))
	if err != nil {
		return nil, false, err
	}
	defer s.unlock(ctx, l)

	raw, err := s.readItem(ctx, ops.coll, id, nil)
	if err == nil && !s.numeric() && isNumericKey(raw) {
		// A straggler in the numeric layout (migrate.go): converted
		// first, under this lock, then updated.
		if err = s.convertLocked(ctx, ops.coll, raw); err == nil {
			raw, err = ops.coll.FindOne(ctx, idFilter(id)).Raw()
		}
	}
	switch {
	case isNoDocuments(err):
		return nil, false, repository.ErrNotFound
	case err != nil:
		return nil, false, fmt.Errorf("mongo: update %s %d: read: %w", ops.scope, id, err)
	}
	key := raw.Lookup("_id")
	// Decoding twice gives fn a deep copy to change while old stays intact.
	var old, v T
	if err := decodeItem(raw, &old); err != nil {
		return nil, false, fmt.Errorf("mongo: update %s %d: %w", ops.scope, id, err)
	}
	if err := decodeItem(raw, &v); err != nil {
		return nil, false, fmt.Errorf("mongo: update %s %d: %w", ops.scope, id, err)
	}
	ops.fix(&old)
	ops.fix(&v)
	changed, err := fn(&v)
	if err != nil || !changed {
		if err != nil {
			return nil, false, err
		}
		return &old, false, nil
	}
	ops.pin(&v, &old)
	if err := repository.CheckRecordSize(&v); err != nil {
		return nil, false, fmt.Errorf("mongo: update %s %d: %w", ops.scope, id, err)
	}
	ops.prepare(&v)
	oldRev := *ops.rev(&old)
	*ops.rev(&v) = oldRev + 1
	slugp := ops.slugs(&v)
	*slugp = slugp.Clone()
	sp := ops.space(&v)

	added, err := s.claimSlugs(ctx, sp, id, *ops.slugs(&old), *slugp)
	if err != nil {
		return nil, false, err
	}
	seq, err := s.markBefore(ctx, ops.scope, id)
	if err != nil {
		s.releaseSlugKeys(ctx, id, added)
		return nil, false, err
	}
	doc, err := encodeItem(&v)
	if err == nil && key.Type != bson.TypeString {
		// Stored in the numeric layout: replaced in it (migrate.go).
		doc, err = numericIDForm(doc)
	}
	if err == nil {
		err = repository.CheckDocumentSize(doc, repository.MaxDocumentBytes)
	}
	if err != nil {
		s.releaseSlugKeys(ctx, id, added)
		return nil, false, fmt.Errorf("mongo: update %s %d: %w", ops.scope, id, err)
	}
	matched, err := s.replaceItem(ctx, ops.coll, key, oldRev, doc)
	if err != nil {
		// The replace may have landed although it failed (a lost
		// reply): re-read before releasing the slugs it uses.
		switch landed, rerr := s.landedAs(ctx, ops.coll, bson.D{{Key: "_id", Value: key}}, doc); {
		case rerr != nil:
			return nil, false, fmt.Errorf("mongo: update %s %d: write: %w (outcome unknown, nothing undone: %v)", ops.scope, id, err, rerr)
		case landed:
			matched, err = true, nil
		}
	}
	if err != nil || !matched {
		s.releaseSlugKeys(ctx, id, added)
		if err != nil {
			return nil, false, fmt.Errorf("mongo: update %s %d: write: %w", ops.scope, id, asDuplicate(err))
		}
		return nil, false, errRetry
	}
	s.written(ops.scope)
	s.releaseOldSlugs(ctx, sp, id, *ops.slugs(&old), *slugp)
	s.markAfter(ctx, ops.scope, id, seq)
	return &v, true, nil
}

// replaceItem stores doc (the record in the layout of its _id key:
// migrate.go) if its revision is still rev and reports whether it did.
// The caller holds the item's lock.
//
// The revision check is what makes the write safe on MongoDB even if this
// holder outlived its lock lease: there {_id, revision} is one atomic
// command on the _id index. FerretDB v1 answers that filter by decoding
// every record of the collection, and its replace is not atomic anyway
// (it reads, compares in Go and writes back by _id): there the revision is
// read by idFilter, compared here and the record replaced by idFilter, two
// look-ups that are as safe as FerretDB's own compare-and-replace.
func (s *itemIO) replaceItem(ctx context.Context, coll *mongo.Collection, key bson.RawValue, rev int64, doc bson.Raw) (bool, error) {
	filter := bson.D{{Key: "_id", Value: key}, {Key: "revision", Value: rev}}
	if s.ferretDB {
		var cur struct {
			Revision int64 `bson:"revision"`
		}
		err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: key}}, options.FindOne().SetProjection(bson.D{{Key: "revision", Value: 1}})).Decode(&cur)
		switch {
		case isNoDocuments(err):
			return false, nil
		case err != nil:
			return false, err
		case cur.Revision != rev:
			return false, nil
		}
		filter = bson.D{{Key: "_id", Value: key}}
	}
	res, err := coll.ReplaceOne(ctx, filter, doc)
	if err != nil {
		return false, err
	}
	return res.MatchedCount > 0, nil
}

// deleteItem removes the record with this ID and its slug reservations and
// returns it as it was.
func deleteItem[T any](ctx context.Context, s *conn, ops itemOps[T], id int64) (*T, error) {
	key := itemKey(ops.scope, id)
	l, err := s.lock(ctx, key)
	if err != nil {
		return nil, err
	}
	defer s.unlock(ctx, l)

	// Either layout (migrate.go). The record read is also what a delete
	// whose reply was lost returns once a re-read shows it gone.
	found, err := s.readItem(ctx, ops.coll, id, nil)
	switch {
	case isNoDocuments(err):
		return nil, repository.ErrNotFound
	case err != nil:
		return nil, fmt.Errorf("mongo: delete %s: %w", key, err)
	}
	seq, err := s.markBefore(ctx, ops.scope, id)
	if err != nil {
		return nil, err
	}
	var gone T
	// Both forms: one left by an interrupted conversion must not be
	// converted back to life later.
	err = s.deleteBothForms(ctx, ops.coll, id)
	if err != nil {
		// The delete may have landed although it failed: a re-read that
		// finds nothing (under the item lock) confirms it.
		switch _, rerr := s.readItem(ctx, ops.coll, id, bson.D{{Key: "revision", Value: 1}}); {
		case isNoDocuments(rerr):
			err = nil
		case rerr != nil:
			return nil, fmt.Errorf("mongo: delete %s: %w (outcome unknown: %v)", key, err, rerr)
		}
	}
	if err == nil {
		err = decodeItem(found, &gone)
	}
	if err != nil {
		return nil, fmt.Errorf("mongo: delete %s: %w", key, err)
	}
	s.written(ops.scope)
	ops.fix(&gone)
	s.releaseAllSlugs(ctx, ops.scope, id)
	s.markAfter(ctx, ops.scope, id, seq)
	return &gone, nil
}

// rereadAttempts bounds the re-reads that decide whether a failed write
// landed.
const rereadAttempts = 3

// storedDoc reads the stored document filter selects (by _id) after a write of it failed, with a
// context of its own (the caller's may be what ended the write) and a few
// attempts (the failure may have been a dropped connection). It returns
// mongo.ErrNoDocuments when there is none.
func (s *itemIO) storedDoc(ctx context.Context, coll *mongo.Collection, filter bson.D) (bson.Raw, error) {
	cctx, cancel := s.cleanupContext(ctx)
	defer cancel()
	if s.rereadTimeout > 0 {
		var cancelReread context.CancelFunc
		cctx, cancelReread = context.WithTimeout(cctx, s.rereadTimeout)
		defer cancelReread()
	}
	var err error
	for attempt := range rereadAttempts {
		var raw bson.Raw
		raw, err = coll.FindOne(cctx, filter).Raw()
		if err == nil || isNoDocuments(err) {
			return raw, err
		}
		if serr := sleep(cctx, backoff(attempt)); serr != nil {
			break
		}
	}
	return nil, err
}

// landedAs reports whether the document filter selects (by _id) is stored
// exactly as doc, after a write of doc failed (the caller holds the item's
// lock, so no one else wrote it meanwhile). The error is set when the
// re-read failed too: then the outcome is unknown and the caller must undo
// nothing.
func (s *itemIO) landedAs(ctx context.Context, coll *mongo.Collection, filter bson.D, doc bson.Raw) (bool, error) {
	raw, err := s.storedDoc(ctx, coll, filter)
	switch {
	case isNoDocuments(err):
		return false, nil
	case err != nil:
		return false, err
	}
	return bytes.Equal(raw, doc), nil
}

// keyFilter selects the record doc by its stored _id, in whichever layout
// doc is written (migrate.go).
func keyFilter(doc bson.Raw) bson.D {
	return bson.D{{Key: "_id", Value: doc.Lookup("_id")}}
}
