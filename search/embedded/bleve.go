package embedded

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	bleve "github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	blevesearch "github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	"github.com/golang/snappy"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/search/memindex"
)

// openTimeout bounds the wait for another holder of an index's file lock.
const openTimeout = "1s"

// ErrLocked reports that another holder of an index's file lock (another
// process, or another Open in this one) kept it for openTimeout.
var ErrLocked = errors.New("the index is locked by another process")

// fingerprintKey is the internal key under which an index records the
// fingerprint of the mapping it was built with.
var fingerprintKey = []byte("eventcal.mapping")

// Engine is the Bleve implementation of search.Engine and
// search.Rebuilder. It is safe for concurrent use.
type Engine struct {
	dir string

	// mu guards cur. Every search and write holds it for reading for its
	// whole call; a committing rebuild holds it for writing only to swap
	// cur, so an index is never closed under a running query.
	mu  sync.RWMutex
	cur *generation

	// rebuildMu guards rebuilding, the open rebuild (nil when none).
	rebuildMu  sync.Mutex
	rebuilding *rebuild

	closeOnce sync.Once
	closeErr  error
}

// generation is one set of the three indexes.
type generation struct {
	// n numbers the generation: 0 uses the plain directory names
	// (events.bleve), n > 0 the suffixed ones (events.bleve.<n>).
	n          int64
	events     *eventStore
	venues     bleve.Index
	organizers bleve.Index
	// queries answers event queries from the documents of events, loaded
	// at open and kept in step by every event write.
	queries *memindex.Index
	// bulk is set on a rebuild's generation until Commit: its queries are
	// built in bulk (memindex.NewBulk) and its event writes apply them
	// beside the store's (see indexEvents).
	bulk bool
	// eventsMu orders event writes, so that the stored documents and
	// queries apply them in the same order.
	eventsMu sync.Mutex
	// closed is set once the indexes are closed: queries then fail as the
	// closed Bleve indexes do.
	closed atomic.Bool
	// jsonDocs is how many of the event documents were stored as JSON
	// (format 1) when the generation was opened: Outdated asks for a
	// rebuild, which writes them all in the binary form.
	jsonDocs int
	// placesMu orders place writes and guards placeSums.
	placesMu sync.Mutex
	// placeSums holds, by kind and ID, a fingerprint (placeSum) of each
	// place document this generation has indexed since it was opened.
	// Every event write makes the sync worker index its venues and
	// organizers again, whose documents seldom change (has_events and
	// the latest start only move now and then); a document equal to the
	// one indexed is left out of the batch, so that it costs no Bleve
	// batch, segment, merge or fsync. A deletion forgets the ID, and a
	// generation opened from disk starts empty (its first write of each
	// place is applied).
	placeSums map[search.PlaceKind]map[int64]uint64
}

var (
	_ search.Engine    = (*Engine)(nil)
	_ search.Rebuilder = (*Engine)(nil)
)

// current returns the live generation and a function that releases it;
// the generation stays open until then.
func (e *Engine) current() (*generation, func()) {
	e.mu.RLock()
	return e.cur, e.mu.RUnlock
}

// Open opens the indexes under dir, creating dir and the indexes when they
// do not exist. It opens the generation the manifest names and first
// deletes the index directories of every other generation (see the package
// documentation). When an index is missing, or was built with another
// mapping (see indexMapping and mappingVersion), all three are deleted and
// created empty: the index is derived data, and the sync worker repopulates
// an empty event index from the store (Worker.Populate). Rebuilding all
// three together keeps that rule sufficient. Settings are therefore
// reconciled here, and Init has nothing left to do.
func Open(dir string) (*Engine, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("bleve: create %s: %w", dir, err)
	}
	n, err := readManifest(dir)
	if err != nil {
		return nil, err
	}
	if err := removeOtherGenerations(dir, n); err != nil {
		return nil, err
	}
	g, err := openGeneration(dir, n)
	if err != nil {
		return nil, err
	}
	return &Engine{dir: dir, cur: g}, nil
}

// openGeneration opens the indexes of generation n, recreating all three
// empty when one is missing or was built with another mapping.
func openGeneration(dir string, n int64) (*generation, error) {
	opened := map[indexKind]bleve.Index{}
	var events *eventStore
	closeAll := func() {
		for _, idx := range opened {
			_ = idx.Close()
		}
		clear(opened)
		if events != nil {
			_ = events.close()
		}
	}
	current := true
	for _, k := range placeKinds {
		idx, ok, err := openExisting(indexPath(dir, k, n), indexMapping())
		if err != nil {
			closeAll()
			return nil, err
		}
		if idx != nil {
			opened[k] = idx
		}
		current = current && ok
	}
	events, ok, err := openEventStore(indexPath(dir, eventsIndex, n))
	if err != nil {
		closeAll()
		return nil, err
	}
	if !current || !ok {
		closeAll()
		g, err := createGeneration(dir, n)
		if err != nil {
			return nil, err
		}
		return g, nil
	}
	g := &generation{n: n, events: events, venues: opened[venuesIndex], organizers: opened[organizersIndex], queries: memindex.New()}
	loaded, err := events.load(g.queries.Apply)
	if err != nil {
		closeAll()
		return nil, err
	}
	g.jsonDocs = int(events.jsonDocs.Load())
	// The load read every page of the file through its mapping, which
	// nothing reads again until the next open. A failure costs resident
	// memory only.
	_ = events.releaseMapped()
	if loaded > 0 {
		// The decoded documents (the index keeps what it needs of them)
		// and the tokenizing's scratch are garbage now: return them to
		// the operating system rather than keep them resident.
		releaseMemory()
	}
	return g, nil
}

// createGeneration creates the three indexes of generation n, empty
// (replacing whatever is at their paths).
func createGeneration(dir string, n int64) (*generation, error) {
	opened := map[indexKind]bleve.Index{}
	closeAll := func() {
		for _, idx := range opened {
			_ = idx.Close()
		}
	}
	for _, k := range placeKinds {
		idx, err := create(indexPath(dir, k, n), indexMapping())
		if err != nil {
			closeAll()
			return nil, err
		}
		opened[k] = idx
	}
	events, err := createEventStore(indexPath(dir, eventsIndex, n))
	if err != nil {
		closeAll()
		return nil, err
	}
	return &generation{n: n, events: events, venues: opened[venuesIndex], organizers: opened[organizersIndex], queries: memindex.New()}, nil
}

// indexKinds lists the engine's indexes: the event store and the Bleve
// indexes of the places (placeKinds).
var indexKinds = []indexKind{eventsIndex, venuesIndex, organizersIndex}

// placeKinds lists the Bleve indexes.
var placeKinds = []indexKind{venuesIndex, organizersIndex}

// indexPath is the directory (the file, for the event store) of index k of
// generation n: <kind>.bleve, events.db, with ".<n>" after it when n > 0.
func indexPath(dir string, k indexKind, n int64) string {
	name := string(k) + ".bleve"
	if k == eventsIndex {
		name = string(k) + ".db"
	}
	if n > 0 {
		name += "." + strconv.FormatInt(n, 10)
	}
	return filepath.Join(dir, name)
}

// openExisting opens the index at path if there is one. ok says whether it
// was built with m; an index that is not is returned open (for the caller
// to close) with ok false.
func openExisting(path string, m *mapping.IndexMappingImpl) (idx bleve.Index, ok bool, err error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	idx, err = bleve.OpenUsing(path, map[string]interface{}{"bolt_timeout": openTimeout})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, false, fmt.Errorf("bleve: open %s: %w (one process per directory; waited %s for its lock)", path, ErrLocked, openTimeout)
	}
	if err != nil {
		return nil, false, fmt.Errorf("bleve: open %s (one process per directory): %w", path, err)
	}
	want, err := fingerprint(m)
	if err != nil {
		_ = idx.Close()
		return nil, false, err
	}
	got, err := idx.GetInternal(fingerprintKey)
	if err != nil {
		_ = idx.Close()
		return nil, false, fmt.Errorf("bleve: read %s: %w", path, err)
	}
	return idx, string(got) == want, nil
}

// create makes a new, empty scorch index at path (replacing whatever is
// there) and records m's fingerprint in it.
func create(path string, m *mapping.IndexMappingImpl) (bleve.Index, error) {
	if err := os.RemoveAll(path); err != nil {
		return nil, fmt.Errorf("bleve: remove %s: %w", path, err)
	}
	fp, err := fingerprint(m)
	if err != nil {
		return nil, err
	}
	idx, err := bleve.NewUsing(path, m, scorch.Name, scorch.Name, map[string]interface{}{"bolt_timeout": openTimeout})
	if err != nil {
		return nil, fmt.Errorf("bleve: create %s: %w", path, err)
	}
	if err := idx.SetInternal(fingerprintKey, []byte(fp)); err != nil {
		_ = idx.Close()
		return nil, fmt.Errorf("bleve: create %s: %w", path, err)
	}
	return idx, nil
}

// unavailable wraps an index failure as search.ErrUnavailable; a context
// error is returned as it is.
func unavailable(ctx context.Context, what string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	return fmt.Errorf("%w: bleve %s: %w", search.ErrUnavailable, what, err)
}

// Outdated reports whether the live generation's event store held
// documents in the JSON form of format 1 when it was opened: they are
// read back (start-up decodes them several times slower than the binary
// form), and the service runs a full rebuild (the zero-downtime one),
// which writes every document in the binary form, when this says so.
func (e *Engine) Outdated(ctx context.Context) (bool, error) {
	g, done := e.current()
	defer done()
	return g.jsonDocs > 0, ctx.Err()
}

// Init checks that the indexes are open. Open has already created them and
// reconciled their mappings.
func (e *Engine) Init(ctx context.Context) error { return e.Ping(ctx) }

// Ping checks that every index answers.
func (e *Engine) Ping(ctx context.Context) error {
	g, done := e.current()
	defer done()
	if err := g.events.ping(); err != nil {
		return unavailable(ctx, "ping", err)
	}
	for _, idx := range []bleve.Index{g.venues, g.organizers} {
		if _, err := idx.DocCount(); err != nil {
			return unavailable(ctx, "ping", err)
		}
	}
	return ctx.Err()
}

// Close closes the live indexes (and those of an open rebuild), releasing
// their locks. Later calls return the first call's result. An open
// rebuild's directories are left for the next Open to remove.
func (e *Engine) Close() error {
	e.closeOnce.Do(func() {
		e.rebuildMu.Lock()
		r := e.rebuilding
		e.rebuilding = nil
		e.rebuildMu.Unlock()
		if r != nil {
			r.mu.Lock()
			if !r.done {
				r.done = true
				_ = r.gen.close()
			}
			r.mu.Unlock()
		}
		e.mu.Lock()
		defer e.mu.Unlock()
		e.closeErr = e.cur.close()
	})
	return e.closeErr
}

// close closes the three indexes.
func (g *generation) close() error {
	g.closed.Store(true)
	return errors.Join(g.events.close(), g.venues.Close(), g.organizers.Close())
}

// place returns the index of a place kind.
func (g *generation) place(kind search.PlaceKind) (bleve.Index, error) {
	switch kind {
	case search.Venues:
		return g.venues, nil
	case search.Organizers:
		return g.organizers, nil
	}
	return nil, fmt.Errorf("bleve: unknown place kind %q", kind)
}

// apply runs a batch; it returns once the batch is searchable and persisted.
func apply(ctx context.Context, idx bleve.Index, b *bleve.Batch, what string) error {
	if b.Size() == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := idx.Batch(b); err != nil {
		return unavailable(ctx, what, err)
	}
	return nil
}

// IndexEvents adds or replaces events in one write.
func (e *Engine) IndexEvents(ctx context.Context, docs []search.EventDocument) error {
	g, done := e.current()
	defer done()
	return g.indexEvents(ctx, docs)
}

// indexEvents stores each document under its key (search.DocumentKey: one
// per occurrence) and, in the same transaction, deletes the stored documents of
// the batch's events that it does not hold (occurrences a series lost, the
// single document of an event that became a series, or the reverse), as
// found in the in-memory index, which holds exactly the stored documents.
//
// In a rebuild's generation (bulk), the documents are applied to the
// queries while they are encoded and stored, on another goroutine: nothing
// reads that generation before Commit, and a failed write fails the
// rebuild, which discards it (so its queries may hold what its store does
// not).
func (g *generation) indexEvents(ctx context.Context, docs []search.EventDocument) error {
	// last: the index of the last document of each key (a later
	// document of the same key replaces an earlier one).
	last := make(map[string]int, len(docs))
	ids := make([]int64, 0, len(docs))
	for i := range docs {
		last[docs[i].Key()] = i
		if len(ids) == 0 || ids[len(ids)-1] != docs[i].ID {
			ids = append(ids, docs[i].ID)
		}
	}
	var put []storedDoc
	if !g.bulk {
		put = encodeDocs(docs, last)
	}
	g.eventsMu.Lock()
	defer g.eventsMu.Unlock()
	var del []string
	for _, k := range g.queries.Keys(ids) {
		if _, ok := last[k]; !ok {
			del = append(del, k)
		}
	}
	if g.bulk {
		applied := make(chan struct{})
		go func() {
			defer close(applied)
			g.queries.Apply(docs)
		}()
		err := g.events.write(ctx, encodeDocs(docs, last), del, "index events")
		<-applied
		return err
	}
	if err := g.events.write(ctx, put, del, "index events"); err != nil {
		return err
	}
	g.queries.Apply(docs)
	return nil
}

// encodeDocs returns the stored form of each document of docs that no
// later one of the same key replaces (last holds the index of the last
// document of each key).
func encodeDocs(docs []search.EventDocument, last map[string]int) []storedDoc {
	put := make([]storedDoc, 0, len(last))
	// firstOf: the first occurrence of each event in docs, stored whole;
	// a later occurrence refers to it for its text or, when it differs
	// in its dates only, for everything else (encodeOccurrence).
	firstOf := map[int64]*search.EventDocument{}
	for i, d := range docs {
		k := d.Key()
		if last[k] != i {
			continue // a later document of the same key replaces it
		}
		var raw []byte
		if first := firstOf[d.ID]; first != nil && d.Occurrence != "" {
			raw = encodeOccurrence(&docs[i], first, first.Key())
		} else {
			if d.Occurrence != "" {
				firstOf[d.ID] = &docs[i]
			}
			raw = encodeEvent(d, "")
		}
		put = append(put, storedDoc{k, snappy.Encode(nil, raw)})
	}
	return put
}

// deleteEvents removes every stored document (every occurrence) of the
// events and removes them from the queries.
func (g *generation) deleteEvents(ctx context.Context, ids []int64) error {
	g.eventsMu.Lock()
	defer g.eventsMu.Unlock()
	if err := g.events.write(ctx, nil, g.queries.Keys(ids), "delete events"); err != nil {
		return err
	}
	g.queries.Remove(ids)
	return nil
}

// IndexPlaces adds or replaces venues and organizers, one batch per kind.
// A document of an unknown kind fails the call before anything is written.
func (e *Engine) IndexPlaces(ctx context.Context, docs []search.PlaceDocument) error {
	g, done := e.current()
	defer done()
	return g.indexPlaces(ctx, docs)
}

func (g *generation) indexPlaces(ctx context.Context, docs []search.PlaceDocument) error {
	g.placesMu.Lock()
	defer g.placesMu.Unlock()
	type pending struct {
		kind search.PlaceKind
		b    *bleve.Batch
		sums map[int64]uint64
	}
	batches := map[bleve.Index]*pending{}
	var order []bleve.Index
	for _, d := range docs {
		idx, err := g.place(d.Kind)
		if err != nil {
			return fmt.Errorf("place %d: %w", d.ID, err)
		}
		sum, err := placeSum(d)
		if err != nil {
			return fmt.Errorf("bleve: place %d: %w", d.ID, err)
		}
		p := batches[idx]
		if p == nil {
			p = &pending{kind: d.Kind, b: idx.NewBatch(), sums: map[int64]uint64{}}
			batches[idx] = p
			order = append(order, idx)
		}
		if had, ok := g.placeSums[d.Kind][d.ID]; ok && had == sum {
			if _, queued := p.sums[d.ID]; !queued {
				continue // indexed as it is: nothing to write
			}
		}
		if err := p.b.Index(docID(d.ID), placeFields(d)); err != nil {
			return fmt.Errorf("bleve: place %d: %w", d.ID, err)
		}
		p.sums[d.ID] = sum
	}
	for _, idx := range order {
		p := batches[idx]
		if err := apply(ctx, idx, p.b, "index places"); err != nil {
			// What the index holds of these places is unknown now: their
			// next write is applied whatever it holds.
			for id := range p.sums {
				delete(g.placeSums[p.kind], id)
			}
			return err
		}
		g.rememberPlaces(p.kind, p.sums)
	}
	return nil
}

// placeSum is the fingerprint of a place document kept in placeSums: FNV-1a
// of its JSON (encoding/json writes map keys sorted, so equal documents
// give equal bytes).
func placeSum(d search.PlaceDocument) (uint64, error) {
	raw, err := json.Marshal(d)
	if err != nil {
		return 0, err
	}
	h := fnv.New64a()
	h.Write(raw)
	return h.Sum64(), nil
}

// rememberPlaces records the fingerprints of place documents just indexed.
// The caller holds placesMu.
func (g *generation) rememberPlaces(kind search.PlaceKind, sums map[int64]uint64) {
	if len(sums) == 0 {
		return
	}
	if g.placeSums == nil {
		g.placeSums = map[search.PlaceKind]map[int64]uint64{}
	}
	m := g.placeSums[kind]
	if m == nil {
		m = make(map[int64]uint64, len(sums))
		g.placeSums[kind] = m
	}
	for id, sum := range sums {
		m[id] = sum
	}
}

// DeleteEvents removes events; IDs not in the index are ignored.
func (e *Engine) DeleteEvents(ctx context.Context, ids []int64) error {
	g, done := e.current()
	defer done()
	return g.deleteEvents(ctx, ids)
}

// DeletePlaces removes venues or organizers from their kind's index only.
func (e *Engine) DeletePlaces(ctx context.Context, kind search.PlaceKind, ids []int64) error {
	g, done := e.current()
	defer done()
	return g.deletePlaces(ctx, kind, ids)
}

func (g *generation) deletePlaces(ctx context.Context, kind search.PlaceKind, ids []int64) error {
	idx, err := g.place(kind)
	if err != nil {
		return err
	}
	g.placesMu.Lock()
	defer g.placesMu.Unlock()
	// Forgotten first: whether or not the deletion is applied, the next
	// write of these places is.
	for _, id := range ids {
		delete(g.placeSums[kind], id)
	}
	return deleteIDs(ctx, idx, ids, "delete places")
}

func deleteIDs(ctx context.Context, idx bleve.Index, ids []int64, what string) error {
	b := idx.NewBatch()
	for _, id := range ids {
		b.Delete(docID(id))
	}
	return apply(ctx, idx, b, what)
}

// maxPage bounds Offset and Limit so that their sum cannot overflow in
// Bleve's collector; nothing pages that far.
const maxPage = math.MaxInt32

// SearchEvents runs an event query (search/memindex answers it).
func (e *Engine) SearchEvents(ctx context.Context, q search.EventQuery) (search.Result, error) {
	g, done := e.current()
	defer done()
	if g.closed.Load() {
		return search.Result{}, unavailable(ctx, "search events", errors.New("the index is closed"))
	}
	return g.queries.Search(ctx, q)
}

// SearchPlaces runs a venue or organizer query, newest first (publish date
// descending, then ID descending).
func (e *Engine) SearchPlaces(ctx context.Context, q search.PlaceQuery) (search.Result, error) {
	g, done := e.current()
	defer done()
	idx, err := g.place(q.Kind)
	if err != nil {
		return search.Result{}, err
	}
	var text query.Query
	if terms := search.ParseQuery(q.Query); len(terms) > 0 {
		// The other fields are dynamic (fields.address, fields.city...):
		// ask the index which exist, so any field the sync worker adds is
		// searched without a mapping change.
		names, err := idx.Fields()
		if err != nil {
			return search.Result{}, unavailable(ctx, "list fields", err)
		}
		// The published places' fields, and the others' when q may
		// match a place that is not published (see placeFields).
		public, hidden := true, true
		if len(q.Statuses) > 0 {
			public = slices.Contains(q.Statuses, publicStatus)
			hidden = slices.ContainsFunc(q.Statuses, func(s string) bool { return s != publicStatus })
		}
		var fields []string
		for _, set := range []struct {
			on          bool
			text, other string
		}{{public, prefixText, prefixFields}, {hidden, prefixHiddenText, prefixHiddenFields}} {
			if !set.on {
				continue
			}
			fields = append(fields, textField(set.text, q.Lang, "title"), textField(set.text, q.Lang, "description"), textField(set.text, q.Lang, "excerpt"))
			for _, n := range names {
				if strings.HasPrefix(n, set.other+".") {
					fields = append(fields, n)
				}
			}
		}
		if text, err = placeTextQuery(idx, fields, terms); err != nil {
			return search.Result{}, unavailable(ctx, "search places", err)
		}
	}
	order := blevesearch.SortOrder{&blevesearch.SortField{Field: fieldSortPublish, Type: blevesearch.SortFieldAsString, Desc: true}}
	return searchIndex(ctx, idx, placeQuery(q, text), request{order: order, offset: q.Offset, limit: q.Limit}, "search places")
}

// request is how searchIndex runs a query: its order and the page.
type request struct {
	order         blevesearch.SortOrder
	offset, limit int
}

// searchIndex runs a query and returns one page of IDs and the exact
// total.
//
// The sort is by fields and nothing is scored. Bleve counts every match (it
// has no early stop), so Total is exact. No stored field is loaded: the
// hit's document ID is the ID.
func searchIndex(ctx context.Context, idx bleve.Index, q query.Query, r request, what string) (search.Result, error) {
	offset := min(max(r.offset, 0), maxPage)
	limit := min(max(r.limit, 0), maxPage)
	req := bleve.NewSearchRequestOptions(q, limit, offset, false)
	req.Sort = r.order
	req.Score = bleve.ScoreNone
	res, err := idx.SearchInContext(ctx, req)
	if err != nil {
		return search.Result{}, unavailable(ctx, what, err)
	}
	out := search.Result{IDs: make([]int64, 0, len(res.Hits)), Total: int(res.Total)}
	for _, h := range res.Hits {
		id, err := strconv.ParseInt(h.ID, 10, 64)
		if err != nil {
			return search.Result{}, fmt.Errorf("bleve: %s: document ID %q is not a number", what, h.ID)
		}
		out.IDs = append(out.IDs, id)
	}
	return out, nil
}

// CountEvents returns the number of indexed events.
func (e *Engine) CountEvents(ctx context.Context) (int, error) {
	g, done := e.current()
	defer done()
	return g.queries.Count(), ctx.Err()
}

// CountPlaces returns the number of indexed venues or organizers.
func (e *Engine) CountPlaces(ctx context.Context, kind search.PlaceKind) (int, error) {
	g, done := e.current()
	defer done()
	idx, err := g.place(kind)
	if err != nil {
		return 0, err
	}
	n, err := idx.DocCount()
	if err != nil {
		return 0, unavailable(ctx, "count places", err)
	}
	return int(n), nil
}
