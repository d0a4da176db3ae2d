package calendar

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/calendar/eventcal/repository"
)

// Loads: a portable load (package app/portable) writes every item whole,
// as the exporting store held it, with its ID, creation time, revision
// and (for webhook endpoints) signing secret. Records go through
// Service.Import and labels through Labels.Load; Loads writes the rest:
// users, tokens, webhook endpoints, sources and their runs, which no API
// command writes whole. Each write compares the item with the stored one
// first and leaves an equal one alone, so loading a file twice changes
// nothing the second time. The load checks every item before it writes
// any (its pass 1); these methods write what they are given.

// Outcome is what a load did with one item.
type Outcome int

// The outcomes of a load's write.
const (
	// Unchanged: the store held the item as given; nothing was written.
	Unchanged Outcome = iota
	// Created: the store did not hold the item; it was created with its ID.
	Created
	// Replaced: the store held the item otherwise; it now holds it as given.
	Replaced
)

// Loads writes the users, tokens, webhook endpoints, sources and runs of
// a load. It is safe for concurrent use.
type Loads struct {
	store repository.Store
}

// NewLoads returns the service over store.
func NewLoads(store repository.Store) *Loads { return &Loads{store: store} }

// User creates u under its ID (keeping its login, creation time, role,
// state, e-mail address and origin) or, when the store holds the user
// otherwise, stores u's role, state, e-mail address and origin (a user's
// login and creation time never change).
func (l *Loads) User(ctx context.Context, u *repository.User) (Outcome, error) {
	cur, err := l.store.GetUser(ctx, u.ID)
	switch {
	case errors.Is(err, repository.ErrNotFound):
		c := *u
		if err := l.store.CreateUser(ctx, &c); err != nil {
			return 0, fmt.Errorf("user %d: %w", u.ID, err)
		}
		return Created, nil
	case err != nil:
		return 0, fmt.Errorf("user %d: %w", u.ID, err)
	case same(loadedUser(cur), loadedUser(u)):
		return Unchanged, nil
	}
	if err := l.store.UpdateUser(ctx, u); err != nil {
		return 0, fmt.Errorf("user %d: %w", u.ID, err)
	}
	return Replaced, nil
}

// Token creates the token t (its hash) or, when the store holds it
// otherwise (another name, expiry or last use), replaces it: the store
// keeps a token as created, so the stored one is revoked and t created.
func (l *Loads) Token(ctx context.Context, t *repository.Token) (Outcome, error) {
	cur, err := l.store.TokenByHash(ctx, t.Hash)
	switch {
	case errors.Is(err, repository.ErrNotFound):
		if err := l.store.CreateToken(ctx, t); err != nil {
			return 0, fmt.Errorf("token %s: %w", t.ID(), err)
		}
		return Created, nil
	case err != nil:
		return 0, fmt.Errorf("token %s: %w", t.ID(), err)
	case same(loadedToken(cur), loadedToken(t)):
		return Unchanged, nil
	}
	if err := l.store.RevokeToken(ctx, t.ID()); err != nil && !errors.Is(err, repository.ErrNotFound) {
		return 0, fmt.Errorf("token %s: %w", t.ID(), err)
	}
	if err := l.store.CreateToken(ctx, t); err != nil {
		return 0, fmt.Errorf("token %s: %w", t.ID(), err)
	}
	return Replaced, nil
}

// Webhook creates the endpoint w under its ID with its secret and
// revision, or puts it in place of the stored endpoint of that ID (the
// store's revision kept for its compare-and-swap).
func (l *Loads) Webhook(ctx context.Context, w *repository.Webhook) (Outcome, error) {
	cur, err := l.store.GetWebhook(ctx, w.ID)
	switch {
	case errors.Is(err, repository.ErrNotFound):
		c := *w
		c.Events = slices.Clone(w.Events)
		if err := l.store.CreateWebhook(ctx, &c); err != nil {
			return 0, fmt.Errorf("webhook %d: %w", w.ID, err)
		}
		return Created, nil
	case err != nil:
		return 0, fmt.Errorf("webhook %d: %w", w.ID, err)
	case same(loadedWebhook(cur), loadedWebhook(w)):
		return Unchanged, nil
	}
	if _, err := l.store.UpdateWebhook(ctx, w.ID, func(q *repository.Webhook) error {
		rev := q.Revision
		*q = *w
		q.Events, q.Revision = slices.Clone(w.Events), rev
		return nil
	}); err != nil {
		return 0, fmt.Errorf("webhook %d: %w", w.ID, err)
	}
	return Replaced, nil
}

// Source creates the source s under its ID with its revision, or puts it
// in place of the stored source of that ID (the store's revision and the
// claim of a run in progress kept).
func (l *Loads) Source(ctx context.Context, s *repository.Source) (Outcome, error) {
	cur, err := l.store.GetSource(ctx, s.ID)
	switch {
	case errors.Is(err, repository.ErrNotFound):
		c := *s
		c.Categories, c.Tags = slices.Clone(s.Categories), slices.Clone(s.Tags)
		c.RunClaim, c.RunClaimUntil = "", time.Time{}
		if err := l.store.CreateSource(ctx, &c); err != nil {
			return 0, fmt.Errorf("source %d: %w", s.ID, err)
		}
		return Created, nil
	case err != nil:
		return 0, fmt.Errorf("source %d: %w", s.ID, err)
	case same(loadedSource(cur), loadedSource(s)):
		return Unchanged, nil
	}
	if _, err := l.store.UpdateSource(ctx, s.ID, func(q *repository.Source) error {
		rev, claim, until := q.Revision, q.RunClaim, q.RunClaimUntil
		*q = *s
		q.Categories, q.Tags = slices.Clone(s.Categories), slices.Clone(s.Tags)
		q.Revision, q.RunClaim, q.RunClaimUntil = rev, claim, until
		return nil
	}); err != nil {
		return 0, fmt.Errorf("source %d: %w", s.ID, err)
	}
	return Replaced, nil
}

// SourceRun creates the run r under its ID, or, when its source holds a
// run of that ID otherwise, stores r over it.
func (l *Loads) SourceRun(ctx context.Context, r *repository.SourceRun) (Outcome, error) {
	runs, err := l.store.ListSourceRuns(ctx, r.SourceID, 0)
	if err != nil {
		return 0, fmt.Errorf("source run %d: %w", r.ID, err)
	}
	for _, cur := range runs {
		if cur.ID != r.ID {
			continue
		}
		if same(loadedRun(cur), loadedRun(r)) {
			return Unchanged, nil
		}
		if err := l.store.SaveSourceRun(ctx, r); err != nil {
			return 0, fmt.Errorf("source run %d: %w", r.ID, err)
		}
		return Replaced, nil
	}
	c := *r
	if err := l.store.CreateSourceRun(ctx, &c); err != nil {
		return 0, fmt.Errorf("source run %d: %w", r.ID, err)
	}
	return Created, nil
}

// SameRecord reports whether two records hold the same: their revisions
// aside (a replace cannot keep one), times to the second, empty lists as
// the stores keep them.
func SameRecord(a, b *repository.Record) bool { return same(loadedRecord(a), loadedRecord(b)) }

// SameLabel reports whether two labels hold the same, their revisions
// aside.
func SameLabel(a, b *repository.Label) bool { return same(loadedLabel(a), loadedLabel(b)) }

// loadTime is a time as a load compares it: in UTC, to the second. The
// engines keep times at different precisions (MongoDB to the
// millisecond or the second; the API's writes are to the second), so an
// item is the same whatever engine it went through.
func loadTime(t time.Time) time.Time { return t.UTC().Truncate(time.Second) }

// same reports whether a and b encode to the same JSON.
func same(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}

// loadedOrigin is an origin as compared.
func loadedOrigin(o *repository.Origin) *repository.Origin {
	if o == nil {
		return nil
	}
	c := *o
	c.Modified = loadTime(c.Modified)
	return &c
}

func loadedUser(u *repository.User) *repository.User {
	c := *u
	c.Created, c.Origin = loadTime(c.Created), loadedOrigin(c.Origin)
	return &c
}

func loadedToken(t *repository.Token) *repository.Token {
	c := *t
	c.Created, c.LastUsed, c.Expires = loadTime(c.Created), loadTime(c.LastUsed), loadTime(c.Expires)
	return &c
}

// webhookCompared is an endpoint as compared: JSON leaves its secret
// out, which counts.
type webhookCompared struct {
	repository.Webhook
	Secret string `json:"secret"`
}

func loadedWebhook(w *repository.Webhook) webhookCompared {
	c := *w
	c.FailingSince, c.Created, c.Updated = loadTime(c.FailingSince), loadTime(c.Created), loadTime(c.Updated)
	return webhookCompared{Webhook: c, Secret: w.Secret}
}

func loadedSource(s *repository.Source) *repository.Source {
	c := *s
	c.Revision, c.RunClaim, c.RunClaimUntil = 0, "", time.Time{}
	c.Created, c.Updated = loadTime(c.Created), loadTime(c.Updated)
	if c.Categories == nil {
		c.Categories = []int64{}
	}
	if c.Tags == nil {
		c.Tags = []int64{}
	}
	return &c
}

func loadedRun(r *repository.SourceRun) *repository.SourceRun {
	c := *r
	c.Started, c.Finished = loadTime(c.Started), loadTime(c.Finished)
	return &c
}

func loadedLabel(t *repository.Label) *repository.Label {
	c := cloneLabel(t)
	c.Revision, c.NameKeys, c.Origin = 0, nil, loadedOrigin(c.Origin)
	return c
}

func loadedRecord(p *repository.Record) *repository.Record {
	c := p.Clone()
	c.Revision = 0
	c.Date, c.Modified, c.Origin = loadTime(c.Date), loadTime(c.Modified), loadedOrigin(c.Origin)
	if e := c.Event; e != nil {
		e.StartUTC, e.EndUTC = loadTime(e.StartUTC), loadTime(e.EndUTC)
		for _, l := range []*[]int64{&e.Categories, &e.Tags, &e.Venues, &e.Organizers} {
			if *l == nil {
				*l = []int64{}
			}
		}
		if r := e.Recurrence; r != nil {
			for _, l := range []*[]string{&r.Rules, &r.Exclusions, &r.Additions} {
				if *l == nil {
					*l = []string{}
				}
			}
		}
	}
	return c
}
