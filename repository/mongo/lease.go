package mongo

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// # The leader lease
//
// Several service processes may share one database; the sync worker and
// the scheduled jobs must run in exactly one of them. They run in the
// holder of a lease kept in the leases collection.
//
// The lease cannot be one document renewed by updates: FerretDB v1 updates
// are not atomic (see the package documentation), so a renewal racing with
// a take-over could overwrite the new holder's document and leave two
// processes believing they lead. Like the item locks, the lease is built on
// the one atomic primitive both servers offer, inserting a unique _id. It is
// a chain of immutable documents, one per term:
//
//	{_id: "leader:00000000000000000042", name: "leader", term: 42,
//	 holder: "calendar-1", instance: "9f3c…", at: …, expires: …}
//
// The document with the highest term says who holds the lease. Acquiring,
// taking over and renewing all insert the document of the next term: of
// several processes racing for a term exactly one insert succeeds. The
// holder renews every ttl/3 (a new term); a released lease is a term with
// an empty holder, which anyone may take at once. The two latest terms are
// kept and older ones deleted, so a process working from a stale read can
// only re-insert a long-gone low term, and the check after every insert
// ("is my term the highest?") rejects that.
//
// Expiry does not compare clocks of different machines. A process that
// does not hold the lease watches the latest term and takes it over when
// it has seen no new term for a whole ttl, measured on its own monotonic
// clock. The holder counts itself leader only until ttl-ttl/3 after the
// start of its last successful renewal, which is before any other process
// could have seen that renewal: it stops leading at least ttl/3 before
// anyone can take over, even when it cannot reach the database.
//
// # Fencing
//
// A holder stops leading on its own clock, but a process that pauses (a
// stopped VM, a long GC, SIGSTOP) between its check and its write wakes
// believing it still leads while another process took over. Every term
// therefore carries an epoch, the term in which its holder acquired the
// lease (renewals keep it), and Fence compares it with the latest term in
// the database: the work guarded by the lease calls it right before it
// writes, so a former holder finds out before writing, not a ttl later.
//
// # Replica identity
//
// The holder is the replica's stable identity (REPLICA_ID, by default the
// host name), and every process also draws a random instance ID. A process
// that finds the latest term held by its own identity but another instance
// before it ever held the lease is that replica restarted after a crash:
// its predecessor is dead, so it takes the lease back at once instead of
// waiting a whole ttl. A process that already held the lease and finds a
// term of its identity written by another instance has met a second live
// process with its identity (a misconfiguration): it stops leading, closes
// Conflict and stops keeping the lease (the service then exits with
// ErrDuplicateReplica). Until that next check (at most ttl/3) both may
// run the guarded work, which the sync worker tolerates (marks are
// cleared by version).

// LeaseHolderRenewals is how many renewals fit in one ttl: the holder
// renews (and others check) every ttl/LeaseHolderRenewals.
const LeaseHolderRenewals = 3

// ErrDuplicateReplica is the error of a process that found another live
// process holding the lease under its own identity (see Conflict).
var ErrDuplicateReplica = errors.New("mongo: another live process uses this replica identity (REPLICA_ID must be unique per process)")

// ErrLeaseNotHeld is returned by Lease.IsLeader when this process does not
// hold the lease.
var ErrLeaseNotHeld = errors.New("mongo: the lease is not held by this process")

// leaseDoc is one term of a lease.
type leaseDoc struct {
	ID     string `bson:"_id"`
	Name   string `bson:"name"`
	Term   int64  `bson:"term"`
	Holder string `bson:"holder"`
	// Instance tells apart processes of one Holder identity.
	Instance string `bson:"instance,omitempty"`
	// Epoch is the fencing token: the term in which the holder acquired
	// the lease, carried over by its renewals, so that it changes exactly
	// when another process (or another instance) takes the lease.
	Epoch int64 `bson:"epoch,omitempty"`
	// At and Expires are informational (the holder's clock): nobody
	// decides on them.
	At      time.Time `bson:"at"`
	Expires time.Time `bson:"expires"`
}

// Lease is a leader lease among the processes sharing the database (see
// the section above). It implements lease.Lease and gocron's Elector. It is
// safe for concurrent use.
type Lease struct {
	coll   *mongo.Collection
	name   string
	holder string
	// instance is this process's random ID (see "Replica identity").
	instance string
	ttl      time.Duration
	log      *slog.Logger
	// now is a monotonic clock (time.Now; tests replace it).
	now func() time.Time

	mu sync.Mutex
	// term is the term this process holds (0: none) and validUntil when
	// it stops counting itself leader without a renewal.
	term       int64
	validUntil time.Time
	// epoch is the epoch of the held term (see Fence).
	epoch int64
	// seenTerm is the latest term seen held by another process, since
	// seenAt.
	seenTerm int64
	seenAt   time.Time
	// held is the state last announced, changed is closed and replaced at
	// every change of it.
	held    bool
	changed chan struct{}
	// won counts the terms this process claimed; conflict is closed when
	// another live process with the same holder identity is found.
	won      int64
	conflict chan struct{}
	// previous is the holder of the term before the one this process
	// last claimed (its own after a renewal or a taking back).
	previous string
}

// Lease returns the lease called name, as seen by holder (the replica's
// stable identity, REPLICA_ID; the process adds a random instance ID, see
// "Replica identity"), expiring ttl after its holder stops renewing it. Nothing is written until Keep (or IsLeader
// answers for a kept lease). logger (nil: slog.Default) gets a Warn line
// per failed renewal and Debug lines per claimed term and change of hold;
// lease.LogChanges logs the transitions themselves.
func (s *Store) Lease(name, holder string, ttl time.Duration, logger *slog.Logger) *Lease {
	if logger == nil {
		logger = slog.Default()
	}
	return &Lease{coll: s.leases, name: name, holder: holder, instance: randomInstance(), ttl: ttl, log: logger, now: time.Now,
		changed: make(chan struct{}), conflict: make(chan struct{})}
}

// randomInstance returns a new random instance ID.
func randomInstance() string {
	b := make([]byte, 8)
	crand.Read(b) // never fails
	return hex.EncodeToString(b)
}

// Conflict returns a channel closed when this process has found another
// live process holding the lease under its identity; it then no longer
// leads or keeps the lease, and the service should stop with
// ErrDuplicateReplica.
func (l *Lease) Conflict() <-chan struct{} { return l.conflict }

// IsLeader returns nil while this process holds the lease.
func (l *Lease) IsLeader(context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.term != 0 && l.now().Before(l.validUntil) {
		return nil
	}
	return fmt.Errorf("%w (%s)", ErrLeaseNotHeld, l.name)
}

// Fence checks with the database, not only with this process's clock,
// that this process still holds the lease: that the latest term is its own
// and of the epoch in which it acquired the lease. It returns that epoch
// (the fencing token), or an error wrapping ErrLeaseNotHeld when another
// process took the lease since; this process then stops leading at once.
// Work guarded by the lease calls it right before it writes: a holder
// that paused past its lease (its clock stopped with it, so that IsLeader
// still answers nil) learns there that it lost it, instead of writing over
// the new holder's work.
func (l *Lease) Fence(ctx context.Context) (int64, error) {
	l.mu.Lock()
	held := l.term != 0 && l.now().Before(l.validUntil)
	epoch := l.epoch
	l.mu.Unlock()
	if !held {
		return 0, fmt.Errorf("%w (%s)", ErrLeaseNotHeld, l.name)
	}
	cur, err := l.latest(ctx)
	if err != nil {
		return 0, err
	}
	if cur != nil && cur.Holder == l.holder && cur.Instance == l.instance && cur.Epoch == epoch {
		return epoch, nil
	}
	l.mu.Lock()
	if l.epoch == epoch {
		l.term = 0
	}
	l.mu.Unlock()
	l.settle()
	if cur == nil {
		return 0, fmt.Errorf("%w (%s): the lease is gone", ErrLeaseNotHeld, l.name)
	}
	return 0, fmt.Errorf("%w (%s): epoch %d ended, %q holds term %d of epoch %d", ErrLeaseNotHeld, l.name, epoch, cur.Holder, cur.Term, cur.Epoch)
}

// LeaseDetails implements lease.Details: this replica's identity and,
// when held, the term, the previous holder and the epoch (see Fence), for
// the lines that log the lease's transitions.
func (l *Lease) LeaseDetails(held bool) []any {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := []any{"holder", l.holder, "instance", l.instance}
	if held {
		out = append(out, "term", l.term, "previous", l.previous, "epoch", l.epoch)
	}
	return out
}

// Changed returns a channel closed at the next change of IsLeader's
// answer (observed by Keep).
func (l *Lease) Changed() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.changed
}

// Keep acquires, takes over and renews the lease every ttl/3 until ctx
// ends. It does not release it: see Release.
func (l *Lease) Keep(ctx context.Context) {
	interval := l.ttl / LeaseHolderRenewals
	for {
		sctx, cancel := context.WithTimeout(ctx, interval)
		err := l.step(sctx)
		cancel()
		if ctx.Err() != nil || errors.Is(err, ErrDuplicateReplica) {
			return
		}
		if err != nil {
			l.log.Warn("lease renewal failed", "lease", l.name, "holder", l.holder, "err", err)
		}
		wait := interval
		l.mu.Lock()
		if l.term != 0 {
			// Wake when the holder's own validity ends, to announce it.
			wait = max(min(wait, l.validUntil.Sub(l.now())), time.Millisecond)
		}
		l.mu.Unlock()
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		l.settle()
	}
}

// Release gives the lease up when this process holds it: it writes a term
// without holder, which any process may take at once. It is meant for a
// graceful shutdown, after the work the lease guards has stopped.
func (l *Lease) Release(ctx context.Context) error {
	l.mu.Lock()
	term := l.term
	l.term = 0
	l.mu.Unlock()
	l.settle()
	if term == 0 {
		return nil
	}
	cur, err := l.latest(ctx)
	if err != nil || cur == nil || cur.Term != term || cur.Holder != l.holder || cur.Instance != l.instance {
		return err
	}
	_, err = l.coll.InsertOne(ctx, l.doc(term+1, "", 0))
	if err != nil && !mongo.IsDuplicateKeyError(err) {
		return fmt.Errorf("mongo: release lease %s: %w", l.name, err)
	}
	return nil
}

// step reads the latest term and claims the next one when this process
// holds the lease (a renewal), when the lease is released or absent, or
// when nobody renewed it for a whole ttl.
func (l *Lease) step(ctx context.Context) error {
	defer l.settle()
	start := l.now()
	cur, err := l.latest(ctx)
	if err != nil {
		return err
	}
	l.mu.Lock()
	sameID := cur != nil && cur.Holder == l.holder
	mine := sameID && cur.Instance == l.instance
	if !mine {
		l.term = 0 // another process holds a later term
	}
	var claim bool
	switch {
	case sameID && !mine && l.won > 0:
		// This process led, and a term of its identity was written by
		// another process since: two live processes share the identity.
		select {
		case <-l.conflict:
		default:
			close(l.conflict)
			l.log.Error("another live process uses this replica identity: no longer leading", "lease", l.name, "holder", l.holder,
				"instance", l.instance, "other_instance", cur.Instance, "term", cur.Term)
		}
		l.mu.Unlock()
		return ErrDuplicateReplica
	case mine, cur == nil, cur.Holder == "":
		claim = true
	case sameID:
		// The same replica restarted: its predecessor is dead (a live one
		// would have been refused above on its side). Take over at once.
		claim = true
	default:
		if cur.Term != l.seenTerm {
			l.seenTerm, l.seenAt = cur.Term, start
		}
		claim = start.Sub(l.seenAt) >= l.ttl
	}
	l.mu.Unlock()
	if !claim {
		return nil
	}
	next := int64(1)
	if cur != nil {
		next = cur.Term + 1
	}
	// A renewal keeps the epoch; an acquisition starts a new one.
	epoch := next
	if mine && cur.Epoch != 0 {
		epoch = cur.Epoch
	}
	won, err := l.claim(ctx, next, epoch)
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case won:
		l.won++
		l.previous = ""
		if cur != nil {
			l.previous = cur.Holder
		}
		if !mine {
			// The transition itself is logged once by lease.LogChanges
			// ("lease acquired", "lease taken back"), with LeaseDetails.
			l.log.Debug("lease term claimed", "lease", l.name, "holder", l.holder, "instance", l.instance, "term", next, "previous", l.previous)
		}
		l.term, l.epoch, l.validUntil = next, epoch, start.Add(l.ttl-l.ttl/LeaseHolderRenewals)
	case err == nil:
		l.term = 0 // another process claimed the term first
	}
	return err
}

// claim inserts the document of term (in epoch) and reports whether this
// process now holds the lease; it deletes the terms before the previous
// one.
func (l *Lease) claim(ctx context.Context, term, epoch int64) (bool, error) {
	if _, err := l.coll.InsertOne(ctx, l.doc(term, l.holder, epoch)); err != nil {
		if mongo.IsDuplicateKeyError(err) {
			return false, nil
		}
		return false, fmt.Errorf("mongo: claim lease %s: %w", l.name, err)
	}
	// A process working from a stale read may insert a term whose
	// document was already deleted; only the highest term holds.
	cur, err := l.latest(ctx)
	if err != nil {
		return false, err
	}
	if cur == nil || cur.Term != term {
		return false, nil
	}
	if _, err := l.coll.DeleteMany(ctx, bson.D{{Key: "name", Value: l.name}, {Key: "term", Value: bson.D{{Key: "$lt", Value: term - 1}}}}); err != nil {
		l.log.Warn("lease: deleting old terms failed", "lease", l.name, "err", err)
	}
	return true, nil
}

// latest returns the document of the highest term (nil when there is none).
func (l *Lease) latest(ctx context.Context) (*leaseDoc, error) {
	var d leaseDoc
	// The guard term of an upgraded database is not a term (migrate.go).
	err := l.coll.FindOne(ctx, bson.D{{Key: "name", Value: l.name}, {Key: "term", Value: bson.D{{Key: "$lt", Value: int64(leaseGuardTerm)}}}},
		options.FindOne().SetSort(bson.D{{Key: "term", Value: -1}})).Decode(&d)
	switch {
	case isNoDocuments(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("mongo: read lease %s: %w", l.name, err)
	}
	return &d, nil
}

// doc returns the document of term held by holder ("" for a release) in
// epoch.
func (l *Lease) doc(term int64, holder string, epoch int64) leaseDoc {
	at := now()
	d := leaseDoc{ID: fmt.Sprintf("%s:%020d", l.name, term), Name: l.name, Term: term, Holder: holder, Epoch: epoch,
		At: at, Expires: at.Add(l.ttl)}
	if holder != "" {
		d.Instance = l.instance
	}
	return d
}

// settle announces a change of IsLeader's answer on the Changed channel.
func (l *Lease) settle() {
	l.mu.Lock()
	defer l.mu.Unlock()
	held := l.term != 0 && l.now().Before(l.validUntil)
	if held == l.held {
		return
	}
	// The service logs the transition (lease.LogChanges).
	l.log.Debug("lease hold changed", "lease", l.name, "holder", l.holder, "held", held, "term", l.term)
	l.held = held
	close(l.changed)
	l.changed = make(chan struct{})
}
