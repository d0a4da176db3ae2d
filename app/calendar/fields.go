package calendar

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/calendar/eventcal/app/access"
	"github.com/calendar/eventcal/app/apierr"
	"github.com/calendar/eventcal/app/datetext"
	"github.com/calendar/eventcal/app/input/values"
	"github.com/calendar/eventcal/config/limits"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/repository/wallclock"
)

// newPost is a new, empty post of kind by the actor.
func (o *op) newPost(kind repository.Kind) *repository.Record {
	now := o.s.now().UTC().Truncate(time.Second)
	p := &repository.Record{Kind: kind, Author: o.userID(), Date: now, Modified: now}
	switch kind {
	case repository.KindEvent:
		p.Event = &repository.EventFields{ShowMap: true, ShowMapLink: true,
			Categories: []int64{}, Tags: []int64{}, Venues: []int64{}, Organizers: []int64{}}
	case repository.KindVenue:
		p.Venue = &repository.VenueFields{ShowMap: true, ShowMapLink: true}
	case repository.KindOrganizer:
		p.Organizer = &repository.OrganizerFields{}
	}
	return p
}

// apply writes the plan onto p (a new post, or the current record inside
// UpdatePost's compare-and-swap loop). It may run more than once.
func (o *op) apply(plan *writePlan, p *repository.Record) error {
	in := plan.in
	lang := o.lang
	creating := p.ID == 0
	if in.Name.Set {
		p.Title.Set(lang, strings.TrimSpace(in.Name.Value))
	}
	for _, f := range []struct {
		in  Opt[string]
		dst *repository.Text
	}{{in.Description, &p.Content}, {in.Excerpt, &p.Excerpt}} {
		if f.in.Set {
			f.dst.Set(lang, f.in.Value)
		}
	}
	// Slug: the one sent (normalised), else keep, else derive from the title.
	if in.Slug.Set {
		if sl := repository.NormalizeSlug(in.Slug.Value); sl != "" {
			p.Slug.Set(lang, sl)
		}
	}
	if p.Slug[lang] == "" && p.Title.Has(lang) {
		p.Slug.Set(lang, repository.Slugify(p.Title[lang]))
	}
	if len(p.Slug) == 0 || (p.Slug[lang] == "" && p.Slug[o.s.cfg.DefaultLanguage] == "" && creating) {
		p.Slug.Set(lang, string(p.Kind))
	}
	if plan.setAuthor {
		p.Author = plan.author
	}
	if plan.setImage {
		p.ImageID = plan.imageID
	}
	if ev := plan.ev; ev != nil && ev.Password.Set && p.Kind == repository.KindEvent {
		p.Password = ev.Password.Value
	}
	if err := o.applyStatusAndDate(plan, p, creating); err != nil {
		return err
	}
	p.Modified = o.s.now().UTC().Truncate(time.Second)
	return o.applyMeta(plan, p)
}

// applyStatusAndDate sets the status and the publish date. As in the
// original plugin, a contributor asking for publish or future gets
// pending, and a new post without a status is a draft for contributors
// and published for everyone else. A publish date in the future makes the
// post "future", a future post whose date passed is published.
func (o *op) applyStatusAndDate(plan *writePlan, p *repository.Record, creating bool) error {
	in := plan.in
	zone := o.s.cfg.Location
	if p.Event != nil {
		zone, _ = o.s.zone(p.Event)
		if ev := plan.ev; ev != nil && ev.Timezone.Set {
			if s := ev.Timezone.Value; s != "" {
				zone, _ = datetext.LoadZone(s)
			} else {
				zone = o.s.cfg.Location
			}
		}
	}
	now := o.s.now()
	dateSet := false
	if in.Date.Set {
		t, err := o.dateIn(plan, "date", in.Date, zone)
		if err != nil {
			return err
		}
		p.Date, dateSet = t.UTC().Truncate(time.Second), true
	}
	if in.DateUTC.Set {
		t, err := o.dateIn(plan, "date_utc", in.DateUTC, time.UTC)
		if err != nil {
			return err
		}
		p.Date, dateSet = t.UTC().Truncate(time.Second), true
	}
	status := ""
	if in.Status.Set {
		status = in.Status.Value
	}
	switch {
	case status == "" && creating:
		status = repository.StatusPublish
		if !access.CanPublish(o.user) {
			status = repository.StatusDraft
		}
	case status == "":
		status = p.Status
	}
	if !access.CanPublish(o.user) && (status == repository.StatusPublish || status == repository.StatusFuture || status == repository.StatusPrivate) && status != p.Status {
		status = repository.StatusPending
	}
	if status == repository.StatusPublish && p.Date.After(now) && (dateSet || creating || p.Status != repository.StatusPublish) {
		status = repository.StatusFuture
	}
	if status == repository.StatusFuture && !p.Date.After(now) {
		status = repository.StatusPublish
	}
	p.Status = status
	return nil
}

// applyMeta writes the kind-specific fields (everything but text, slug,
// author, status and dates), so duplicate detection can reuse it.
func (o *op) applyMeta(plan *writePlan, p *repository.Record) error {
	str := func(in Opt[string], dst *string) {
		if in.Set {
			*dst = strings.TrimSpace(in.Value)
		}
	}
	switch p.Kind {
	case repository.KindEvent:
		return o.applyEvent(plan, p)
	case repository.KindVenue:
		if p.Venue == nil {
			p.Venue = &repository.VenueFields{ShowMap: true, ShowMapLink: true}
		}
		v, in := p.Venue, plan.ve
		for _, f := range []struct {
			in  Opt[string]
			dst *string
		}{{in.Address, &v.Address}, {in.City, &v.City}, {in.Country, &v.Country}, {in.Province, &v.Province},
			{in.State, &v.State}, {in.Zip, &v.Zip}, {in.Phone, &v.Phone}, {in.Website, &v.Website}} {
			str(f.in, f.dst)
		}
		if in.StateProvince.Set {
			str(in.StateProvince, &v.StateProvince)
		} else if in.State.Set || in.Province.Set || in.Country.Set || (p.ID == 0 && v.StateProvince == "") {
			v.StateProvince = deriveStateProvince(v)
		}
		if in.ShowMap.Set {
			v.ShowMap = in.ShowMap.Value
		}
		if in.ShowMapLink.Set {
			v.ShowMapLink = in.ShowMapLink.Value
		}
		for _, f := range []struct {
			in  Opt[*float64]
			dst **float64
		}{{in.GeoLat, &v.GeoLat}, {in.GeoLng, &v.GeoLng}} {
			if f.in.Set {
				if f.in.Value != nil {
					x := *f.in.Value
					*f.dst = &x
				} else {
					*f.dst = nil
				}
			}
		}
		if plan.setImage {
			p.ImageID = plan.imageID
		}
	case repository.KindOrganizer:
		if p.Organizer == nil {
			p.Organizer = &repository.OrganizerFields{}
		}
		org, in := p.Organizer, plan.or
		str(in.Phone, &org.Phone)
		str(in.Email, &org.Email)
		str(in.Website, &org.Website)
		if plan.setImage {
			p.ImageID = plan.imageID
		}
	}
	return nil
}

// deriveStateProvince is the original's rule: the state for US (or no)
// country, otherwise the province.
func deriveStateProvince(v *repository.VenueFields) string {
	c := strings.ToLower(strings.TrimSpace(v.Country))
	if (c == "" || c == "us" || c == "usa" || c == "united states" || c == "united states of america") && v.State != "" {
		return v.State
	}
	if v.Province != "" {
		return v.Province
	}
	return v.State
}

// applyEvent writes event fields: the time zone, the dates (read as
// wall-clock time in the event's zone, as the original plugin reads them;
// a Unix timestamp is an instant), flags, cost, website and links.
func (o *op) applyEvent(plan *writePlan, p *repository.Record) error {
	in := plan.ev
	if p.Event == nil {
		p.Event = &repository.EventFields{ShowMap: true, ShowMapLink: true}
	}
	e := p.Event
	if in.Timezone.Set {
		e.Timezone = strings.TrimSpace(in.Timezone.Value)
	}
	loc, _ := o.s.zone(e)
	for _, d := range []struct {
		name string
		in   Opt[datetext.Value]
		dst  *string
	}{{"start_date", in.StartDate, &e.StartLocal}, {"end_date", in.EndDate, &e.EndLocal}} {
		if d.in.Set {
			t, err := o.dateIn(plan, d.name, d.in, loc)
			if err != nil {
				return err
			}
			*d.dst = t.In(loc).Format(datetext.Layout)
			if w, ok := d.in.Value.Wall(); ok && wallclock.InGap(w, loc) {
				// Kept as written: a series repeats this wall time; the
				// instant (StartUTC) is after the gap (wallclock.Resolve).
				*d.dst = w.Format(datetext.Layout)
			}
		}
	}
	if in.AllDay.Set {
		e.AllDay = in.AllDay.Value
	}
	if e.AllDay {
		if len(e.StartLocal) >= 10 {
			e.StartLocal = e.StartLocal[:10] + " 00:00:00"
		}
		if len(e.EndLocal) >= 10 {
			e.EndLocal = e.EndLocal[:10] + " 23:59:59"
		}
	}
	start, end, err := eventSpan(e, loc)
	if err != nil {
		return apierr.InvalidParam(err.Field, err.Problem)
	}
	e.StartUTC, e.EndUTC = start.UTC(), end.UTC()
	for _, f := range []struct {
		in  Opt[bool]
		dst *bool
	}{{in.ShowMap, &e.ShowMap}, {in.ShowMapLink, &e.ShowMapLink}, {in.HideFromListings, &e.HideFromListings},
		{in.Sticky, &e.Sticky}, {in.Featured, &e.Featured}, {in.Ticketed, &e.Ticketed}} {
		if f.in.Set {
			*f.dst = f.in.Value
		}
	}
	if in.Cost.Set {
		e.Cost = in.Cost.Value
	}
	if in.EventStatus.Set {
		e.EventStatus = storedEventStatus(in.EventStatus.Value)
	}
	if in.EventStatusReason.Set {
		e.EventStatusReason = strings.TrimSpace(in.EventStatusReason.Value)
	}
	for _, f := range []struct {
		in  Opt[string]
		dst *string
	}{{in.CurrencySymbol, &e.CurrencySymbol}, {in.CurrencyCode, &e.CurrencyCode}, {in.CurrencyPosition, &e.CurrencyPosition}} {
		if f.in.Set {
			*f.dst = f.in.Value
		}
	}
	if in.Website.Set {
		s := strings.TrimSpace(in.Website.Value)
		e.Website = &s
	}
	if plan.setVenues {
		e.Venues = plan.venueIDs
	}
	if plan.setOrganizers {
		e.Organizers = plan.organizerIDs
	}
	if plan.setCategories {
		e.Categories = plan.categoryIDs
	}
	if plan.setTags {
		e.Tags = plan.tagIDs
	}
	if in.Source.Set {
		if l := in.Source.Value; l != nil {
			c := *l
			p.Source = &c
		} else {
			p.Source = nil
		}
	}
	if in.ClearOverrides {
		e.Overrides = nil
	}
	if err := o.applyRecurrence(plan, p); err != nil {
		return err
	}
	return o.boundDocuments(p)
}

// eventSpan reads the event's wall-clock start and end in loc and refuses
// a missing one or an end before the start, saying which field is at
// fault.
func eventSpan(e *repository.EventFields, loc *time.Location) (start, end time.Time, err *FieldError) {
	start, err1 := wallclock.Parse(datetext.Layout, e.StartLocal, loc)
	end, err2 := wallclock.Parse(datetext.Layout, e.EndLocal, loc)
	if err1 != nil || err2 != nil {
		return start, end, &FieldError{Field: "start_date", Problem: "The event has no valid start and end: send start_date and end_date, each as " + values.DateForms + "."}
	}
	if end.Before(start) {
		return start, end, &FieldError{Field: "end_date", Problem: fmt.Sprintf("The end date must not be before the start date: end_date is %s, start_date %s (%s).", e.EndLocal, e.StartLocal, loc)}
	}
	return start, end, nil
}

// MaxEventStatusReason bounds event_status_reason, in characters.
const MaxEventStatusReason = limits.MaxShortText

// CheckEventStatus adds to errs what is wrong with an event status and
// its reason: the status must be one of repository.EventStatuses ("" is
// scheduled), the reason at most MaxEventStatusReason characters.
func CheckEventStatus(errs *apierr.Params, status, reason Opt[string]) {
	if status.Set {
		if _, ok := repository.StatusOf(strings.TrimSpace(status.Value)); !ok {
			errs.InvalidValue("event_status", "Must be one of "+strings.Join(repository.EventStatuses, ", ")+".", status.Raw)
		}
	}
	if reason.Set && utf8.RuneCountInString(strings.TrimSpace(reason.Value)) > MaxEventStatusReason {
		errs.InvalidValue("event_status_reason", fmt.Sprintf("Must be at most %d characters.", MaxEventStatusReason), reason.Raw)
	}
}

// storedEventStatus is the stored form of a checked event status:
// scheduled (the default) is stored as "".
func storedEventStatus(s string) string {
	st, _ := repository.StatusOf(strings.TrimSpace(s))
	if st == repository.EventScheduled {
		return ""
	}
	return st
}
