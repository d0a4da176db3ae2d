package mongo

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/calendar/eventcal/repository"
)

// # Upgrading from the numeric-_id layout while old processes run
//
// Releases before the string-_id layout (ids.go) store a post or term as
// {_id: 12, ...}; this one as {_id: "12", id: 12, ...}. A rolling upgrade
// runs both versions on one database for a while, and the previous
// release cannot be changed: it reads and writes only numeric _ids, looks
// records up by them, takes the item lock ("post:12") around every write
// and, while it holds the leader lease, treats a record it cannot find by
// its numeric _id as deleted (it drops it from the search index and sends
// "*.deleted" webhooks). The upgrade is therefore done in two phases, and
// everything the previous release must not see is prevented from this
// side.
//
// Expand. A database without the layout document in meta (or at layout 1)
// is in the numeric layout, and this version then writes that layout too:
// {_id: 12, id: 12, ...} (the extra field is ignored by the old decoder and
// dropped by its writes). Old and new processes thus see the same records,
// whoever leads. Reads accept both forms (readItem, findByIDs: on MongoDB
// one {_id: {$in: ["12", 12]}} command, on FerretDB the expected form
// first and the other on a miss), lists and ranges run on _id as the
// previous release's did (idField), and every write goes to the form the
// record is stored in, read under the item lock.
//
// Contract. Only the process that holds the leader lease migrates, and
// only when no live process of the previous release can be leading or can
// become leader again:
//
//  1. Every process of this version records itself in the replicas
//     collection (replica, instance, the layouts it reads, the one it
//     writes, a heartbeat every layoutInterval) and deletes its record
//     when it stops. The leader migrates only while every record with a
//     heartbeat within replicaWindow reads layout 2. (Processes of the
//     previous release cannot record themselves; they are kept away by 2.)
//  2. Holding the lease proves that no old process leads now (the lease
//     lets nobody take over before the holder has stopped counting
//     itself leader, lease.go). Before converting anything the leader
//     then inserts a guard term into the lease (leaseGuard): a term
//     numbered math.MaxInt64 held by nobody real. The previous release
//     always reads the highest term, never sees it renewed, and every
//     take-over it attempts inserts a term below it, which its own check
//     ("is my term the highest?") rejects: it can never lead this
//     database again, so it never judges a string-_id record deleted.
//     This version skips the guard when reading terms (Lease.latest).
//     The leader checks that it still leads after inserting the guard and
//     before every batch, and stops (to be resumed by the next leader)
//     when it does not.
//  3. Every numeric record is converted under the item lock the previous
//     release writes under (convertLocked): read it, insert its string
//     form (or keep an existing one of a higher revision, from an
//     interrupted run), delete the numeric one. An update by any process
//     is therefore either before the conversion (and converted with it)
//     or after it (and lands on the string form, or, from the previous
//     release, finds nothing and answers 404 without writing): none is
//     acknowledged and then lost.
//  4. Then the layout document is set to 2 and every process of this
//     version switches to writing string _ids at its next heartbeat; until
//     then it keeps writing the numeric form, which is read (both forms
//     are) and converted like any straggler.
//
// Stragglers. A numeric record can still appear after the contract: from
// a process of this version that has not yet seen layout 2, or from a
// forgotten follower of the previous release creating a record. It is
// never hidden: reads by ID accept both forms, so a listed record is never
// 404; a write converts it first (updateOnce); and the leader sweeps both
// collections every sweepEvery heartbeats, converting what it finds. (On
// MongoDB both forms are one {_id: {$in}} look-up. On FerretDB, where a
// numeric _id filter scans the collection, a process looks for the
// numeric form only while it knows numeric records may exist (Store.mixed:
// at layout 1, and after a check at Open and every sweepEvery heartbeats
// found one), so there a straggler written after that check can answer
// 404 until the next one.) The leader also inserts the lease guard once
// at layout 2, so that a database created at layout 2 is guarded too. A
// follower of the previous release left running after the contract cannot
// see converted records (404 to its clients, and its updates and deletes
// of them are refused), but it loses nothing.
//
// What only the operator can ensure: that processes of the previous
// release are all replaced. They do not record themselves, so a follower
// of the previous release is invisible here; it is harmless to the data
// but serves 404s for converted records until it is stopped.

// Layout versions of a database, kept in meta as {_id: "layout", version}.
// A database without it is at version 1 (or empty).
const (
	// layoutNumericIDs: posts and terms keyed by a numeric _id.
	layoutNumericIDs = 1
	// layoutStringIDs: posts and terms keyed by a string _id, with the
	// number in fieldID (ids.go).
	layoutStringIDs = 2
	// layoutVersion is the newest layout this code reads and writes.
	layoutVersion = layoutStringIDs
)

// layoutKey is the _id of the layout document in meta.
const layoutKey = "layout"

// migrateBatch is how many records one step of the migration reads (a
// variable for the tests).
var migrateBatch int64 = 100

// layoutInterval is how often a process records its heartbeat, reads the
// layout and, as leader, migrates or sweeps (a variable for the tests).
var layoutInterval = 5 * time.Second

// replicaWindow is how old a heartbeat may be for its process to count as
// live: three missed heartbeats. It compares the clocks of the writer and
// the reader, so clocks must agree to well within it.
func replicaWindow() time.Duration { return 3 * layoutInterval }

// sweepEvery is how many heartbeats pass between two sweeps for
// stragglers by the leader.
const sweepEvery = 6

// leaseGuardTerm is the term of the lease guard (see "Contract").
const leaseGuardTerm = math.MaxInt64

// leaseGuardHolder is the holder written in the lease guard.
const leaseGuardHolder = "layout-2 guard: releases before the string-_id layout must not lead"

// layoutDoc is the layout document in meta.
type layoutDoc struct {
	Key     string `bson:"_id"`
	Version int    `bson:"version"`
}

// replicaDoc is a process's record in the replicas collection.
type replicaDoc struct {
	// Key is "replica/instance".
	Key      string `bson:"_id"`
	Replica  string `bson:"replica"`
	Instance string `bson:"instance"`
	// Reads is the newest layout the process reads (every older one
	// too); Writes the one it writes now.
	Reads  int `bson:"reads"`
	Writes int `bson:"writes"`
	// Beat is the time of the last heartbeat, on the writer's clock.
	Beat time.Time `bson:"beat"`
}

// MigrationStats says what a migration did (LastMigration).
type MigrationStats struct {
	// From is the layout found (0 when the database was at the current
	// layout already and nothing ran).
	From int
	// Converted counts the posts and terms rewritten to string _ids.
	Converted int
}

// migrator brings the database from one layout to the next and keeps the
// store at the layout the live replicas agree on (KeepLayout).
type migrator struct{ *conn }

// LastMigration returns what this store's last migration or sweep did.
func (s *migrator) LastMigration() MigrationStats {
	s.layoutMu.Lock()
	defer s.layoutMu.Unlock()
	return s.migrated
}

// Layout returns the layout this store writes: 1 during the expand phase
// of an upgrade from the numeric-_id layout, 2 after it.
func (s *migrator) Layout() int { return int(s.layout.Load()) }

// readLayout sets the layout this store writes from the database (Open,
// and every heartbeat of KeepLayout). A database that holds no post, no
// term and no lease term is new and is recorded at the current layout.
func (s *migrator) readLayout(ctx context.Context) error {
	var d layoutDoc
	err := s.meta.FindOne(ctx, bson.D{{Key: "_id", Value: layoutKey}}).Decode(&d)
	switch {
	case isNoDocuments(err):
		d.Version = layoutNumericIDs
		fresh, ferr := s.isFresh(ctx)
		if ferr != nil {
			return ferr
		}
		if fresh {
			if err := s.recordLayout(ctx); err != nil {
				return err
			}
			d.Version = layoutVersion
		}
	case err != nil:
		return fmt.Errorf("mongo: read the database layout: %w", err)
	case d.Version > layoutVersion:
		return fmt.Errorf("mongo: the database has layout %d, written by a newer version (this one reads %d)", d.Version, layoutVersion)
	}
	// Never back: a layout once seen at 2 stays 2 for this process.
	if int32(d.Version) > s.layout.Load() {
		s.layout.Store(int32(d.Version))
	}
	return nil
}

// isFresh reports whether the database has never been used by any
// version: no post, no term, no lease term.
func (s *migrator) isFresh(ctx context.Context) (bool, error) {
	for _, c := range []*mongo.Collection{s.posts, s.terms, s.leases} {
		err := c.FindOne(ctx, bson.D{}, options.FindOne().SetProjection(bson.D{{Key: "_id", Value: 1}})).Err()
		switch {
		case err == nil:
			return false, nil
		case !isNoDocuments(err):
			return false, fmt.Errorf("mongo: read the database layout: %w", err)
		}
	}
	return true, nil
}

// layoutRecordAttempts bounds how often recordLayout writes the layout
// document when other processes keep winning the race to insert it.
const layoutRecordAttempts = 3

// recordLayout records the database at layoutVersion.
//
// Several processes may record it at once (replicas of a new database
// starting together, two leaders finishing a migration). Each upserts the
// document; when the upserts run together the server may insert it for
// one and answer the other with a duplicate key error (FerretDB looks the
// document up and inserts it in separate steps; MongoDB retries such an
// upsert only in some cases). The loser then reads the winner's document:
// the same layout is accepted, a newer one refused (as readLayout does),
// and anything else written over (the document now exists, so the upsert
// updates it).
func (s *migrator) recordLayout(ctx context.Context) error {
	key := bson.D{{Key: "_id", Value: layoutKey}}
	var err error
	for range layoutRecordAttempts {
		_, err = s.meta.UpdateOne(ctx, key,
			bson.D{{Key: "$set", Value: bson.D{{Key: "version", Value: layoutVersion}}}},
			options.UpdateOne().SetUpsert(true))
		if err == nil || !mongo.IsDuplicateKeyError(err) {
			break
		}
		var d layoutDoc
		switch rerr := s.meta.FindOne(ctx, key).Decode(&d); {
		case rerr == nil && d.Version == layoutVersion:
			return nil
		case rerr == nil && d.Version > layoutVersion:
			return fmt.Errorf("mongo: the database has layout %d, written by a newer version (this one reads %d)", d.Version, layoutVersion)
		case rerr != nil && !isNoDocuments(rerr):
			return fmt.Errorf("mongo: record the database layout: read the layout another process recorded: %w", rerr)
		}
	}
	if err != nil {
		return fmt.Errorf("mongo: record the database layout: %w", err)
	}
	return nil
}

// layoutCodec reads and writes the IDs and documents of the layout the
// store is at (numeric or string _id; see the top of this file): the part of
// the migration every read and write goes through.
type layoutCodec struct{ *conn }

// numeric reports whether this store writes the numeric-_id layout.
func (s *layoutCodec) numeric() bool { return s.layout.Load() == layoutNumericIDs }

// key returns the _id of the post or term id in the layout this store
// writes; otherKey the one in the other layout.
func (s *layoutCodec) key(id int64) any {
	if s.numeric() {
		return id
	}
	return idKey(id)
}

func (s *layoutCodec) otherKey(id int64) any {
	if s.numeric() {
		return idKey(id)
	}
	return id
}

// idField is the field that orders posts and terms by ID and answers
// ranges of IDs: _id in the numeric layout (as the previous release reads
// it), fieldID in the string one.
func (s *layoutCodec) idField() string {
	if s.numeric() {
		return "_id"
	}
	return fieldID
}

// encode returns the stored form of v in the layout this store writes
// (the numeric layout keeps fieldID too; see "Expand").
func (s *layoutCodec) encode(v any) (bson.Raw, error) {
	doc, err := encodeItem(v)
	if err != nil || !s.numeric() {
		return doc, err
	}
	return numericIDForm(doc)
}

// numericIDForm rewrites a record in the string layout as {_id: 12, id: 12, ...}.
func numericIDForm(raw bson.Raw) (bson.Raw, error) {
	id, _, err := storedID(raw)
	if err != nil {
		return nil, err
	}
	elems, err := raw.Elements()
	if err != nil {
		return nil, err
	}
	idx, doc := bsoncore.AppendDocumentStart(make([]byte, 0, len(raw)))
	doc = bsoncore.AppendInt64Element(doc, "_id", id)
	for _, e := range elems {
		if e.Key() != "_id" {
			doc = append(doc, e...)
		}
	}
	doc, err = bsoncore.AppendDocumentEnd(doc, idx)
	return bson.Raw(doc), err
}

// isNumericKey reports whether raw is stored with a numeric _id.
func isNumericKey(raw bson.Raw) bool {
	v, err := raw.LookupErr("_id")
	if err != nil {
		return false
	}
	_, ok := v.AsInt64OK()
	return ok
}

// rawRevision returns the revision of a stored record (0 without one).
func rawRevision(raw bson.Raw) int64 {
	r, _ := raw.Lookup("revision").AsInt64OK()
	return r
}

// prefer returns the form of one record to use when both are stored (an
// interrupted conversion): the higher revision, else the one in the
// layout this store writes.
func (s *layoutCodec) prefer(a, b bson.Raw) bson.Raw {
	ra, rb := rawRevision(a), rawRevision(b)
	switch {
	case ra > rb:
		return a
	case rb > ra:
		return b
	case isNumericKey(a) == s.numeric():
		return a
	}
	return b
}

// readItem returns the stored record id of coll in whichever layout it is
// stored (see "Expand"), projected when projection is not nil (it should
// keep revision), or mongo.ErrNoDocuments.
func (s *layoutCodec) readItem(ctx context.Context, coll *mongo.Collection, id int64, projection bson.D) (bson.Raw, error) {
	if !s.byIDLookups {
		opts := options.Find().SetLimit(2).SetBatchSize(2)
		if projection != nil {
			opts.SetProjection(projection)
		}
		cur, err := coll.Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: bson.A{s.key(id), s.otherKey(id)}}}}}, opts)
		if err != nil {
			return nil, err
		}
		defer cur.Close(ctx)
		var found bson.Raw
		for cur.Next(ctx) {
			raw := append(bson.Raw(nil), cur.Current...)
			if found == nil {
				found = raw
			} else {
				found = s.prefer(found, raw)
			}
		}
		if err := cur.Err(); err != nil {
			return nil, err
		}
		if found == nil {
			return nil, mongo.ErrNoDocuments
		}
		return found, nil
	}
	opts := options.FindOne()
	if projection != nil {
		opts.SetProjection(projection)
	}
	raw, err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: s.key(id)}}, opts).Raw()
	if isNoDocuments(err) && s.mixed.Load() {
		raw, err = coll.FindOne(ctx, bson.D{{Key: "_id", Value: s.otherKey(id)}}, opts).Raw()
	}
	return raw, err
}

// checkMixed sets s.mixed: whether this store writes the numeric layout
// or a record in it exists. On FerretDB the look-up scans the posts and
// terms, so KeepLayout repeats it only every sweepEvery heartbeats.
func (s *migrator) checkMixed(ctx context.Context) error {
	if s.numeric() {
		s.mixed.Store(true)
		return nil
	}
	for _, c := range []*mongo.Collection{s.posts, s.terms} {
		err := c.FindOne(ctx, numericFilter, options.FindOne().SetProjection(bson.D{{Key: "_id", Value: 1}})).Err()
		switch {
		case err == nil:
			s.mixed.Store(true)
			return nil
		case !isNoDocuments(err):
			return fmt.Errorf("mongo: look for records in the numeric layout: %w", err)
		}
	}
	s.mixed.Store(false)
	return nil
}

// Lease guard and replica records.

// guardLease inserts the lease guard of the lease called name (see
// "Contract"); one already there is kept.
func (s *migrator) guardLease(ctx context.Context, name string) error {
	at := now()
	_, err := s.leases.InsertOne(ctx, leaseDoc{ID: fmt.Sprintf("%s:guard", name), Name: name, Term: leaseGuardTerm,
		Holder: leaseGuardHolder, At: at, Expires: at})
	if err != nil && !mongo.IsDuplicateKeyError(err) {
		return fmt.Errorf("mongo: guard lease %s: %w", name, err)
	}
	return nil
}

// heartbeat records this process (see "Contract").
func (s *migrator) heartbeat(ctx context.Context, l *Lease) error {
	key := l.holder + "/" + l.instance
	_, err := s.replicas.ReplaceOne(ctx, bson.D{{Key: "_id", Value: key}},
		replicaDoc{Key: key, Replica: l.holder, Instance: l.instance, Reads: layoutVersion, Writes: s.Layout(), Beat: now()},
		options.Replace().SetUpsert(true))
	if err != nil {
		return fmt.Errorf("mongo: record replica %s: %w", key, err)
	}
	return nil
}

// LiveReplicas returns the records of the processes with a heartbeat
// within the liveness window, by key.
func (s *migrator) LiveReplicas(ctx context.Context) ([]ReplicaInfo, error) {
	cur, err := s.replicas.Find(ctx, bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("mongo: read replicas: %w", err)
	}
	var docs []replicaDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("mongo: read replicas: %w", err)
	}
	out := []ReplicaInfo{}
	for _, d := range docs {
		if time.Since(d.Beat) <= replicaWindow() {
			out = append(out, ReplicaInfo{Replica: d.Replica, Instance: d.Instance, Reads: d.Reads, Writes: d.Writes, Beat: d.Beat})
		}
	}
	return out, nil
}

// ReplicaInfo is a live process as recorded in the replicas collection.
type ReplicaInfo struct {
	// Replica and Instance identify the process (see Lease).
	Replica, Instance string
	// Reads is the newest layout it reads, Writes the one it writes.
	Reads, Writes int
	// Beat is its last heartbeat.
	Beat time.Time
}

// KeepLayout runs this process's part of the upgrade protocol until ctx
// ends (the service runs it beside l.Keep): every layoutInterval it
// records its heartbeat and reads the layout; while it holds l it
// migrates the database once no live process reads only the numeric
// layout, and then sweeps for stragglers every sweepEvery heartbeats. At
// the end it deletes its record. Failures are logged and retried.
func (s *migrator) KeepLayout(ctx context.Context, l *Lease, log *slog.Logger) {
	if log == nil {
		log = slog.Default()
	}
	defer func() {
		cctx, cancel := s.cleanupContext(ctx)
		defer cancel()
		s.replicas.DeleteOne(cctx, bson.D{{Key: "_id", Value: l.holder + "/" + l.instance}})
	}()
	guarded := false
	for beat := 0; ; beat++ {
		if err := s.layoutStep(ctx, l, beat%sweepEvery == 0, &guarded, log); err != nil && ctx.Err() == nil {
			log.Warn("layout upkeep failed", "err", err)
		}
		t := time.NewTimer(layoutInterval)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// layoutStep is one heartbeat of KeepLayout; *guarded says whether this
// process has made sure of the lease guard (once, as leader at layout 2:
// a database created at layout 2 gets it too).
func (s *migrator) layoutStep(ctx context.Context, l *Lease, sweep bool, guarded *bool, log *slog.Logger) error {
	if err := s.readLayout(ctx); err != nil {
		return err
	}
	if err := s.heartbeat(ctx, l); err != nil {
		return err
	}
	if sweep {
		if err := s.checkMixed(ctx); err != nil {
			return err
		}
	}
	if l.IsLeader(ctx) != nil {
		return nil
	}
	if !s.numeric() {
		if !*guarded {
			if err := s.guardLease(ctx, l.name); err != nil {
				return err
			}
			*guarded = true
		}
		if !sweep || !s.mixed.Load() {
			return nil
		}
		stats, err := s.convertAll(ctx, func() error { return l.IsLeader(ctx) })
		if stats.Converted > 0 {
			log.Info("store: converted records left in the numeric-_id layout", "converted", stats.Converted)
		}
		return err
	}
	live, err := s.LiveReplicas(ctx)
	if err != nil {
		return err
	}
	for _, r := range live {
		if r.Reads < layoutStringIDs {
			return nil // a live process cannot read the new layout
		}
	}
	log.Info("store: migrating to string _ids (no live process needs the numeric layout)")
	stats, err := s.contract(ctx, l.name, func() error { return l.IsLeader(ctx) })
	if err != nil {
		return err
	}
	log.Info("store: migrated to string _ids", "converted", stats.Converted)
	return nil
}

// contract guards the lease called name, converts every numeric record
// while leading() answers nil and records layout 2 (see "Contract").
func (s *migrator) contract(ctx context.Context, name string, leading func() error) (MigrationStats, error) {
	if err := s.guardLease(ctx, name); err != nil {
		return MigrationStats{}, err
	}
	stats, err := s.convertAll(ctx, leading)
	if err != nil {
		return stats, err
	}
	if err := leading(); err != nil {
		return stats, err
	}
	if err := s.recordLayout(ctx); err != nil {
		return stats, err
	}
	s.layout.Store(layoutVersion)
	s.mixed.Store(false)
	stats.From = layoutNumericIDs
	s.layoutMu.Lock()
	s.migrated = stats
	s.layoutMu.Unlock()
	return stats, nil
}

// numericFilter selects the records stored with a numeric _id.
var numericFilter = bson.D{{Key: "_id", Value: bson.D{{Key: "$type", Value: "number"}}}}

// convertAll converts every post and term stored with a numeric _id, each
// under its item lock, checking leading() before every batch.
func (s *migrator) convertAll(ctx context.Context, leading func() error) (MigrationStats, error) {
	var stats MigrationStats
	for _, c := range []struct {
		coll  *mongo.Collection
		scope repository.MarkKind
	}{{s.posts, repository.MarkPost}, {s.terms, repository.MarkTerm}} {
		fail := func(err error) error { return fmt.Errorf("mongo: migrate %s to string _ids: %w", c.coll.Name(), err) }
		for {
			if err := leading(); err != nil {
				return stats, fail(err)
			}
			cur, err := c.coll.Find(ctx, numericFilter, options.Find().SetLimit(migrateBatch).SetBatchSize(int32(migrateBatch)).
				SetProjection(bson.D{{Key: "_id", Value: 1}}))
			if err != nil {
				return stats, fail(err)
			}
			var ids []int64
			for cur.Next(ctx) {
				if id, ok := cur.Current.Lookup("_id").AsInt64OK(); ok {
					ids = append(ids, id)
				}
			}
			err = cur.Err()
			cur.Close(ctx)
			if err != nil {
				return stats, fail(err)
			}
			if len(ids) == 0 {
				break
			}
			for _, id := range ids {
				n, err := s.convertOne(ctx, c.coll, c.scope, id)
				if err != nil {
					return stats, fail(err)
				}
				stats.Converted += n
			}
		}
	}
	return stats, nil
}

// convertOne converts the record id of coll under its item lock and
// returns 1 when it found it in the numeric layout.
func (s *migrator) convertOne(ctx context.Context, coll *mongo.Collection, scope repository.MarkKind, id int64) (int, error) {
	l, err := s.lock(ctx, itemKey(scope, id))
	if err != nil {
		return 0, err
	}
	defer s.unlock(ctx, l)
	raw, err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Raw()
	switch {
	case isNoDocuments(err):
		return 0, nil // deleted or converted meanwhile
	case err != nil:
		return 0, err
	}
	if err := s.convertLocked(ctx, coll, raw); err != nil {
		return 0, err
	}
	return 1, nil
}

// convertLocked rewrites the record raw, read with a numeric _id under its
// item lock (held by the caller), in the string layout: its string form is
// inserted, or replaces one of a lower or equal revision left by an
// interrupted conversion, and the numeric form is deleted.
func (s *layoutCodec) convertLocked(ctx context.Context, coll *mongo.Collection, raw bson.Raw) error {
	doc, id, err := stringIDForm(raw)
	if err != nil {
		return err
	}
	if _, err := coll.InsertOne(ctx, doc); err != nil {
		if !mongo.IsDuplicateKeyError(err) {
			return err
		}
		var cur struct {
			Revision int64 `bson:"revision"`
		}
		if err := coll.FindOne(ctx, idFilter(id), options.FindOne().SetProjection(bson.D{{Key: "revision", Value: 1}})).Decode(&cur); err != nil {
			return err
		}
		if rawRevision(raw) >= cur.Revision {
			if _, err := coll.ReplaceOne(ctx, idFilter(id), doc); err != nil {
				return err
			}
		}
	}
	res, err := coll.DeleteOne(ctx, bson.D{{Key: "_id", Value: id}})
	if err != nil {
		return err
	}
	if res.DeletedCount == 0 {
		return errors.New("the numeric record could not be deleted")
	}
	return nil
}

// stringIDForm returns the record raw, stored with a numeric _id, in the
// string _id layout, and its ID.
func stringIDForm(raw bson.Raw) (bson.Raw, int64, error) {
	v, err := raw.LookupErr("_id")
	if err != nil {
		return nil, 0, errors.New("a record without _id")
	}
	id, ok := v.AsInt64OK()
	if !ok {
		return nil, 0, fmt.Errorf("a record whose _id %s is not an integer", v)
	}
	elems, err := raw.Elements()
	if err != nil {
		return nil, 0, err
	}
	idx, doc := bsoncore.AppendDocumentStart(make([]byte, 0, len(raw)+32))
	doc = bsoncore.AppendStringElement(doc, "_id", idKey(id))
	doc = bsoncore.AppendInt64Element(doc, fieldID, id)
	for _, e := range elems {
		if k := e.Key(); k != "_id" && k != fieldID {
			doc = append(doc, e...)
		}
	}
	doc, err = bsoncore.AppendDocumentEnd(doc, idx)
	return bson.Raw(doc), id, err
}

// idProjection projects a post or term to its ID in either layout (the
// numeric layout may lack fieldID; storedID reads both).
func (s *layoutCodec) idProjection() bson.D {
	if s.numeric() {
		return bson.D{{Key: fieldID, Value: 1}}
	}
	return bson.D{{Key: "_id", Value: 0}, {Key: fieldID, Value: 1}}
}

// storedIDs returns the IDs of the records of cur (storedID), closing it.
func storedIDs(ctx context.Context, cur *mongo.Cursor) ([]int64, error) {
	defer cur.Close(ctx)
	ids := []int64{}
	for cur.Next(ctx) {
		id, ok, err := storedID(cur.Current)
		if err != nil {
			return nil, err
		}
		if ok {
			ids = append(ids, id)
		}
	}
	return ids, cur.Err()
}

// deleteBothForms deletes the record id of coll in both layouts: one
// command on MongoDB, one per form on FerretDB (where {_id: {$in}} scans;
// the other form only while s.mixed).
func (s *layoutCodec) deleteBothForms(ctx context.Context, coll *mongo.Collection, id int64) error {
	if !s.byIDLookups {
		_, err := coll.DeleteMany(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: bson.A{s.key(id), s.otherKey(id)}}}}})
		return err
	}
	keys := []any{s.key(id)}
	if s.mixed.Load() {
		keys = append(keys, s.otherKey(id))
	}
	for _, k := range keys {
		if _, err := coll.DeleteOne(ctx, bson.D{{Key: "_id", Value: k}}); err != nil {
			return err
		}
	}
	return nil
}
