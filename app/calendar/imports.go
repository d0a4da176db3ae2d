package calendar

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/calendar/eventcal/app/calendar/recurrence"
	"github.com/calendar/eventcal/app/datetext"
	"github.com/calendar/eventcal/repository"
)

// Import mode: an importer (app/wpimport) hands over whole records as the
// source has them, keeping their IDs, slugs, dates, authors and origin
// stamps. The importer checks what it maps against the API's text and
// contact rules; the calendar checks each record against its own rules
// (CheckImported) when the importer plans it, before anything is written,
// and again when Import writes it. The importer writes linked records
// before the records that link them and drops links to records it does
// not import.

// FieldError is a record the calendar refuses in import mode: the field
// at fault and what is wrong with it.
type FieldError struct {
	Field, Problem string
}

// Error implements error.
func (e *FieldError) Error() string { return e.Field + ": " + e.Problem }

// CheckImported applies the calendar's rules to a record as imported: a
// kept ID, a kind the calendar stores, and for an event its time zone,
// its wall-clock start and end (not before the start, as an API write),
// an end not before the start in UTC, and its recurrence (the series'
// rules and bounds, RECURRENCE_HORIZON and MAX_SERIES_OCCURRENCES).
// It reads nothing from the store.
func (s *Service) CheckImported(p *repository.Record) error {
	if p.ID <= 0 {
		return &FieldError{Field: "id", Problem: "an imported record keeps its ID: a whole number of 1 or more"}
	}
	switch p.Kind {
	case repository.KindVenue, repository.KindOrganizer, repository.KindImage:
		return nil
	case repository.KindEvent:
	default:
		return &FieldError{Field: "kind", Problem: fmt.Sprintf("%q is not a kind of record the calendar stores", p.Kind)}
	}
	e := p.Event
	if e == nil {
		return &FieldError{Field: "start_date", Problem: "an event has a start and an end"}
	}
	if e.Timezone != "" {
		if _, ok := datetext.LoadZone(e.Timezone); !ok {
			return &FieldError{Field: "timezone", Problem: fmt.Sprintf("%q is not an IANA time zone name, UTC or an offset such as UTC+2", e.Timezone)}
		}
	}
	loc, _ := s.zone(e)
	if _, _, err := eventSpan(e, loc); err != nil {
		return err
	}
	if e.EndUTC.Before(e.StartUTC) {
		return &FieldError{Field: "end_date", Problem: fmt.Sprintf("the end %s is before the start %s (UTC)", e.EndUTC.Format(datetext.Layout), e.StartUTC.Format(datetext.Layout))}
	}
	if _, ok := repository.StatusOf(e.EventStatus); !ok {
		return &FieldError{Field: "event_status", Problem: fmt.Sprintf("%q is not one of %s", e.EventStatus, strings.Join(repository.EventStatuses, ", "))}
	}
	if n := utf8.RuneCountInString(e.EventStatusReason); n > MaxEventStatusReason {
		return &FieldError{Field: "event_status_reason", Problem: fmt.Sprintf("%d characters, at most %d are kept", n, MaxEventStatusReason)}
	}
	if e.Recurrence != nil {
		lim := s.RecurrenceLimits()
		if err := recurrence.Validate(recurrence.SeriesOf(e, loc), lim); err != nil {
			var re *recurrence.Error
			if errors.As(err, &re) {
				return &FieldError{Field: "recurrence", Problem: re.Field + ": " + re.Message}
			}
			return err
		}
	}
	return nil
}

// Import writes a record as imported (CheckImported first): created
// under its own ID, or with replace put in place of the stored record of
// that ID (its revision kept for the store's compare-and-swap). The store
// errors of a taken or vanished ID (repository.ErrDuplicate,
// repository.ErrNotFound) are returned as they are. It returns the record
// as stored.
func (s *Service) Import(ctx context.Context, p *repository.Record, replace bool) (*repository.Record, error) {
	if err := s.CheckImported(p); err != nil {
		return nil, err
	}
	if !replace {
		c := p.Clone()
		if err := s.store.CreateRecord(ctx, c); err != nil {
			return nil, err
		}
		s.countsChanged(c)
		return c, nil
	}
	var before *repository.Record
	stored, err := s.store.UpdateRecord(ctx, p.ID, func(q *repository.Record) error {
		before = q.Clone()
		rev := q.Revision
		*q = *p.Clone()
		q.Revision = rev
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.countsChanged(before, stored)
	return stored, nil
}
