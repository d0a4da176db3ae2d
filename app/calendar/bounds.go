package calendar

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/calendar/eventcal/app/access"
	"github.com/calendar/eventcal/app/apierr"
	"github.com/calendar/eventcal/app/calendar/recurrence"
	"github.com/calendar/eventcal/repository"
)

// Content bounds that protect memory from the untrusted roles: what one
// series' changed occurrences hold (MAX_SERIES_OVERRIDE_TEXT) and how many
// search-index documents one account's events make
// (MAX_ACCOUNT_DOCUMENTS). Both are checked inside the write's
// compare-and-swap, so a refused write stores nothing. Each refusal is a
// 400 whose code names the bound and whose data names the setting, the
// limit and the size the write would have reached, in the manner of
// WordPress's upload quota (rest_upload_limited_space, also a 400).

// Error codes of the content bounds.
const (
	codeSeriesTextLimit      = "rest_series_override_text_limit"
	codeAccountDocumentLimit = "rest_account_document_limit"
)

// applyRecurrence writes the recurrence sent (if any) onto an event whose
// dates are already applied, validates the series against its start and
// zone, and drops the overrides of occurrences the write removed. A
// single event keeps no overrides.
func (o *op) applyRecurrence(plan *writePlan, p *repository.Record) error {
	e := p.Event
	if in := plan.ev.Recurrence; in.Set {
		e.Recurrence = in.Value.Clone()
	}
	if e.Recurrence == nil {
		e.Overrides = nil
		return nil
	}
	loc, _ := o.s.zone(e)
	series := recurrence.SeriesOf(e, loc)
	lim := o.s.RecurrenceLimits()
	if err := recurrence.Validate(series, lim); err != nil {
		return occurrenceBoundProblem(err, lim)
	}
	// Expanded once per change: the occurrence routes and feeds read
	// this expansion (kept by content, so a write that fails later
	// leaves only an unused entry).
	o.s.expansions.Keep(series, lim)
	if len(e.Overrides) > 0 {
		keys, err := recurrence.Keys(series, lim)
		if err != nil {
			return RecurrenceProblem(err)
		}
		var kept []repository.OccurrenceOverride
		for _, ov := range e.Overrides {
			if keys[ov.Key] {
				kept = append(kept, ov)
			}
		}
		e.Overrides = kept
	}
	return nil
}

// RecurrenceProblem turns a refused series into a 400 on the recurrence
// parameter whose message names the part at fault; other errors are
// returned as they are.
func RecurrenceProblem(err error) error {
	var re *recurrence.Error
	if errors.As(err, &re) {
		return apierr.InvalidParam("recurrence", re.Field+": "+re.Message+".")
	}
	return err
}

// occurrenceBoundProblem is RecurrenceProblem, naming the setting in the
// 400 of a series with more occurrences than MAX_SERIES_OCCURRENCES
// (recurrence.Validate says "at most N are allowed").
func occurrenceBoundProblem(err error, lim recurrence.Limits) error {
	var re *recurrence.Error
	if errors.As(err, &re) && lim.MaxOccurrences > 0 && strings.Contains(re.Message, fmt.Sprintf("at most %d are allowed", lim.MaxOccurrences)) {
		return apierr.InvalidParam("recurrence", re.Field+": "+re.Message+" (MAX_SERIES_OCCURRENCES).")
	}
	return RecurrenceProblem(err)
}

// documentCount is how many search-index documents the event e makes: one
// for a single event, one per occurrence from its first to the horizon
// for a series (as the sync worker's document builder expands it; a series
// the expansion refuses is indexed as one document).
func (s *Service) documentCount(e *repository.EventFields) int {
	if e == nil || e.Recurrence == nil {
		return 1
	}
	loc, _ := s.zone(e)
	occs, err := recurrence.Expand(recurrence.SeriesOf(e, loc), time.Time{}, time.Time{}, s.RecurrenceLimits())
	if err != nil || len(occs) == 0 {
		return 1
	}
	return len(occs)
}

// checkOverrideText refuses a change of a series' overrides that takes
// their text past MAX_SERIES_OVERRIDE_TEXT. before is the text they held
// before the change: a change that does not grow it (one shortening a
// series stored over a lowered bound) is never refused.
func (s *Service) checkOverrideText(field string, before int, e *repository.EventFields) error {
	limit := s.cfg.MaxSeriesOverrideText
	after := e.OverrideTextBytes()
	if limit <= 0 || after <= limit || after <= before {
		return nil
	}
	return apierr.New(400, codeSeriesTextLimit, fmt.Sprintf(
		"The changed occurrences of a series hold at most %d bytes of text (titles, descriptions and excerpts in every language; MAX_SERIES_OVERRIDE_TEXT): this change of %s would make them %d bytes. Shorten it, or change the series itself instead of its occurrences.",
		limit, field, after)).
		With("setting", "MAX_SERIES_OVERRIDE_TEXT").With("limit", limit).With("size", after).With("param", field)
}

// boundDocuments records in the event p how many index documents it
// makes (EventFields.Documents) and refuses the write when a contributor
// or author would take their account's events past MAX_ACCOUNT_DOCUMENTS.
// It runs inside the write's compare-and-swap (p is the record being
// written, new when p.ID is 0), after the recurrence is applied. Editors
// and admins are not bounded; a write that does not grow the account's
// documents is never refused.
//
// The sum is read from the store (Store.AccountDocuments) at each write,
// so writes of one account racing each other may each pass: the bound is
// then exceeded by at most their number times one series' occurrences.
func (o *op) boundDocuments(p *repository.Record) error {
	e := p.Event
	before := 0
	if p.ID != 0 {
		before = max(e.Documents, 1)
	}
	e.Documents = o.s.documentCount(e)
	limit := o.s.cfg.MaxAccountDocuments
	if limit <= 0 || access.CanEditOthers(o.user) || e.Documents <= before {
		return nil
	}
	total, err := o.s.store.AccountDocuments(o.ctx, p.Author)
	if err != nil {
		return err
	}
	after := total - before + e.Documents
	if after <= limit {
		return nil
	}
	return apierr.New(400, codeAccountDocumentLimit, fmt.Sprintf(
		"The events of one account make at most %d search-index documents (one per event, one per occurrence of a series, every status included; MAX_ACCOUNT_DOCUMENTS): this write would make the account's %d. Delete events or shorten series first, or ask an editor.",
		limit, after)).
		With("setting", "MAX_ACCOUNT_DOCUMENTS").With("limit", limit).With("size", after)
}
