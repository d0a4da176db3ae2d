package embedded

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/calendar/eventcal/search"
	"github.com/golang/snappy"
)

// This file keeps the event documents of a generation on disk: one bbolt
// file (events.db, events.db.<n>) mapping each document's key
// (search.EventDocument.Key) to its stored JSON (storedEvent), compressed
// with snappy (JSON text shrinks to about a third). Nothing
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
const eventsFormat = "eventcal events 1"

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

// storedDoc is one document to write: its key and stored JSON,
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

// load reads every stored document, by event and occurrence (the
// occurrences of a series follow each other, so the in-memory index
// tokenizes their shared text once).
func (s *eventStore) load() ([]search.EventDocument, error) {
	var docs []search.EventDocument
	// Occurrences stored with another's text (storedEvent.TextFrom) get
	// that document's text map once all are read.
	keyAt := map[string]int{}
	type sharedText struct {
		at   int
		from string
	}
	var shared []sharedText
	err := s.db.View(func(tx *bolt.Tx) error {
		var buf []byte
		return tx.Bucket(eventsBucket).ForEach(func(k, v []byte) error {
			raw, err := snappy.Decode(buf[:cap(buf)], v)
			if err != nil {
				return fmt.Errorf("document %s: %w", k, err)
			}
			buf = raw
			d, from, err := decodeStored(raw)
			if err != nil {
				return fmt.Errorf("document %s: %w", k, err)
			}
			if from != "" {
				shared = append(shared, sharedText{len(docs), from})
			} else if d.Occurrence != "" {
				keyAt[string(k)] = len(docs)
			}
			docs = append(docs, d)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("bleve: load the events: %w", err)
	}
	for _, s := range shared {
		if j, ok := keyAt[s.from]; ok {
			docs[s.at].Text = docs[j].Text
		}
	}
	slices.SortFunc(docs, func(a, b search.EventDocument) int {
		return cmp.Or(cmp.Compare(a.ID, b.ID), cmp.Compare(a.Occurrence, b.Occurrence))
	})
	return docs, nil
}
