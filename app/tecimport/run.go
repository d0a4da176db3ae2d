package tecimport

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"

	"github.com/calendar/eventcal/repository"
)

// lookupBatch is how many IDs one GetPosts/GetTerms call asks for.
const lookupBatch = 500

// record is one source record mapped to its store form.
type record struct {
	kind  string
	id    int64
	post  *repository.Post
	term  *repository.Term
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
	c        *client
	store    repository.Store
	opts     Options
	m        *mapper
	rep      *Report
	progress Progress
	log      *slog.Logger

	// raw holds the source records read, per kind and ID.
	raw map[string]map[int64]json.RawMessage
	// recs holds the mapped records, per kind and ID.
	recs map[string]map[int64]*record
	// own holds the IDs of the store's records imported earlier from
	// this source, per kind.
	own map[string]map[int64]bool
	// unseen holds own records the source neither listed nor denied
	// (a single read answered neither 200 nor "no such record"): kept.
	unseen map[string]map[int64]bool
	// protected are the password-protected events.
	protected map[int64]bool
}

// listOf is the source list of each kind read from lists.
var listOf = map[string]listKind{
	KindCategory: listCategories, KindTag: listTags, KindVenue: listVenues,
	KindOrganizer: listOrganizers, KindEvent: listEvents,
}

func (r *importRun) run(ctx context.Context) error {
	r.raw, r.recs, r.own, r.unseen = map[string]map[int64]json.RawMessage{}, map[string]map[int64]*record{}, map[string]map[int64]bool{}, map[string]map[int64]bool{}
	r.protected = map[int64]bool{}
	r.m.images = map[int64]*tecImage{}
	for _, k := range kinds {
		r.raw[k], r.recs[k], r.own[k], r.unseen[k] = map[int64]json.RawMessage{}, map[int64]*record{}, map[int64]bool{}, map[int64]bool{}
	}
	if err := r.fetch(ctx); err != nil {
		return err
	}
	r.mapAll()
	r.resolveLinks()
	if err := r.stamp(); err != nil {
		return err
	}
	if err := r.classify(ctx); err != nil {
		return err
	}
	if r.opts.DryRun {
		return nil
	}
	if err := r.write(ctx); err != nil {
		return err
	}
	if r.opts.Prune {
		return r.prune(ctx)
	}
	return nil
}

// fail records a failed record.
func (r *importRun) fail(kind string, id int64, err error) {
	f := Failure{Kind: kind, ID: id, Reason: err.Error()}
	var fe *fieldError
	if errors.As(err, &fe) {
		f.Field, f.Reason = fe.field, fe.problem
	}
	r.rep.kind(kind).Failed = append(r.rep.kind(kind).Failed, f)
}
