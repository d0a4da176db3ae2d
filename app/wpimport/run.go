package wpimport

import (
	"context"
	"errors"
	"log/slog"

	"github.com/calendar/eventcal/app/calendar"
	"github.com/calendar/eventcal/repository"
)

// lookupBatch is how many IDs one GetPosts/GetTerms call asks for.
const lookupBatch = 500

// record is one source record mapped to its store form.
type record struct {
	kind  string
	id    int64
	post  *repository.Record
	term  *repository.Label
	depth int // categories: 0 for a root
	// action is what the write phase does: create, update or nothing.
	action action
}

type action int

const (
	actNone action = iota
	actCreate
	actUpdate
)

// importRun is one import.
type importRun struct {
	c     *client
	store repository.Store
	// cal checks and writes the posts (Options.Calendar).
	cal *calendar.Service
	// labels writes the categories and tags, accounts the users (--users),
	// as calendar.Operator.
	labels   *calendar.Labels
	accounts *calendar.Accounts
	opts     Options
	m        *mapper
	rep      *Report
	progress Progress
	log      *slog.Logger

	// caps bound the run (Options.Caps with the defaults filled in).
	caps Caps
	// held counts the bytes the run holds (see hold).
	held int64

	// listed holds the IDs the source gave a record for (mapped or
	// failed), per kind. The records themselves are mapped as they
	// arrive; their source form is not kept.
	listed map[string]map[int64]bool
	// recs holds the mapped records, per kind and ID.
	recs map[string]map[int64]*record
	// own holds the IDs of the store's records imported earlier from
	// this source, per kind.
	own map[string]map[int64]bool
	// unseen holds own records the source neither listed nor denied
	// (a single read answered neither 200 nor "no such record"): kept.
	unseen map[string]map[int64]bool
	// failedIDs holds the records that failed, per kind.
	failedIDs map[string]map[int64]bool
	// protected are the password-protected events.
	protected map[int64]bool
	// redacted are the events that look as the lists show a password-
	// protected event (no description, excerpt, terms, venue or
	// organizer).
	redacted map[int64]bool
	// passwords are the protected events' passwords WordPress's route
	// named (in its edit context).
	passwords map[int64]string
	// opened are the protected events read whole with their password.
	opened map[int64]bool
	// users is what happens to the source's users (--users).
	users []*userPlan
	// authors maps the source's user IDs to users here.
	authors map[int64]int64
}

// listOf is the source list of each kind read from lists.
var listOf = map[string]listKind{
	KindCategory: listCategories, KindTag: listTags, KindVenue: listVenues,
	KindOrganizer: listOrganizers, KindEvent: listEvents,
}

func (r *importRun) run(ctx context.Context) error {
	r.listed, r.recs, r.own, r.unseen, r.failedIDs = map[string]map[int64]bool{}, map[string]map[int64]*record{}, map[string]map[int64]bool{}, map[string]map[int64]bool{}, map[string]map[int64]bool{}
	r.protected, r.redacted, r.passwords, r.opened = map[int64]bool{}, map[int64]bool{}, map[int64]string{}, map[int64]bool{}
	r.authors = map[int64]int64{}
	r.m.images = map[int64]*tecImage{}
	r.m.changed = func(c Change) {
		r.rep.sanitized(c)
		_ = r.hold(int64(heldPerRecord + len(c.From) + len(c.To)))
	}
	for _, k := range kinds {
		r.listed[k], r.recs[k], r.own[k], r.unseen[k], r.failedIDs[k] = map[int64]bool{}, map[int64]*record{}, map[int64]bool{}, map[int64]bool{}, map[int64]bool{}
	}
	var users []wpUser
	if r.opts.Users {
		var err error
		if users, err = r.c.fetchUsers(ctx); err != nil {
			return r.stopped(err)
		}
	}
	if err := r.fetch(ctx); err != nil {
		return r.stopped(err)
	}
	if err := r.hold(0); err != nil {
		return r.stopped(err)
	}
	if err := r.planUsers(ctx, users); err != nil {
		return err
	}
	r.mapAuthors()
	r.claimIDs()
	r.resolveLinks()
	if err := r.stamp(); err != nil {
		return err
	}
	if err := r.classify(ctx); err != nil {
		return r.stopped(err)
	}
	if r.opts.DryRun {
		return nil
	}
	if err := r.writeUsers(ctx); err != nil {
		return err
	}
	if err := r.write(ctx); err != nil {
		return err
	}
	if r.opts.Prune {
		return r.prune(ctx)
	}
	return nil
}

// fail records a failed record (its reason with no credential in it).
func (r *importRun) fail(kind string, id int64, err error) {
	f := Failure{Kind: kind, ID: id, Reason: r.c.redact.scrub(err.Error())}
	var fe *fieldError
	if errors.As(err, &fe) {
		f.Field, f.Reason = fe.field, r.c.redact.scrub(fe.problem)
	}
	r.rep.kind(kind).Failed = append(r.rep.kind(kind).Failed, f)
	r.failedIDs[kind][id] = true
	// Counted, not checked: the next record read checks the cap.
	r.held += int64(heldPerRecord + len(f.Reason))
	r.rep.HeldPeak = max(r.rep.HeldPeak, r.held)
}

// stopped records a cap that stopped the run in the report.
func (r *importRun) stopped(err error) error {
	var ce *CapError
	if errors.As(err, &ce) {
		r.rep.Cap = ce
	}
	return err
}
