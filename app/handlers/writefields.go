package handlers

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/calendar/eventcal/app/access"
	"github.com/calendar/eventcal/app/apierr"
	"github.com/calendar/eventcal/app/datetext"
	"github.com/calendar/eventcal/app/input"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/repository/wallclock"
)

// applyStatusAndDate sets the status and the publish date. As in the
// original plugin, a contributor asking for publish or future gets
// pending, and a new post without a status is a draft for contributors
// and published for everyone else. A publish date in the future makes the
// post "future", a future post whose date passed is published.
func (plan *writePlan) applyStatusAndDate(r *Request, p *repository.Post, creating bool) error {
	b := plan.b
	zone := r.s.cfg.Location
	if p.Event != nil {
		zone, _ = r.s.render.EventZone(p.Event)
		if v, ok := b.Get("timezone"); ok {
			if s, _ := input.AsString(v); s != "" {
				zone, _ = datetext.LoadZone(s)
			} else {
				zone = r.s.cfg.Location
			}
		}
	}
	now := r.s.now()
	dateSet := false
	if v, ok := b.Get("date"); ok {
		s, _ := input.AsString(v)
		t, err := input.ParseDateInRange(s, zone, now, r.lang)
		if err != nil {
			return apierr.InvalidValue("date", input.DateProblem(s, zone, r.s.now(), r.lang), v)
		}
		p.Date, dateSet = t.UTC().Truncate(time.Second), true
	}
	if v, ok := b.Get("date_utc"); ok {
		s, _ := input.AsString(v)
		t, err := input.ParseDateInRange(s, time.UTC, now, r.lang)
		if err != nil {
			return apierr.InvalidValue("date_utc", input.DateProblem(s, time.UTC, r.s.now(), r.lang), v)
		}
		p.Date, dateSet = t.UTC().Truncate(time.Second), true
	}
	status := ""
	if v, ok := b.Get("status"); ok {
		status, _ = input.AsString(v)
	}
	switch {
	case status == "" && creating:
		status = repository.StatusPublish
		if !access.CanPublish(r.user) {
			status = repository.StatusDraft
		}
	case status == "":
		status = p.Status
	}
	if !access.CanPublish(r.user) && (status == repository.StatusPublish || status == repository.StatusFuture || status == repository.StatusPrivate) && status != p.Status {
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
func (plan *writePlan) applyMeta(r *Request, p *repository.Post) error {
	b := plan.b
	str := func(name string, dst *string) {
		if v, ok := b.Get(name); ok {
			s, _ := input.AsString(v)
			*dst = strings.TrimSpace(s)
		}
	}
	switch p.Kind {
	case repository.KindEvent:
		return plan.applyEvent(r, p)
	case repository.KindVenue:
		if p.Venue == nil {
			p.Venue = &repository.VenueFields{ShowMap: true, ShowMapLink: true}
		}
		v := p.Venue
		for name, dst := range map[string]*string{"address": &v.Address, "city": &v.City, "country": &v.Country,
			"province": &v.Province, "state": &v.State, "zip": &v.Zip, "phone": &v.Phone, "website": &v.Website} {
			str(name, dst)
		}
		if b.Has("stateprovince") {
			str("stateprovince", &v.StateProvince)
		} else if b.Has("state") || b.Has("province") || b.Has("country") || (p.ID == 0 && v.StateProvince == "") {
			v.StateProvince = deriveStateProvince(v)
		}
		if x, ok := b.Get("show_map"); ok {
			v.ShowMap = input.Truthy(x)
		}
		if x, ok := b.Get("show_map_link"); ok {
			v.ShowMapLink = input.Truthy(x)
		}
		for name, dst := range map[string]**float64{"geo_lat": &v.GeoLat, "geo_lng": &v.GeoLng} {
			if x, ok := b.Get(name); ok {
				if f, ok := input.AsFloat(x); ok {
					f := f
					*dst = &f
				} else {
					*dst = nil
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
		o := p.Organizer
		str("phone", &o.Phone)
		str("email", &o.Email)
		str("website", &o.Website)
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
func (plan *writePlan) applyEvent(r *Request, p *repository.Post) error {
	b := plan.b
	if p.Event == nil {
		p.Event = &repository.EventFields{ShowMap: true, ShowMapLink: true}
	}
	e := p.Event
	if v, ok := b.Get("timezone"); ok {
		e.Timezone, _ = input.AsString(v)
		e.Timezone = strings.TrimSpace(e.Timezone)
	}
	loc, _ := r.s.render.EventZone(e)
	now := r.s.now()
	for _, d := range []struct {
		name string
		dst  *string
	}{{"start_date", &e.StartLocal}, {"end_date", &e.EndLocal}} {
		if v, ok := b.Get(d.name); ok {
			s, _ := input.AsString(v)
			t, err := input.ParseDateInRange(s, loc, now, r.lang)
			if err != nil {
				return apierr.InvalidValue(d.name, input.DateProblem(s, loc, r.s.now(), r.lang), v)
			}
			*d.dst = t.In(loc).Format(datetext.Layout)
			if w, ok := datetext.Wall(strings.TrimSpace(s)); ok && wallclock.InGap(w, loc) {
				// Kept as written: a series repeats this wall time; the
				// instant (StartUTC) is after the gap (wallclock.Resolve).
				*d.dst = w.Format(datetext.Layout)
			}
		}
	}
	if v, ok := b.Get("all_day"); ok {
		e.AllDay, _ = input.AsBool(v)
	}
	if e.AllDay {
		if len(e.StartLocal) >= 10 {
			e.StartLocal = e.StartLocal[:10] + " 00:00:00"
		}
		if len(e.EndLocal) >= 10 {
			e.EndLocal = e.EndLocal[:10] + " 23:59:59"
		}
	}
	start, err1 := wallclock.Parse(datetext.Layout, e.StartLocal, loc)
	end, err2 := wallclock.Parse(datetext.Layout, e.EndLocal, loc)
	if err1 != nil || err2 != nil {
		return apierr.InvalidParam("start_date", "The event has no valid start and end: send start_date and end_date, each as "+input.DateForms+".")
	}
	if end.Before(start) {
		return apierr.InvalidParam("end_date", fmt.Sprintf("The end date must not be before the start date: end_date is %s, start_date %s (%s).", e.EndLocal, e.StartLocal, loc))
	}
	e.StartUTC, e.EndUTC = start.UTC(), end.UTC()
	for name, dst := range map[string]*bool{"show_map": &e.ShowMap, "show_map_link": &e.ShowMapLink,
		"hide_from_listings": &e.HideFromListings, "sticky": &e.Sticky, "featured": &e.Featured, "ticketed": &e.Ticketed} {
		if v, ok := b.Get(name); ok {
			*dst, _ = input.AsBool(v)
		}
	}
	if v, ok := b.Get("cost"); ok {
		e.Cost = costValues(v)
	}
	if v, ok := b.Get("website"); ok {
		s, _ := input.AsString(v)
		s = strings.TrimSpace(s)
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
	if err := plan.applyRecurrence(r, p); err != nil {
		return err
	}
	return plan.pt.boundDocuments(r, p)
}

// costValues stores a cost as written: one string, or a list.
func costValues(v any) []string {
	switch x := v.(type) {
	case []any:
		out := []string{}
		for _, e := range x {
			if s, ok := input.AsString(e); ok && strings.TrimSpace(s) != "" {
				out = append(out, strings.TrimSpace(s))
			}
		}
		return out
	case json.Number:
		return []string{x.String()}
	}
	s, _ := input.AsString(v)
	if strings.TrimSpace(s) == "" {
		return nil
	}
	return []string{strings.TrimSpace(s)}
}
