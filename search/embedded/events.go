package embedded

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/calendar/eventcal/search"
	"github.com/golang/snappy"
)

// This file keeps the event documents of a generation on disk: one bbolt
// file (events.db, events.db.<n>) mapping each document's key
// (search.EventDocument.Key) to its stored form (storedEvent, in the
// binary form of codec.go), compressed with snappy. Nothing
// queries it: event queries are answered by the generation's memindex,
// which is filled from it at open and kept in step by every event write.
// A write is one bbolt transaction, flushed to disk before it returns.
//
// Why not Bleve: the events were kept in a Bleve index that indexed
// nothing and stored the JSON, which cost an analysis pass, segment files
// and their background merges for documents only read back whole at open.
// A key-value file holds the same documents with none of that.

// The buckets of an event store, and the key under which the meta bucket
// records the store's format.
var (
	eventsBucket = []byte("events")
	metaBucket   = []byte("meta")
	formatKey    = []byte("format")
)

// eventsFormat is the format of the stored documents: a store that
// records another is recreated empty at open (the sync worker repopulates
// it), as a Bleve index built with another mapping is. Change it when
// storedEvent changes incompatibly.
//
// Format 2 writes the binary form (codec.go), and occurrences that differ
// from their series' first in their dates only as their dates
// (storedEvent.DatesFrom); format 1 wrote JSON, which
// decodeStored still reads. A store of format 1 is therefore opened as it
// is and marked format 2 at once (before anything is written to it in the
// binary form), so that a build that knows only format 1 recreates it
// rather than failing on documents it cannot read.
const eventsFormat = "eventcal events 2"

// eventsFormatJSON is format 1: every document stored as JSON.
const eventsFormatJSON = "eventcal events 1"

// fillPercent is how full a write leaves the pages it splits. The keys
// come in no useful order (decimal IDs), so bbolt's default (half full)
// left the file about 2.7 times the documents' size; nearly full pages
// keep it closer, at the cost of a split on more inserts.
const fillPercent = 0.9

// lockWait bounds the wait for another holder of an event store's file
// lock (see openTimeout).
const lockWait = time.Second

// eventStore is the event documents of one generation.
type eventStore struct {
	db *bolt.DB
	// jsonDocs counts the documents the last load found in the JSON form
	// of format 1 (see eventsFormat).
	jsonDocs atomic.Int64
}

// openEventStore opens the store at path if there is one (nil, false, nil
// when there is none). ok says whether it has the current format; a store
// that has not is returned open (for the caller to close) with ok false.
func openEventStore(path string) (s *eventStore, ok bool, err error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	s, err = openBolt(path)
	if err != nil {
		return nil, false, err
	}
	var format []byte
	err = s.db.View(func(tx *bolt.Tx) error {
		if m := tx.Bucket(metaBucket); m != nil && tx.Bucket(eventsBucket) != nil {
			format = m.Get(formatKey)
		}
		return nil
	})
	if err != nil {
		_ = s.close()
		return nil, false, fmt.Errorf("bleve: read %s: %w", path, err)
	}
	if string(format) == eventsFormatJSON {
		err := s.db.Update(func(tx *bolt.Tx) error {
			return tx.Bucket(metaBucket).Put(formatKey, []byte(eventsFormat))
		})
		if err != nil {
			_ = s.close()
			return nil, false, fmt.Errorf("bleve: update %s to %s: %w", path, eventsFormat, err)
		}
		return s, true, nil
	}
	return s, string(format) == eventsFormat, nil
}

// createEventStore makes a new, empty store at path (replacing whatever is
// there).
func createEventStore(path string) (*eventStore, error) {
	if err := os.RemoveAll(path); err != nil {
		return nil, fmt.Errorf("bleve: remove %s: %w", path, err)
	}
	s, err := openBolt(path)
	if err != nil {
		return nil, err
	}
	err = s.db.Update(func(tx *bolt.Tx) error {
		if _, err := tx.CreateBucket(eventsBucket); err != nil {
			return err
		}
		m, err := tx.CreateBucket(metaBucket)
		if err != nil {
			return err
		}
		return m.Put(formatKey, []byte(eventsFormat))
	})
	if err != nil {
		_ = s.close()
		return nil, fmt.Errorf("bleve: create %s: %w", path, err)
	}
	return s, nil
}

// openBolt opens (creating) the bbolt file at path, waiting lockWait for
// its file lock.
func openBolt(path string) (*eventStore, error) {
	db, err := bolt.Open(path, 0o640, &bolt.Options{Timeout: lockWait})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, fmt.Errorf("bleve: open %s: %w (one process per directory; waited %s for its lock)", path, ErrLocked, lockWait)
	}
	if err != nil {
		return nil, fmt.Errorf("bleve: open %s (one process per directory): %w", path, err)
	}
	return &eventStore{db: db}, nil
}

// releaseMapped drops the pages of the store's file from the process's
// resident set (they stay in the kernel's page cache). bbolt reads the
// file through a shared mapping, so every page a load or a write's tree
// walk read counts in the process's RSS until the mapping goes: after a
// load (every page) or a full rebuild (most of the new file), that is as
// much resident memory again as the file's size (at 1,000,000 events and
// 50,000 weekly series, more than a gigabyte) for pages nothing reads
// until the next open. It holds the writer lock (a write transaction,
// rolled back), so that no write remaps the file meanwhile, and drops
// the mapping up to the file's size as the transaction sees it.
func (s *eventStore) releaseMapped() error {
	tx, err := s.db.Begin(true)
	if err != nil {
		return fmt.Errorf("bleve: release the mapping of the events: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	if err := dropMapped(s.db.Info().Data, tx.Size()); err != nil {
		return fmt.Errorf("bleve: release the mapping of the events: %w", err)
	}
	return nil
}

// close closes the store, releasing its lock.
func (s *eventStore) close() error { return s.db.Close() }

// ping checks that the store answers.
func (s *eventStore) ping() error {
	return s.db.View(func(tx *bolt.Tx) error {
		if tx.Bucket(eventsBucket) == nil {
			return errors.New("the events bucket is missing")
		}
		return nil
	})
}

// storedDoc is one document to write: its key and stored form,
// snappy-compressed.
type storedDoc struct {
	key string
	raw []byte
}

// write puts docs and deletes the documents of keys del, in one
// transaction; it returns once the transaction is on disk.
func (s *eventStore) write(ctx context.Context, docs []storedDoc, del []string, what string) error {
	if len(docs) == 0 && len(del) == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	err := s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(eventsBucket)
		b.FillPercent = fillPercent
		for _, k := range del {
			if err := b.Delete([]byte(k)); err != nil {
				return err
			}
		}
		for _, d := range docs {
			if err := b.Put([]byte(d.key), d.raw); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return unavailable(ctx, what, err)
	}
	return nil
}

// loadChunk is about how many documents one decoder of load takes at a
// time (a chunk never splits an event's documents).
const loadChunk = 4096

// loadEntry is one stored document as load finds it: its event ID and
// occurrence (read from its key) and its compressed stored form, which stays
// valid while the read transaction is open.
type loadEntry struct {
	id int64
	// idLen is the length of the key's ID (the occurrence, if any, starts
	// after it and a "-").
	idLen int32
	key   []byte
	raw   []byte
}

// occ returns the entry's occurrence (its key's bytes after the ID and
// "-"; none for a key of an ID only).
func (e *loadEntry) occ() []byte {
	if int(e.idLen) >= len(e.key) {
		return nil
	}
	return e.key[e.idLen+1:]
}

// compareEntries orders entries by event ID, then occurrence.
func compareEntries(a, b loadEntry) int {
	return cmp.Or(cmp.Compare(a.id, b.id), bytes.Compare(a.occ(), b.occ()))
}

// load reads every stored document and hands them all to apply in one
// call, by event ID and occurrence (the occurrences of a series follow
// each other, so the in-memory index tokenizes their shared text once; an
// empty index fills itself from one call at the least cost). It returns
// the number of documents.
//
// The documents' keys are read and ordered first (bbolt orders them as
// bytes, "10" before "9"), without decoding anything; GOMAXPROCS
// goroutines then decode (snappy, decodeStored) chunks of whole events, each
// straight into its place in the ordered slice, so no document is moved
// by a sort or a growing slice.
func (s *eventStore) load(apply func([]search.EventDocument)) (int, error) {
	var docs []search.EventDocument
	err := s.db.View(func(tx *bolt.Tx) error {
		var entries []loadEntry
		err := tx.Bucket(eventsBucket).ForEach(func(k, v []byte) error {
			e, err := newLoadEntry(k, v)
			entries = append(entries, e)
			return err
		})
		if err != nil {
			return err
		}
		entries = orderEntries(entries)
		docs = make([]search.EventDocument, len(entries))
		s.jsonDocs.Store(0)
		return decodeChunks(entries, docs, loadChunk, &s.jsonDocs)
	})
	if err != nil {
		return 0, fmt.Errorf("bleve: load the events: %w", err)
	}
	apply(docs)
	return len(docs), nil
}

// newLoadEntry reads the event ID and occurrence of a document key k
// (search.DocumentKey) of stored form v. It copies nothing: the entry
// holds k and v (valid while the read transaction is open).
func newLoadEntry(k, v []byte) (loadEntry, error) {
	idPart, _, _ := bytes.Cut(k, []byte("-"))
	id, err := strconv.ParseInt(string(idPart), 10, 64)
	if err != nil {
		return loadEntry{}, fmt.Errorf("document key %q: %w", k, err)
	}
	return loadEntry{id: id, idLen: int32(len(idPart)), key: k, raw: v}, nil
}

// orderEntries returns entries, read in bbolt's key order (as bytes: "10"
// before "9"), ordered by event ID and occurrence (compareEntries).
//
// In the key order an event's documents are together and in the order of
// their occurrences, and the events of IDs written with as many digits
// are in the order of their IDs: so a stable counting sort by the length
// of the IDs orders them, in two passes, where sorting them took 1.3 of
// 39 CPU-s of a start-up (100,000 events and 25,000 weekly series, 2.7
// million documents), on one goroutine before anything else. The result
// is checked, and sorted if it is not in order (IDs written with leading
// zeros, or entries not in the key order).
func orderEntries(entries []loadEntry) []loadEntry {
	// The IDs' lengths: 1 to 19 digits, 20 for any other.
	var at [22]int
	lenOf := func(e *loadEntry) int { return min(max(int(e.idLen), 1), 20) }
	for i := range entries {
		at[lenOf(&entries[i])+1]++
	}
	out := entries
	if slices.Max(at[:]) != len(entries) { // IDs of two lengths or more
		for l := 1; l < len(at); l++ {
			at[l] += at[l-1]
		}
		out = make([]loadEntry, len(entries))
		for i := range entries {
			l := lenOf(&entries[i])
			out[at[l]] = entries[i]
			at[l]++
		}
	}
	for i := 1; i < len(out); i++ {
		if compareEntries(out[i-1], out[i]) > 0 {
			slices.SortFunc(out, compareEntries)
			break
		}
	}
	return out
}

// chunkByEvent cuts entries (ordered by ID) into chunks of about size
// entries, never between two entries of the same event, and returns the
// offset of each chunk's first entry (and len(entries) last).
func chunkByEvent(entries []loadEntry, size int) []int {
	bounds := []int{0}
	for start := 0; start < len(entries); {
		end := min(start+max(size, 1), len(entries))
		for end < len(entries) && entries[end].id == entries[end-1].id {
			end++
		}
		bounds = append(bounds, end)
		start = end
	}
	return bounds
}

// decodeChunks decodes entries into docs (docs[i] from entries[i]) with
// GOMAXPROCS goroutines, each taking chunks of about size entries (whole
// events), counting in jsonDocs the documents stored as JSON. It returns
// the first error.
func decodeChunks(entries []loadEntry, docs []search.EventDocument, size int, jsonDocs *atomic.Int64) error {
	bounds := chunkByEvent(entries, size)
	workers := min(max(1, runtime.GOMAXPROCS(0)), len(bounds)-1)
	var next atomic.Int64
	var failed atomic.Bool
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			var in interner
			for !failed.Load() {
				c := int(next.Add(1) - 1)
				if c+1 >= len(bounds) {
					return
				}
				lo, hi := bounds[c], bounds[c+1]
				var err error
				if buf, err = decodeChunk(entries[lo:hi], docs[lo:hi], buf, &in, jsonDocs); err != nil {
					errs[w] = err
					failed.Store(true)
					return
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// decodeChunk decodes the documents of entries (whole events) into docs:
// an occurrence stored with another's text (storedEvent.TextFrom) gets
// that document's text map, and one stored as its dates
// (storedEvent.DatesFrom) that document's other fields; the document is
// among the same event's. buf is a scratch buffer for snappy, returned for
// the next call; in, the decoder's interner (shared strings). The
// documents stored as JSON are counted in jsonDocs.
func decodeChunk(entries []loadEntry, docs []search.EventDocument, buf []byte, in *interner, jsonDocs *atomic.Int64) ([]byte, error) {
	// The occurrences with their own text, by key, and those stored with
	// another's.
	var keyAt map[string]int
	type sharedText struct {
		at  int
		ref storedRef
	}
	var shared []sharedText
	var asJSON int64
	defer func() { jsonDocs.Add(asJSON) }()
	// The entries' occurrences (from their keys) in one string, each
	// document's occurrence cut from it: one allocation per chunk
	// instead of one per occurrence.
	n := 0
	for i := range entries {
		n += len(entries[i].occ())
	}
	occs := make([]byte, 0, n)
	for i := range entries {
		occs = append(occs, entries[i].occ()...)
	}
	allOccs, at := string(occs), 0
	for i, e := range entries {
		occ := allOccs[at : at+len(e.occ())]
		at += len(occ)
		raw, err := snappy.Decode(buf[:cap(buf)], e.raw)
		if err != nil {
			return buf, fmt.Errorf("document %s: %w", e.key, err)
		}
		buf = raw
		if len(raw) == 0 || raw[0] != binaryMark {
			asJSON++
		}
		d, ref, err := decodeStoredWith(raw, in, occ)
		if err != nil {
			return buf, fmt.Errorf("document %s: %w", e.key, err)
		}
		if ref.from != "" {
			shared = append(shared, sharedText{i, ref})
		} else if d.Occurrence != "" {
			if keyAt == nil {
				keyAt = map[string]int{}
			}
			keyAt[string(e.key)] = i
		}
		docs[i] = d
	}
	for _, s := range shared {
		if j, ok := keyAt[s.ref.from]; ok {
			s.ref.resolve(&docs[s.at], &docs[j])
		}
	}
	return buf, nil
}
