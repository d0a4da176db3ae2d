package handlers

import (
	"context"
	"errors"
	"fmt"
	"github.com/calendar/eventcal/app/present"
	"strconv"
	"strings"

	"github.com/calendar/eventcal/app/access"
	"github.com/calendar/eventcal/app/input"
	"github.com/calendar/eventcal/config/limits"
	"github.com/calendar/eventcal/repository"
)

// pageArgs declares page and per_page.
func pageArgs() []Arg {
	return []Arg{
		{Name: "page", Type: tInteger, Default: "1", Check: positiveInt, Desc: "Page of results (from 1)."},
		{Name: "per_page", Type: tInteger, Default: "8", Check: positiveInt, Desc: "Results per page; larger values are clamped to 50."},
	}
}

// eventListArgs declares the parameters of GET /events.
func (pt *events) eventListArgs() []Arg {
	date := func(name, desc string) Arg {
		return Arg{Name: name, Type: tString, Decode: readDate(siteZone), Format: "date-time", Desc: desc}
	}
	return append(append(pageArgs(),
		date("start_date", "Events that start on or after this date (default: today 00:00 in the site zone)."),
		date("end_date", "Events that end on or before this date (default: two years after today, 23:59:59)."),
		date("starts_before", "Events starting before this date."),
		date("starts_after", "Events starting after this date."),
		date("ends_before", "Events ending before this date."),
		date("ends_after", "Events ending after this date."),
		Arg{Name: "strict_dates", Type: tString, Default: "false", Check: nonEmptyString, Desc: "true: dates apply at the exact times given; otherwise whole days are included."},
		Arg{Name: "search", Type: tString, Check: nonEmptyString, Desc: "Words that must match the title, description or excerpt, accents and case aside; the last word also as a prefix (unless followed by a space), words of 5+ letters with a typo (9+: two); only the first 10 words count.", MaxLen: limits.MaxQueryText},
		Arg{Name: "categories", Type: tArray, Items: tString, Check: pt.existingTermRefs(repository.LabelCategory), Desc: "Category IDs or slugs (any of them; children included).", MaxItems: limits.MaxListItems},
		Arg{Name: "tags", Type: tArray, Items: tString, Check: pt.existingTermRefs(repository.LabelTag), Desc: "Tag IDs or slugs (any of them).", MaxItems: limits.MaxListItems},
		Arg{Name: "venue", Type: tArray, Items: tInteger, Check: pt.existingPosts(repository.KindVenue), Desc: "Venue IDs (any of them).", MaxItems: limits.MaxListItems},
		Arg{Name: "organizer", Type: tArray, Items: tInteger, Check: pt.existingPosts(repository.KindOrganizer), Desc: "Organizer IDs (any of them).", MaxItems: limits.MaxListItems},
		Arg{Name: "featured", Type: tBoolean, Desc: "Only featured (true) or only not featured (false) events."},
		Arg{Name: "status", Type: tArray, Items: tString, Check: checkStatusList, Desc: "Post statuses; anonymous callers may only ask for publish.", MaxItems: limits.MaxListItems},
		Arg{Name: "geoloc", Type: tBoolean, Desc: "Events whose venue has (true) or lacks (false) a geo point."},
		Arg{Name: "geoloc_lat", Type: tNumber, Check: checkLatLng(90), Desc: "Latitude of the centre; needs geoloc_lng."},
		Arg{Name: "geoloc_lng", Type: tNumber, Check: checkLatLng(180), Desc: "Longitude of the centre; needs geoloc_lat."},
		Arg{Name: "geoloc_radius", Type: tNumber, Default: "25", Check: positiveNumber, Desc: "Radius around the centre in kilometres."},
		Arg{Name: "include", Type: tArray, Items: tInteger, Check: positiveIntList, Desc: "Only these event IDs; date filters are ignored.", MaxItems: limits.MaxListItems},
		Arg{Name: "post_parent", Type: tInteger, Check: existingEvent, Desc: "Children of this event."},
		Arg{Name: "ticketed", Type: tBoolean, Desc: "Events with (true) or without (false) tickets."},
		Arg{Name: "event_status", Type: tArray, Items: tString, Check: checkEventStatusList, Desc: "Event statuses (any of them): scheduled, canceled, postponed, moved_online; an occurrence has its own.", MaxItems: limits.MaxListItems},
		Arg{Name: "password", Type: tString, Desc: "Shows protected fields of events with this password."},
		Arg{Name: "context", Type: tString, Enum: []string{"view", "edit"}, Default: "view", Desc: "edit shows protected fields to callers who may edit the event."},
		collapseSeriesArg(),
	), textSearchArgs()...)
}

// placeListArgs declares the parameters of GET /venues and /organizers.
func (pt *items) placeListArgs() []Arg {
	return append(pageArgs(),
		Arg{Name: "search", Type: tString, Check: nonEmptyString, Desc: "Words that must all match one field (name, description, address or contact fields), accents and case aside; the last word also as a prefix (unless followed by a space), words of 5+ letters with a typo (9+: two); only the first 10 words count.", MaxLen: limits.MaxQueryText},
		Arg{Name: "event", Type: tInteger, Check: existingEvent, Desc: "Items linked to this event."},
		Arg{Name: "has_events", Type: tAny, Desc: "Truthy: items with events (not draft or pending); falsy: items without."},
		Arg{Name: "only_with_upcoming", Type: tAny, Default: "false", Desc: "Truthy: items with an event starting now or later."},
		Arg{Name: "status", Type: tArray, Items: tString, Check: checkStatusList, Desc: "Post statuses; anonymous callers may only ask for publish.", MaxItems: limits.MaxListItems},
	)
}

// positiveNumber accepts a number greater than zero.
func positiveNumber(_ *Request, v any) string {
	f, ok := input.AsFloat(v)
	if !ok || f <= 0 {
		return "Must be a number greater than 0."
	}
	return ""
}

// positiveIntList accepts a CSV or list of positive whole numbers.
func positiveIntList(_ *Request, v any) string {
	if ids, ok := input.AsIntList(v); !ok || len(ids) == 0 {
		return "Must be one or more IDs (whole numbers of 1 or more), comma-separated or as a list."
	}
	return ""
}

// checkStatusList accepts registered statuses; callers who may not edit
// posts may only ask for exactly publish (as in the original plugin).
func checkStatusList(r *Request, v any) string {
	return checkNameList(v, repository.Statuses, repository.IsStatus, func(s string) string {
		if !access.CanCreateRecords(r.user) && s != repository.StatusPublish {
			return "Must be publish: only callers who may create events may list other statuses."
		}
		return ""
	})
}

// checkEventStatusList checks a list (or CSV) of event statuses.
func checkEventStatusList(_ *Request, v any) string {
	return checkNameList(v, repository.EventStatuses, func(s string) bool {
		_, ok := repository.StatusOf(s)
		return ok && s != ""
	}, nil)
}

// checkNameList checks a list (or CSV) of one or more of names: each item
// one that known accepts, then (allowed not nil) one the caller may ask
// for (allowed's message, "" when it may).
func checkNameList(v any, names []string, known func(string) bool, allowed func(string) string) string {
	items := input.AsList(v)
	all := strings.Join(names, ", ")
	if len(items) == 0 {
		return "Must be one or more of " + all + "."
	}
	for _, it := range items {
		s, _ := input.AsString(it)
		if !known(s) {
			return "Must be one or more of " + all + "; " + strconv.Quote(s) + " is none of them."
		}
		if allowed != nil {
			if msg := allowed(s); msg != "" {
				return msg
			}
		}
	}
	return ""
}

// existingPosts checks a list of IDs of existing posts of a kind.
func (pt *items) existingPosts(kind repository.Kind) func(r *Request, v any) string {
	return func(r *Request, v any) string {
		return existingIDs(r, v, string(kind), pt.store.GetRecords, func(p *repository.Record) bool { return p.Kind == kind })
	}
}

// existingIDs checks that v is a list of positive IDs of what ("venue")
// that fetch finds and that fits accepts; it returns "" or the message for
// data.params. A store failure is kept in r.depErr (a 503).
func existingIDs[T any](r *Request, v any, what string, fetch func(context.Context, []int64) (map[int64]T, error), fits func(T) bool) string {
	if msg := idListProblem(v, what); msg != "" {
		return msg
	}
	ids, _ := input.AsIntList(v)
	found, err := fetch(r.ctx, ids)
	if err != nil {
		r.depErr = err
		return "The store is not available."
	}
	for _, id := range ids {
		x, ok := found[id]
		if !ok || !fits(x) {
			return fmt.Sprintf("There is no %s with ID %d.", what, id)
		}
	}
	return ""
}

// idListProblem says what is wrong with a list of IDs of what, or "":
// an item that is not a whole number of 1 or more is named (a slug or a
// name where an ID is expected).
func idListProblem(v any, what string) string {
	items := input.AsList(v)
	if len(items) == 0 {
		return "Must be one or more " + what + " IDs, comma-separated or as a list."
	}
	for _, it := range items {
		if n, ok := input.AsInt(it); !ok || n <= 0 {
			shown, _ := input.AsString(it)
			if _, scalar := input.AsString(it); !scalar {
				shown = "an object or a list"
			} else {
				shown = strconv.Quote(shown)
			}
			return fmt.Sprintf("Must be %s IDs (whole numbers of 1 or more), not slugs or names: %s is not an ID.", what, shown)
		}
	}
	return ""
}

// existingTermRefs checks that every item names an existing term by ID,
// slug or name.
func (pt *items) existingTermRefs(tax repository.LabelKind) func(r *Request, v any) string {
	return func(r *Request, v any) string {
		ids, err := r.resolveTermRefs(tax, v)
		var unknown unknownTermError
		switch {
		case errors.As(err, &unknown):
			what := termNoun(tax)
			if unknown.ref == "" {
				return "Must name one or more " + map[string]string{"category": "categories", "tag": "tags"}[what] + " by ID, slug or name."
			}
			return fmt.Sprintf("There is no %s with the ID, slug or name %s.", what, strconv.Quote(unknown.ref))
		case err != nil:
			r.depErr = err
			return "The store is not available."
		}
		// Keep the IDs: eventQuery filters on them without resolving again.
		if r.termIDs == nil {
			r.termIDs = map[repository.LabelKind][]int64{}
		}
		r.termIDs[tax] = ids
		return ""
	}
}

// termNoun names one term of a taxonomy in messages.
func termNoun(tax repository.LabelKind) string {
	if tax == repository.LabelCategory {
		return "category"
	}
	return "tag"
}

// unknownTermError is returned for a term reference that names nothing
// (ref is "" when no reference was given at all).
type unknownTermError struct{ ref string }

func (e unknownTermError) Error() string { return "unknown term " + strconv.Quote(e.ref) }

// resolveTermRefs maps term references (IDs, slugs, names) to IDs.
func (r *Request) resolveTermRefs(tax repository.LabelKind, v any) ([]int64, error) {
	items := input.AsList(v)
	if len(items) == 0 {
		return nil, unknownTermError{}
	}
	var ids []int64
	for _, it := range items {
		sv, _ := input.AsString(it)
		n, num := input.AsInt(it)
		k := present.TermRefKey{Tax: tax, Lang: r.lang, Ref: sv, ID: n, Num: num}
		id, err := present.ResolveTermRef(r.s.render, k, func() (int64, error) { return r.lookupTermRef(k) })
		var unsure uncertainTermError
		switch {
		case errors.As(err, &unsure):
			return nil, unknownTermError{ref: sv}
		case err != nil:
			return nil, err
		case id == 0:
			return nil, unknownTermError{ref: sv}
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// uncertainTermError is a term reference lookupTermRef could not confirm
// because reading it by ID failed (not a 404): answered as unknown, as
// before, but never kept by the reference cache.
type uncertainTermError struct{ err error }

func (e uncertainTermError) Error() string { return "term by ID: " + e.err.Error() }

// lookupTermRef resolves one term reference in the store: by slug or name
// (LookupLabel), then by ID. It returns 0 when k names no term of k.Tax.
func (r *Request) lookupTermRef(k present.TermRefKey) (int64, error) {
	t, err := r.s.cal.LookupLabel(r.ctx, k.Tax, k.Lang, k.Ref)
	if err != nil {
		return 0, err
	}
	if t != nil {
		return t.ID, nil
	}
	if !k.Num {
		return 0, nil
	}
	tt, err := r.s.store.GetLabel(r.ctx, k.ID)
	switch {
	case errors.Is(err, repository.ErrNotFound):
		return 0, nil
	case err != nil:
		return 0, uncertainTermError{err}
	case tt.Taxonomy != k.Tax:
		return 0, nil
	}
	return tt.ID, nil
}
