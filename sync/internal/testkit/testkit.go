// Package testkit holds the test helpers that the tests of several sync
// packages share: posts and series created through a store, what an index
// lists, a lease the test holds or loses by hand, a log buffer and a
// polling wait. The embedded store is opened by package storekit, the
// store with a Bleve index by package indexkit: this one links neither
// SQLite nor Bleve, so that a test binary that needs neither (sync/lease)
// does not link them at every run. It imports none of the sync packages,
// so that the in-package tests of each of them (indexing included) can use
// it; the tests that drive a worker embed them (Kit) in a small stack of
// their own (indexing/helpers_test.go, schedule/helpers_test.go).
package testkit

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/calendar/eventcal/config/testdeadline"
	"github.com/calendar/eventcal/config/testsupport"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/search"
)

// Quiet is a logger that drops everything.
var Quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// BaseTime is the publish date of the test posts.
var BaseTime = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// SeriesStart is the first occurrence of the test series: a Monday.
var SeriesStart = time.Date(2026, 4, 6, 19, 0, 0, 0, time.UTC)

// Post creates a post of kind with a title and status through the store.
func Post(t *testing.T, store repository.Store, kind repository.Kind, title, status string, date time.Time) *repository.Record {
	t.Helper()
	p := &repository.Record{Kind: kind, Author: 1, Status: status, Date: date, Modified: date,
		Title: repository.Text{"en": title}, Slug: repository.Text{"en": repository.Slugify(title)}}
	switch kind {
	case repository.KindEvent:
		start := BaseTime.Add(30 * 24 * time.Hour)
		p.Event = &repository.EventFields{StartLocal: start.Format(time.DateTime), EndLocal: start.Add(time.Hour).Format(time.DateTime),
			StartUTC: start, EndUTC: start.Add(time.Hour), Categories: []int64{}, Tags: []int64{}, Venues: []int64{}, Organizers: []int64{}}
	case repository.KindVenue:
		p.Venue = &repository.VenueFields{City: "Gent"}
	case repository.KindOrganizer:
		p.Organizer = &repository.OrganizerFields{Email: "info@example.org"}
	}
	if err := store.CreateRecord(t.Context(), p); err != nil {
		t.Fatalf("CreatePost: %v", err)
	}
	return p
}

// Update changes the post p through the store.
func Update(t *testing.T, store repository.Store, p *repository.Record, change func(e *repository.Record)) {
	t.Helper()
	if _, err := store.UpdateRecord(t.Context(), p.ID, func(p *repository.Record) error {
		change(p)
		return nil
	}); err != nil {
		t.Fatalf("UpdatePost: %v", err)
	}
}

// Series creates an event post starting at SeriesStart with the given
// rules (none: a single event).
func Series(t *testing.T, store repository.Store, title string, rules ...string) *repository.Record {
	t.Helper()
	p := Post(t, store, repository.KindEvent, title, repository.StatusPublish, BaseTime)
	Update(t, store, p, func(p *repository.Record) {
		p.Event.StartUTC, p.Event.EndUTC = SeriesStart, SeriesStart.Add(90*time.Minute)
		p.Event.StartLocal, p.Event.EndLocal = SeriesStart.Format(time.DateTime), SeriesStart.Add(90*time.Minute).Format(time.DateTime)
		if len(rules) > 0 {
			p.Event.Recurrence = &repository.Recurrence{Rules: rules}
		}
	})
	return p
}

// Listed returns the documents a query lists, as "id/key" strings.
func Listed(t *testing.T, engine search.Engine, q search.EventQuery) []string {
	t.Helper()
	q.Lang, q.Limit = "en", 10000
	if q.Statuses == nil {
		q.Statuses = []string{repository.StatusPublish}
	}
	res, err := engine.SearchEvents(t.Context(), q)
	if err != nil {
		t.Fatalf("SearchEvents: %v", err)
	}
	out := make([]string, len(res.IDs))
	for i, id := range res.IDs {
		out[i] = search.DocumentKey(id, res.Occurrence(i))
	}
	return out
}

// Titles returns the IDs of the published events whose title has word.
func Titles(t *testing.T, engine search.Engine, word string) []int64 {
	t.Helper()
	res, err := engine.SearchEvents(t.Context(), search.EventQuery{Lang: "en", Query: word, Statuses: []string{repository.StatusPublish}, Limit: 1000})
	if err != nil {
		t.Fatalf("SearchEvents: %v", err)
	}
	return res.IDs
}

// Counts returns the indexed events, venues and organizers.
func Counts(t *testing.T, engine search.Engine) [3]int {
	t.Helper()
	var out [3]int
	var errs [3]error
	out[0], errs[0] = engine.CountEvents(t.Context())
	out[1], errs[1] = engine.CountPlaces(t.Context(), search.Venues)
	out[2], errs[2] = engine.CountPlaces(t.Context(), search.Organizers)
	if err := errors.Join(errs[:]...); err != nil {
		t.Fatal(err)
	}
	return out
}

// Kit is a store and an index with the helpers above as methods: the
// tests' stacks (indexing/helpers_test.go, schedule/helpers_test.go)
// embed it.
type Kit struct {
	store  repository.Store
	engine search.Engine
}

// NewKit returns the helpers on store and engine.
func NewKit(store repository.Store, engine search.Engine) Kit {
	return Kit{store: store, engine: engine}
}

// Post creates a post of kind with a title and status through the store.
func (k Kit) Post(t *testing.T, kind repository.Kind, title, status string, date time.Time) *repository.Record {
	t.Helper()
	return Post(t, k.store, kind, title, status, date)
}

// Events creates n published events titled "Jazz night" through the store.
func (k Kit) Events(t *testing.T, n int) {
	t.Helper()
	for range n {
		Post(t, k.store, repository.KindEvent, "Jazz night", repository.StatusPublish, BaseTime)
	}
}

// Update changes the post p through the store.
func (k Kit) Update(t *testing.T, p *repository.Record, change func(e *repository.Record)) {
	t.Helper()
	Update(t, k.store, p, change)
}

// Series returns an event post starting at SeriesStart with the given
// rules (none: a single event).
func (k Kit) Series(t *testing.T, title string, rules ...string) *repository.Record {
	t.Helper()
	return Series(t, k.store, title, rules...)
}

// Listed returns the documents a query lists, as "id/key" strings.
func (k Kit) Listed(t *testing.T, q search.EventQuery) []string {
	t.Helper()
	return Listed(t, k.engine, q)
}

// Titles returns the IDs of the published events whose title has word.
func (k Kit) Titles(t *testing.T, word string) []int64 {
	t.Helper()
	return Titles(t, k.engine, word)
}

// Counts returns the indexed events, venues and organizers.
func (k Kit) Counts(t *testing.T) [3]int {
	t.Helper()
	return Counts(t, k.engine)
}

// IDs returns the IDs of posts.
func IDs(ps ...*repository.Record) []int64 {
	out := make([]int64, len(ps))
	for i, p := range ps {
		out[i] = p.ID
	}
	return out
}

// FakeLease is a lease (lease.Lease) the test holds or loses by hand; it
// counts the IsLeader calls.
type FakeLease struct {
	mu      sync.Mutex
	held    bool
	changed chan struct{}
	calls   int
}

// NewFakeLease returns a FakeLease, held or not.
func NewFakeLease(held bool) *FakeLease {
	return &FakeLease{held: held, changed: make(chan struct{})}
}

// Set holds or loses the lease.
func (f *FakeLease) Set(held bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.held != held {
		f.held = held
		close(f.changed)
		f.changed = make(chan struct{})
	}
}

// IsLeader returns nil while the lease is held.
func (f *FakeLease) IsLeader(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.held {
		return nil
	}
	return errors.New("fake lease: held elsewhere")
}

// Changed returns a channel closed at the next Set that changes the hold.
func (f *FakeLease) Changed() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.changed
}

// Keep waits for ctx to end.
func (f *FakeLease) Keep(ctx context.Context) { <-ctx.Done() }

// Release loses the lease.
func (f *FakeLease) Release(context.Context) error { f.Set(false); return nil }

// CallCount returns the number of IsLeader calls so far.
func (f *FakeLease) CallCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

// LogBuffer collects log lines written from several goroutines: the
// shared testsupport.SyncBuffer.
type LogBuffer = testsupport.SyncBuffer

// Eventually polls cond until it holds or the test's deadline passes.
func Eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := testdeadline.Of(t)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: never true", what)
		}
		time.Sleep(5 * time.Millisecond) // a poll interval, not a wait for an outcome
	}
}

// PausedLease is the lease of a holder that paused past its lease: by its
// own clock it still leads (IsLeader answers nil, as lease.Held's), but
// the store knows another process took over (Fence, of lease.Fencer,
// refuses).
type PausedLease struct{}

// IsLeader answers nil.
func (PausedLease) IsLeader(context.Context) error { return nil }

// Changed returns nil: the answer never changes.
func (PausedLease) Changed() <-chan struct{} { return nil }

// Keep waits for ctx to end.
func (PausedLease) Keep(ctx context.Context) { <-ctx.Done() }

// Release does nothing.
func (PausedLease) Release(context.Context) error { return nil }

// Fence refuses.
func (PausedLease) Fence(context.Context) (int64, error) {
	return 0, errors.New("another process holds the lease now")
}
