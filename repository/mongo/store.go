// Package mongo is the MongoDB engine of repository.Store.
//
// Collections (all in one database):
//
//	posts        events, venues, organizers, images (repository.Post, _id = "12", id = 12; ids.go)
//	terms        categories and tags (repository.Term, _id = "12", id = 12)
//	users        accounts (unique index on login)
//	tokens       API tokens (_id = SHA-256 of the secret)
//	counters     sequences {_id: "post"|"term"|"user"|"mark"|..., value}
//	id_claims    one document per ID ever handed out ("post:12")
//	slugs        slug reservations ("post:event:en:my-slug" -> owner ID)
//	index_marks  "needs indexing" marks ("post:12" -> seq)
//	locks        short-lived per-item write locks ("post:12")
//	leases       the leader lease of the service processes (lease.go)
//	meta         the layout version of the database (migrate.go)
//	replicas     the live service processes and the layouts they read (migrate.go)
//	job_state    the periodic jobs' state ({_id: key, value}; jobstate.go)
//	sources      calendar sources (repository.Source, _id = ID; sources.go)
//	source_runs  their runs (repository.SourceRun, _id = ID; sources.go)
//
// # Why the item locks
//
// The engine is tested against FerretDB v1 (SQLite handler), whose updates
// are not atomic: findAndModify, update and delete read the matching
// documents, apply the change in Go and write the result back by _id without
// re-checking the filter (internal/handler/common/update.go and
// internal/backends/sqlite/collection.go in FerretDB v1.24). Two concurrent
// {$inc} calls can return the same value, two ReplaceOne({_id, revision})
// calls can both "win", and DeleteOne({_id, seq}) can delete a document that
// changed after the check. The only atomic primitive FerretDB v1 offers is
// the unique index: an insert whose _id exists fails with E11000.
//
// So every write of a post or term runs under a lock document inserted into
// locks with the item's key as _id (a lease, taken over after lockLease when
// its holder died). Under the lock the read-modify-write, the slug
// reservations and the index mark of that item cannot interleave with another
// writer. The lock is redundant but harmless on MongoDB, where the revision
// check of ReplaceOne is atomic and still guards against a holder that
// outlived its lease. Likewise sequences draw from the atomic $inc counter
// (enough on MongoDB) and then claim the value by inserting id_claims
// "post:12", so a duplicate draw on FerretDB is detected and redrawn. No
// transactions are used (FerretDB v1 has none).
//
// # Index marks
//
// A write records its mark twice while holding the item lock: before the
// write (so a crash after the mark only causes a harmless reindex, and a write
// never lands without a mark) and again after it with a higher seq. The
// second mark closes a race the first one alone leaves open: a sync worker
// that lists the mark and reads the item between the mark and the write would
// index the old state and then clear the mark. After the renewal its
// ClearMarks (which compares seq) leaves the newer mark pending.
package mongo

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"

	"github.com/calendar/eventcal/repository"
)

// Collection names.
const (
	collPosts    = "posts"
	collTerms    = "terms"
	collUsers    = "users"
	collTokens   = "tokens"
	collCounters = "counters"
	collClaims   = "id_claims"
	collSlugs    = "slugs"
	collMarks    = "index_marks"
	collLocks    = "locks"
	collLeases   = "leases"
	collMeta     = "meta"
	collReplicas = "replicas"
)

// Sequence names in the counters collection.
const (
	seqPost = "post"
	seqTerm = "term"
	seqUser = "user"
	seqMark = "mark"
)

// serverSelection is how long an operation waits for a reachable server.
const serverSelection = 5 * time.Second

// DefaultTimeout is the deadline of every operation the store sends whose
// context has none (WithTimeout).
const DefaultTimeout = 10 * time.Second

// cleanupTimeout bounds the best-effort work done after a write landed or
// failed (unlocking, releasing slugs, renewing marks), which runs even when
// the caller's context is already done.
const cleanupTimeout = 10 * time.Second

// Store is a repository.Store backed by a MongoDB database. It is safe for
// concurrent use, also by several processes sharing the database.
//
// Its methods are declared on one type per concern, each holding the
// shared connection (conn) and each in the file of its concern:
// recordStore (posts.go), labelStore (terms.go), accountStore (users.go),
// webhookStore (webhooks.go), sourceStore (sources.go), markQueue
// (marks.go), aggregateReads (aggregates.go) and migrator (migrate.go). Store composes them and
// declares only the indexes, the lease, the job state and its lifetime.
type Store struct {
	*conn
	recordStore
	labelStore
	accountStore
	webhookStore
	sourceStore
	markQueue
	aggregateReads
	migrator
}

// conn is the connection and the state every part of the store shares.
// The steps the writes of several parts share are declared on the types
// it embeds, one per concern: layoutCodec (IDs and documents of the
// current layout), lockTable (item locks), sequencer (IDs), slugTable
// (slug reservations), itemIO (document writes) and markWriter (the index
// marks of a write). Each of them holds the conn back.
type conn struct {
	layoutCodec
	lockTable
	sequencer
	slugTable
	itemIO
	markWriter

	client    *mongo.Client
	db        *mongo.Database
	posts     *mongo.Collection
	terms     *mongo.Collection
	users     *mongo.Collection
	tokens    *mongo.Collection
	counters  *mongo.Collection
	claims    *mongo.Collection
	slugs     *mongo.Collection
	marks     *mongo.Collection
	locks     *mongo.Collection
	leases    *mongo.Collection
	meta      *mongo.Collection
	replicas  *mongo.Collection
	closeOnce sync.Once
	closeErr  error
	// noMaxAccumulator is set on servers without $max in $group
	// (FerretDB v1; aggregates.go).
	noMaxAccumulator bool
	// ferretDB is set on FerretDB v1, whose SQLite handler reads only a
	// filter of exactly {_id: <string>} from its index: every other
	// filter scans and decodes the whole collection in Go. Where a
	// compare-and-delete or compare-and-replace runs under the item lock
	// anyway, it is then split into _id look-ups (marks.go, items.go).
	ferretDB bool
	// byIDLookups reads records by several IDs with one find per ID
	// (findByIDs): set on FerretDB unless WithMongoDBPlan.
	byIDLookups bool
	// lockWait bounds a write's wait for a busy item's lock (WithLockWait;
	// 0: DefaultLockWait).
	lockWait time.Duration
	// maxDraws bounds the values one new ID may draw (0: the constant
	// maxDraws; tests lower it: WithMaxDrawsForTest).
	maxDraws int
	// replica is this process's replica identity (WithReplica; empty:
	// none), instance a random ID drawn at Open, and openedAt the
	// server's clock then: item locks record the first two, so that a
	// restarted replica breaks its crashed predecessor's locks at once
	// (locks.go, predecessors).
	replica, instance string
	openedAt          time.Time
	// clock estimates the server's clock (clock.go).
	clock serverClock
	// layout is the layout this store writes, 1 or 2 (migrate.go); it
	// only grows.
	layout atomic.Int32
	// mixed is set while records in the numeric layout may exist; on
	// FerretDB reads look for that form only then (migrate.go).
	mixed atomic.Bool
	// layoutMu guards migrated, what the last migration did.
	layoutMu sync.Mutex
	migrated MigrationStats
	// termCounts reuses term counts on FerretDB (termcounts.go).
	termCounts termCountsMemo
	// timeout is the deadline of each operation (WithTimeout); 0 means
	// none.
	timeout time.Duration
	// rereadTimeout, when set, bounds the re-reads that decide whether a
	// failed write landed (storedDoc) instead of cleanupContext's bound
	// (tests set it: WithRereadTimeoutForTest).
	rereadTimeout time.Duration
	// The background index build (buildIndexes): stopIndexes cancels it,
	// indexesDone is closed when it has ended, with indexErr set.
	stopIndexes context.CancelFunc
	indexesDone chan struct{}
	indexErr    error
}

var _ repository.Store = (*Store)(nil)

// newStore returns the store working on c, with c's parts pointing back
// at it.
func newStore(c *conn) *Store {
	c.layoutCodec = layoutCodec{c}
	c.lockTable = lockTable{c}
	c.sequencer = sequencer{c}
	c.slugTable = slugTable{c}
	c.itemIO = itemIO{c}
	c.markWriter = markWriter{c}
	return &Store{
		conn:           c,
		recordStore:    recordStore{c},
		labelStore:     labelStore{c, recordStore{c}},
		accountStore:   accountStore{c},
		webhookStore:   webhookStore{c},
		sourceStore:    sourceStore{c},
		markQueue:      markQueue{c},
		aggregateReads: aggregateReads{c},
		migrator:       migrator{c},
	}
}

// Option changes how Open connects.
type Option func(*openOptions)

// openOptions are what the Options set.
type openOptions struct {
	client      *options.ClientOptions
	mongoDBPlan bool
	// now is the local clock (time.Now; tests replace it).
	now func() time.Time
	// rereadTimeout is conn.rereadTimeout (0: cleanupContext's bound;
	// tests set it).
	rereadTimeout time.Duration
	// noIndexBuild skips the background build of the non-unique indexes
	// (tests of results, not plans, set it: WithoutIndexBuildForTest).
	noIndexBuild bool
	// lockWait is conn.lockWait (WithLockWait).
	lockWait time.Duration
	// maxDraws is conn.maxDraws (WithMaxDrawsForTest).
	maxDraws int
	// replica is conn.replica (WithReplica).
	replica string
}

// WithLockWait sets how long a write waits for a busy item (another
// writer holding its lock: the same record, a name or slug being
// reserved) before it fails, answered 503 (default DefaultLockWait; 0
// keeps the default). Tests on a busy machine bound it by their own
// deadline instead.
func WithLockWait(d time.Duration) Option {
	return func(o *openOptions) { o.lockWait = d }
}

// WithReplica names this process's replica identity, as its lease does
// (REPLICA_ID, else the host name: see Lease). The store records it, with
// a random instance ID drawn at Open, in every item lock it takes. A lock
// held under this identity by another instance, taken before this store
// opened, was left by this replica's previous process, which crashed
// holding it (a replica runs one process at a time: two live processes
// with one identity are refused, ErrDuplicateReplica); it is broken at
// once instead of after the lock lease (30 s), so that a replica restarted
// after a crash does not wait on its own dead locks. Without it (or for
// locks of other identities) only the lease breaks a lock.
func WithReplica(id string) Option {
	return func(o *openOptions) { o.replica = id }
}

// WithTimeout sets the deadline of every operation the store sends whose
// context has none (default DefaultTimeout; 0 means none):
// the driver's client-side timeout (timeoutMS), which also sends the
// remaining time to the server as maxTimeMS, so that neither the process
// nor the server works on a command longer. A store call that sends
// several commands gives each this long, and waiting for a busy item's
// lock is bounded apart (WithLockWait). Requests run with a context without a
// deadline, so this is what bounds their store calls.
func WithTimeout(d time.Duration) Option {
	return func(o *openOptions) {
		if d > 0 {
			o.client.SetTimeout(d)
		} else {
			o.client.Timeout = nil
		}
	}
}

// WithCommandMonitor reports every command the store sends to m (the
// command-count tests and the benchmark count round trips with it).
func WithCommandMonitor(m *event.CommandMonitor) Option {
	return func(o *openOptions) { o.client.SetMonitor(m) }
}

// WithMongoDBPlan makes the store send the commands it sends to MongoDB
// even on FerretDB: reads of several records by ID as one {_id: {$in}}
// find (which FerretDB answers by decoding the whole collection) rather
// than one find per ID, and a replace guarded by its revision in the
// filter rather than by a look-up first. The results are the same; the
// command-count tests use it to pin MongoDB's counts on the embedded
// FerretDB.
func WithMongoDBPlan() Option {
	return func(o *openOptions) { o.mongoDBPlan = true }
}

// Open connects to the MongoDB server at uri, checks that it answers,
// creates the unique indexes writes rely on and brings the data to the
// current layout before returning. The other indexes (declaredIndexes) are
// built in the background, so that a new index on a large collection does
// not hold up the start: queries are answered meanwhile, some by scanning.
// WaitIndexes reports when they are built.
func Open(ctx context.Context, uri, database string, opts ...Option) (*Store, error) {
	if database == "" {
		return nil, errors.New("mongo: open: empty database name")
	}
	oo := &openOptions{client: clientOptions(uri), now: time.Now}
	for _, o := range opts {
		o(oo)
	}
	client, err := mongo.Connect(oo.client)
	if err != nil {
		return nil, fmt.Errorf("mongo: connect: %w", err)
	}
	if err := client.Ping(ctx, nil); err != nil {
		client.Disconnect(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("mongo: no server answers at %s: %s", RedactURI(uri), lastServerError(err))
	}
	db := client.Database(database)
	s := newStore(&conn{
		client:   client,
		db:       db,
		posts:    db.Collection(collPosts),
		terms:    db.Collection(collTerms),
		users:    db.Collection(collUsers),
		tokens:   db.Collection(collTokens),
		counters: db.Collection(collCounters),
		claims:   db.Collection(collClaims),
		slugs:    db.Collection(collSlugs),
		marks:    db.Collection(collMarks),
		locks:    db.Collection(collLocks),
		leases:   db.Collection(collLeases),
		meta:     db.Collection(collMeta),
		clock:    serverClock{now: oo.now},
		replicas: db.Collection(collReplicas),
	})
	if err := s.calibrate(ctx); err != nil {
		// Not fatal: the local clock stands in until a reading succeeds.
		s.clock.tried = oo.now()
	}
	ferret, err := isFerretDB(ctx, db)
	if err != nil {
		client.Disconnect(context.WithoutCancel(ctx))
		return nil, err
	}
	if oo.client.Timeout != nil {
		s.timeout = *oo.client.Timeout
	}
	s.rereadTimeout = oo.rereadTimeout
	s.lockWait = oo.lockWait
	s.maxDraws = oo.maxDraws
	if oo.replica != "" {
		s.replica, s.instance, s.openedAt = oo.replica, randomInstance(), s.dbNow(ctx)
	}
	s.noMaxAccumulator = ferret
	s.ferretDB = ferret && !oo.mongoDBPlan
	s.byIDLookups = s.ferretDB
	if err := s.ensureIndexes(ctx, true); err != nil {
		client.Disconnect(context.WithoutCancel(ctx))
		return nil, err
	}
	if err := s.readLayout(ctx); err != nil {
		client.Disconnect(context.WithoutCancel(ctx))
		return nil, err
	}
	if err := s.checkMixed(ctx); err != nil {
		client.Disconnect(context.WithoutCancel(ctx))
		return nil, err
	}
	if err := s.backfillNameKeys(ctx); err != nil {
		client.Disconnect(context.WithoutCancel(ctx))
		return nil, err
	}
	if oo.noIndexBuild {
		s.indexesDone = make(chan struct{})
		close(s.indexesDone)
		return s, nil
	}
	s.startIndexBuild(ctx)
	return s, nil
}

// defaultWriteConcern is the write concern of a URI that names none: a
// write is acknowledged once a majority of the replica set has it in its
// journal, so an acknowledged write survives the loss of the primary and
// a crash of every member.
func defaultWriteConcern() *writeconcern.WriteConcern {
	j := true
	return &writeconcern.WriteConcern{W: writeconcern.WCMajority, Journal: &j}
}

// clientOptions returns the driver options for uri: a server selection
// bounded by serverSelection (a server that cannot be selected fails the
// call, at start or later, which the API answers with 503, instead of
// waiting the driver's default 30 s), DefaultTimeout unless the URI sets
// timeoutMS, and defaultWriteConcern unless the URI sets w, journal or
// wtimeoutMS. Retryable writes and reads stay on (the driver's default)
// unless the URI turns them off; the driver uses them on replica sets.
func clientOptions(uri string) *options.ClientOptions {
	co := options.Client().ApplyURI(uri).SetServerSelectionTimeout(serverSelection)
	if co.Timeout == nil {
		co.SetTimeout(DefaultTimeout)
	}
	if co.WriteConcern == nil {
		co.SetWriteConcern(defaultWriteConcern())
	}
	return co
}

// indexSpec is an index the store declares: the collection it is on, its
// keys in order and whether it is unique.
type indexSpec struct {
	coll   string
	keys   bson.D
	unique bool
}

// asc returns ascending index or sort keys on fields, in order.
func asc(fields ...string) bson.D {
	d := make(bson.D, len(fields))
	for i, f := range fields {
		d[i] = bson.E{Key: f, Value: 1}
	}
	return d
}

// pendingMarksSort is the order of PendingMarks: oldest first, then by seq,
// then by _id (seqs may repeat on FerretDB v1). An index with exactly these
// keys is declared, so that the sort reads the index in order and a limit
// stops after limit documents instead of sorting every pending mark.
var pendingMarksSort = asc("at", "seq", "_id")

// pageByKindIndex serves FindPosts under its most common filter, a kind
// (paging venues, organizers or images by AfterID, sorted by id): it
// answers the kind by equality and the page by a range scan in sort order.
var pageByKindIndex = asc("kind", fieldID)

// declaredIndexes returns every index the queries rely on, besides _id.
func declaredIndexes() []indexSpec {
	var out []indexSpec
	add := func(coll string, keys ...bson.D) {
		for _, k := range keys {
			out = append(out, indexSpec{coll: coll, keys: k})
		}
	}
	add(collPosts,
		asc(fieldID),
		pageByKindIndex,
		asc("kind", "status"),
		asc("event.venues"),
		asc("event.organizers"),
		asc("event.categories"),
		asc("event.tags"),
		asc("image.url"),
		asc("event.parent"),
		// AccountDocuments: one account's events.
		asc("kind", "author"),
		// SourceItems: the events a source imported, by ID.
		sourceItemsIndex,
	)
	add(collTerms, asc(fieldID), asc("taxonomy", "parent"), asc("parent"), asc("taxonomy", "name_keys"))
	// Unique logins: FerretDB v1 enforces unique secondary indexes
	// (SQLite unique indexes), checked by the tests.
	out = append(out, indexSpec{coll: collUsers, keys: asc("login"), unique: true})
	add(collTokens, asc("user_id"))
	add(collSlugs, asc("scope", "owner"))
	// DueMarks and FailingMarks: the marks waiting for a retry.
	add(collMarks, pendingMarksSort, failingMarksSort)
	add(collLeases, asc("name", "term"))
	add(collDeliveries,
		asc("status", "seq"),
		asc("webhook_id", "seq"),
		// DueEndpointDeliveries: one endpoint's pending line.
		asc("status", "webhook_id", "seq"),
	)
	// ListSourceRuns and PruneSourceRuns: one source's runs by ID.
	add(collSourceRuns, runsIndex)
	return out
}

// obsoleteIndexes are indexes earlier versions created that a declared
// index replaces: {at, seq} on index_marks, a prefix of pendingMarksSort.
// ensureIndexes drops them (an index costs every write of its collection).
var obsoleteIndexes = []indexSpec{
	{coll: collMarks, keys: asc("at", "seq")},
}

// indexBuildTimeout bounds the build of one index in the background: the
// build runs on the server with this as its maxTimeMS (the store's
// operation timeout would abort a long build).
const indexBuildTimeout = 24 * time.Hour

// startIndexBuild builds the non-unique declared indexes and drops the
// obsolete ones in the background, until Close.
func (s *Store) startIndexBuild(ctx context.Context) {
	bctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.stopIndexes = cancel
	s.indexesDone = make(chan struct{})
	go func() {
		defer close(s.indexesDone)
		s.indexErr = s.ensureIndexes(bctx, false)
	}()
}

// WaitIndexes waits until the background index build that Open started has
// ended, or ctx is done, and returns the build's error (or ctx's). A
// failed build leaves queries slower, not wrong; the next Open retries it.
func (s *Store) WaitIndexes(ctx context.Context) error {
	select {
	case <-s.indexesDone:
		return s.indexErr
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ensureIndexes creates the declared indexes that are unique (when unique
// is set) or the others (when not), then, with the others, drops the
// obsolete ones. Creating an index that exists with the same keys and
// options is a no-op; so is dropping one that does not exist. Each build
// gets indexBuildTimeout, whatever ctx's deadline or the store's timeout.
func (s *Store) ensureIndexes(ctx context.Context, unique bool) error {
	// One createIndexes command per index: FerretDB v1.24 panics (and drops
	// the connection) when one command lists two or more indexes that
	// already exist, which is every Open after the first
	// (validateIndexesForCreation deletes from a slice it indexes with
	// stale positions). On MongoDB this only costs a few round trips.
	for _, ix := range declaredIndexes() {
		if ix.unique != unique {
			continue
		}
		m := mongo.IndexModel{Keys: ix.keys}
		if ix.unique {
			m.Options = options.Index().SetUnique(true)
		}
		bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), indexBuildTimeout)
		stop := context.AfterFunc(ctx, cancel)
		_, err := s.db.Collection(ix.coll).Indexes().CreateOne(bctx, m)
		stop()
		cancel()
		if err != nil {
			return fmt.Errorf("mongo: create index %v on %s: %w", ix.keys, ix.coll, err)
		}
	}
	if unique {
		return nil
	}
	for _, ix := range obsoleteIndexes {
		if err := s.dropIndex(ctx, ix); err != nil {
			return err
		}
	}
	return nil
}

// dropIndex drops the index ix if it exists. It lists the indexes first:
// FerretDB v1.24 drops the connection when asked to drop an index that
// does not exist.
func (s *Store) dropIndex(ctx context.Context, ix indexSpec) error {
	coll := s.db.Collection(ix.coll)
	cur, err := coll.Indexes().List(ctx)
	if err != nil {
		return fmt.Errorf("mongo: list indexes of %s: %w", ix.coll, err)
	}
	var have []struct {
		Name string `bson:"name"`
		Key  bson.D `bson:"key"`
	}
	if err := cur.All(ctx, &have); err != nil {
		return fmt.Errorf("mongo: list indexes of %s: %w", ix.coll, err)
	}
	for _, h := range have {
		if sameKeys(h.Key, ix.keys) {
			if err := coll.Indexes().DropOne(ctx, h.Name); err != nil {
				return fmt.Errorf("mongo: drop index %s of %s: %w", h.Name, ix.coll, err)
			}
		}
	}
	return nil
}

// sameKeys reports whether index keys a and b name the same fields in the
// same order with the same directions (servers answer a direction as an
// int32, int64 or double).
func sameKeys(a, b bson.D) bool {
	if len(a) != len(b) {
		return false
	}
	dir := func(v any) (float64, bool) {
		switch n := v.(type) {
		case int:
			return float64(n), true
		case int32:
			return float64(n), true
		case int64:
			return float64(n), true
		case float64:
			return n, true
		}
		return 0, false
	}
	for i := range a {
		da, oka := dir(a[i].Value)
		db, okb := dir(b[i].Value)
		if a[i].Key != b[i].Key || !oka || !okb || da != db {
			return false
		}
	}
	return true
}

// FerretDB reports whether the store runs its FerretDB plan: the server
// is FerretDB and WithMongoDBPlan was not given.
func (s *Store) FerretDB() bool { return s.ferretDB }

// Ping checks that the server answers.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.client.Ping(ctx, nil); err != nil {
		return fmt.Errorf("mongo: ping: %w", err)
	}
	return nil
}

// Close disconnects from the server. Closing twice is not an error.
func (s *Store) Close(ctx context.Context) error {
	s.closeOnce.Do(func() {
		if s.stopIndexes != nil {
			s.stopIndexes()
			<-s.indexesDone
		}
		if err := s.client.Disconnect(ctx); err != nil && !errors.Is(err, mongo.ErrClientDisconnected) {
			s.closeErr = fmt.Errorf("mongo: close: %w", err)
		}
	})
	return s.closeErr
}

// now returns the current time as stored: UTC, whole milliseconds.
func now() time.Time { return time.Now().UTC().Truncate(time.Millisecond) }

// storedTime returns t as the engine stores it: UTC, truncated to the second
// (BSON keeps milliseconds; whole seconds make round trips exact).
func storedTime(t time.Time) time.Time { return t.Truncate(time.Second).UTC() }

// cleanupContext returns a context for best-effort work that must run even
// when ctx is done, bounded by the store's operation timeout (WithTimeout)
// or, without one, by cleanupTimeout.
func (s *conn) cleanupContext(ctx context.Context) (context.Context, context.CancelFunc) {
	d := cleanupTimeout
	if s.timeout > 0 {
		d = s.timeout
	}
	return context.WithTimeout(context.WithoutCancel(ctx), d)
}

// backoff returns the pause before retry number attempt (0-based): 1ms
// doubling to 32ms, with ±50% jitter so that contenders spread out.
func backoff(attempt int) time.Duration {
	d := time.Millisecond << min(attempt, 5)
	return d/2 + rand.N(d)
}

// sleep pauses for d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// newToken returns a random token that identifies one lock holder.
func newToken() string {
	b := make([]byte, 12)
	crand.Read(b) // never fails
	return hex.EncodeToString(b)
}

// itemKey names an item for locks and marks: "post:12", "term:5".
func itemKey(kind repository.MarkKind, id int64) string {
	return string(kind) + ":" + strconv.FormatInt(id, 10)
}

// validFieldName reports whether s can be used as one element of a field
// path (a language code in "title.<lang>") and of a slug reservation key.
func validFieldName(s string) bool {
	return s != "" && !strings.ContainsAny(s, ".$:\x00")
}

// asDuplicate returns err marked as repository.ErrDuplicate when it is the
// server's duplicate key error (a unique index refused the write), so that
// callers tell a conflict (the API answers 409) from a failing store (503).
// Other errors, and nil, are returned as they are.
func asDuplicate(err error) error {
	if err == nil || errors.Is(err, repository.ErrDuplicate) || !mongo.IsDuplicateKeyError(err) {
		return err
	}
	return fmt.Errorf("%w: %w", repository.ErrDuplicate, err)
}

// isNoDocuments reports whether err means "no document matched".
func isNoDocuments(err error) bool { return errors.Is(err, mongo.ErrNoDocuments) }

// RedactURI returns a MongoDB URI without its credentials and options, to
// name the server in messages.
func RedactURI(uri string) string {
	u, err := url.Parse(uri)
	if err != nil || u.Host == "" {
		return "(unparsable URI)"
	}
	return u.Scheme + "://" + u.Host + u.Path
}

// lastServerError shortens a server selection error to the last error of
// the server ("dial tcp 127.0.0.1:1: connect: connection refused"), which
// says what failed; other errors are returned whole.
func lastServerError(err error) string {
	msg := err.Error()
	if _, rest, ok := strings.Cut(msg, "Last error: "); ok {
		if i := strings.Index(rest, " }"); i >= 0 {
			rest = rest[:i]
		}
		return rest
	}
	return msg
}
