// Package calendar is the service layer of events, venues and organizers:
// every writer (the HTTP handlers, the occurrence routes, the importer)
// hands it a typed command (EventInput, VenueInput, OrganizerInput,
// OccurrenceInput), decoded once by the caller, with the actor (the
// writing user; nil for the system) and the language of the text fields.
// Dates arrive read (datetext.Value: an instant, a wall-clock time or a
// phrase); the calendar settles the zone (the event's, or the one the
// command names) and takes each date's instant there once
// (values.DateIn), without parsing the text again.
//
// A write decides everything, then writes, in this order:
//
//  1. prepare: the look-ups the command needs (linked venues and
//     organizers, the author, the image, categories and tags by ID, slug
//     or name, which resolve names to "to be created" references), with
//     the per-record permissions, and the plans of inline venues and
//     organizers (each prepared and checked the same way);
//  2. check: apply runs on a scratch copy of the record, with placeholder
//     IDs for what is still to be created, so every rule of apply (dates,
//     end before start, time zone, recurrence, document bounds) has
//     passed before anything is written;
//  3. commit: the linked records are created (or reused), recorded in the
//     plan's undo log;
//  4. the main record is written (apply again, on the record the store
//     hands over).
//
// A refused command therefore stops at 1-2 and leaves nothing behind.
// Linked records come before the main record because the main record
// holds their IDs: written the other way round, a failure would leave a
// record pointing at records that do not exist, visible to every reader.
// Only a failure of step 4 (a store error, or a concurrent change that
// makes apply refuse the fresh record) comes after linked records were
// made; undo then removes what the command created (best effort, logged).
//
// Errors a client should see are *apierr.Error values (the HTTP layer
// sends them as they are); anything else is a store failure. The package
// knows nothing of HTTP, Fiber or request bags.
package calendar

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"strings"
	"time"

	"github.com/calendar/eventcal/app/calendar/recurrence"
	"github.com/calendar/eventcal/app/datetext"
	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/repository"
)

// Deps are what the service uses; the composition root fills them.
type Deps struct {
	Config *config.Config
	Store  repository.Store
	Logger *slog.Logger
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Zone returns an event's time zone (the site zone when it has none);
	// nil reads the event's own zone, else Config's.
	Zone func(e *repository.EventFields) (*time.Location, string)
	// Expansions keeps series' expansions; a write of a series keeps its
	// expansion there for the reads after it. Nil expands every time.
	Expansions *recurrence.Cache
	// Changed is told the records of a write (as they were and as they
	// are), for caches of what they link to (the renderer's term counts);
	// may be nil.
	Changed func(posts ...*repository.Record)
}

// Service writes events, venues and organizers. It is safe for
// concurrent use.
type Service struct {
	cfg        *config.Config
	store      repository.Store
	log        *slog.Logger
	now        func() time.Time
	zone       func(e *repository.EventFields) (*time.Location, string)
	expansions *recurrence.Cache
	changed    func(posts ...*repository.Record)
}

// New returns the service; Config, Store and Logger must be set.
func New(d Deps) *Service {
	s := &Service{cfg: d.Config, store: d.Store, log: d.Logger, now: d.Now, zone: d.Zone,
		expansions: d.Expansions, changed: d.Changed}
	if s.now == nil {
		s.now = time.Now
	}
	if s.zone == nil {
		s.zone = func(e *repository.EventFields) (*time.Location, string) {
			if e.Timezone != "" {
				if loc, ok := datetext.LoadZone(e.Timezone); ok {
					return loc, e.Timezone
				}
			}
			return s.cfg.Location, s.cfg.TimezoneName
		}
	}
	return s
}

// Opt is an optional field of a command: Set when the caller sent it,
// Value as decoded, Raw the value as received (refusals echo it).
type Opt[T any] struct {
	Set   bool
	Value T
	Raw   any
}

// Some returns a set field whose value is v (Raw is v too).
func Some[T any](v T) Opt[T] { return Opt[T]{Set: true, Value: v, Raw: v} }

// op is one command being carried out: who writes, in which language.
type op struct {
	s    *Service
	ctx  context.Context
	user *repository.User
	lang string
}

// with returns the op of a command by user in lang.
func (s *Service) with(ctx context.Context, user *repository.User, lang string) *op {
	return &op{s: s, ctx: ctx, user: user, lang: lang}
}

// NameLockKey is the Store.Exclusive key of a name in a scope
// ("term:category", "post:venue") and language: the name is case-folded
// and hashed, which keeps keys short whatever the name's length.
// Look-up-then-create steps (term names, venue and organizer duplicates)
// run under it, so parallel writes naming one new record create one, on
// every replica.
func NameLockKey(scope, lang, name string) string {
	sum := sha256.Sum256([]byte(strings.ToLower(strings.TrimSpace(name))))
	return scope + ":" + lang + ":" + hex.EncodeToString(sum[:16])
}

// RecurrenceLimits are the expansion bounds now (RECURRENCE_HORIZON,
// MAX_SERIES_OCCURRENCES).
func (s *Service) RecurrenceLimits() recurrence.Limits {
	return recurrence.Limits{Now: s.now(), Horizon: s.cfg.RecurrenceHorizon, MaxOccurrences: s.cfg.MaxSeriesOccurrences}
}

// countsChanged tells Changed the events of a write (before and after).
func (s *Service) countsChanged(posts ...*repository.Record) {
	if s.changed != nil {
		s.changed(posts...)
	}
}

// contains reports whether list holds v.
func contains[T comparable](list []T, v T) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}
