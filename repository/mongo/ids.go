package mongo

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// How posts and terms are keyed.
//
// A post or term is stored with its ID twice: as a string _id, the decimal
// form ("12", idKey), and as the number in the field "id" (fieldID). Reads
// of one record use the filter {_id: "12"} (idFilter), the one shape FerretDB
// v1.24's SQLite handler answers with SQL: for any other filter, a numeric
// _id included, it reads and decodes the whole collection in Go
// (internal/backends/sqlite/collection.go, Query; TestPushdown pins the
// rule). Order and ranges (lists by ID, AfterID) use the numeric field and
// its index, since decimal strings do not sort as numbers. On MongoDB both
// are index look-ups; the string costs nothing there.
//
// The repository types keep their `bson:"_id"` int64 tags: encodeItem and
// decodeItem convert at this package's edge. Stores written before this
// layout (numeric _id, no "id") are converted by Open (migrate.go).

// fieldID is the field holding the numeric ID of a stored post or term.
const fieldID = "id"

// idKey returns the _id of the post or term with this ID: its decimal
// form. Every _id of a post or term is made here.
func idKey(id int64) string { return strconv.FormatInt(id, 10) }

// idFilter returns the filter that selects the post or term id: exactly
// {_id: idKey(id)}, which FerretDB answers by an _id look-up. Adding any
// condition to it makes FerretDB scan the collection.
func idFilter(id int64) bson.D { return bson.D{{Key: "_id", Value: idKey(id)}} }

// encodeItem returns the stored form of v (a repository.Post or Term): its
// BSON with the int64 _id replaced by idKey and the number in fieldID.
func encodeItem(v any) (bson.Raw, error) {
	raw, err := bson.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("mongo: encode: %w", err)
	}
	elems, err := bson.Raw(raw).Elements()
	if err != nil {
		return nil, fmt.Errorf("mongo: encode: %w", err)
	}
	idx, doc := bsoncore.AppendDocumentStart(make([]byte, 0, len(raw)+32))
	found := false
	for _, e := range elems {
		switch e.Key() {
		case "_id":
			id, ok := e.Value().AsInt64OK()
			if !ok {
				return nil, fmt.Errorf("mongo: encode: _id is a %s, want an integer", e.Value().Type)
			}
			doc = bsoncore.AppendStringElement(doc, "_id", idKey(id))
			doc = bsoncore.AppendInt64Element(doc, fieldID, id)
			found = true
		case fieldID:
			return nil, errors.New("mongo: encode: the record has a field named " + fieldID)
		default:
			doc = append(doc, e...)
		}
	}
	if !found {
		return nil, errors.New("mongo: encode: the record has no _id")
	}
	doc, err = bsoncore.AppendDocumentEnd(doc, idx)
	if err != nil {
		return nil, fmt.Errorf("mongo: encode: %w", err)
	}
	return bson.Raw(doc), nil
}

// decodeItem decodes a stored post or term into v, taking its ID from
// fieldID (or, in a projection without it, from the string _id; a numeric
// _id of the old layout is read as it is).
func decodeItem(raw bson.Raw, v any) error {
	id, haveID, err := storedID(raw)
	if err != nil {
		return err
	}
	elems, err := raw.Elements()
	if err != nil {
		return fmt.Errorf("mongo: decode: %w", err)
	}
	idx, doc := bsoncore.AppendDocumentStart(make([]byte, 0, len(raw)))
	if haveID {
		doc = bsoncore.AppendInt64Element(doc, "_id", id)
	}
	for _, e := range elems {
		if k := e.Key(); k != "_id" && k != fieldID {
			doc = append(doc, e...)
		}
	}
	doc, err = bsoncore.AppendDocumentEnd(doc, idx)
	if err != nil {
		return fmt.Errorf("mongo: decode: %w", err)
	}
	if err := bson.Unmarshal(doc, v); err != nil {
		return fmt.Errorf("mongo: decode: %w", err)
	}
	return nil
}

// storedID returns the numeric ID of a stored post or term, reporting
// false when raw (a projection) carries neither fieldID nor _id.
func storedID(raw bson.Raw) (int64, bool, error) {
	if v, err := raw.LookupErr(fieldID); err == nil {
		if id, ok := v.AsInt64OK(); ok {
			return id, true, nil
		}
		return 0, false, fmt.Errorf("mongo: decode: %s is a %s, want an integer", fieldID, v.Type)
	}
	v, err := raw.LookupErr("_id")
	if err != nil {
		return 0, false, nil
	}
	if s, ok := v.StringValueOK(); ok {
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, false, fmt.Errorf("mongo: decode: _id %q is not an ID", s)
		}
		return id, true, nil
	}
	if id, ok := v.AsInt64OK(); ok {
		return id, true, nil
	}
	return 0, false, fmt.Errorf("mongo: decode: _id is a %s", v.Type)
}

// maxIDLookups is the most IDs findByIDs reads with one look-up each on
// FerretDB; more are read with one find that decodes the collection. On
// the shared 2-core machine, with 2,300 posts of about 1 KB and the _id
// look-ups indexed (mongotest.IndexIDLookups), a look-up took 0.24 ms and
// the decoding find 120-140 ms whatever the number of IDs: look-ups win up
// to about 500 IDs there, fewer in a smaller collection. 256 is the sync
// worker's batch. (A variable for the tests.)
var maxIDLookups = 256

// findByIDs returns the stored documents of coll among ids (unique, in any
// order), projected by projection when it is not nil.
//
// On MongoDB it is one find, {_id: {$in: [...]}} on the _id index, with the
// batch size set so that every match comes in the first reply. On FerretDB
// v1 that filter decodes the whole collection in Go, so there each ID is
// one find by idFilter (an SQL look-up): len(ids) round trips in place of
// a scan, up to maxIDLookups IDs. byIDLookups chooses.
func (s *layoutCodec) findByIDs(ctx context.Context, coll *mongo.Collection, ids []int64, projection bson.D) ([]bson.Raw, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	if !s.byIDLookups || len(ids) > maxIDLookups {
		// Both layouts (migrate.go): a record is found in either.
		keys := make([]any, 0, 2*len(ids))
		for _, id := range ids {
			keys = append(keys, s.key(id), s.otherKey(id))
		}
		opts := options.Find().SetBatchSize(replyFor(len(ids)))
		if projection != nil {
			opts.SetProjection(projection)
		}
		cur, err := coll.Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: keys}}}}, opts)
		if err != nil {
			return nil, err
		}
		defer cur.Close(ctx)
		var out []bson.Raw
		at := make(map[int64]int, len(ids))
		for cur.Next(ctx) {
			raw := append(bson.Raw(nil), cur.Current...)
			id, ok, err := storedID(raw)
			if err != nil {
				return nil, err
			}
			if i, dup := at[id]; ok && dup {
				out[i] = s.prefer(out[i], raw) // both forms stored
				continue
			}
			at[id] = len(out)
			out = append(out, raw)
		}
		return out, cur.Err()
	}
	opts := options.FindOne()
	if projection != nil {
		opts.SetProjection(projection)
	}
	out := make([]bson.Raw, 0, len(ids))
	for _, id := range ids {
		raw, err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: s.key(id)}}, opts).Raw()
		if isNoDocuments(err) && s.mixed.Load() {
			// The other layout (migrate.go).
			raw, err = coll.FindOne(ctx, bson.D{{Key: "_id", Value: s.otherKey(id)}}, opts).Raw()
		}
		switch {
		case isNoDocuments(err):
			continue
		case err != nil:
			return nil, err
		}
		out = append(out, raw)
	}
	return out, nil
}
