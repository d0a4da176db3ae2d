package app

import (
	"bytes"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/calendar/eventcal/app/ical"
	"github.com/calendar/eventcal/repository"
)

// iCalendar feeds (GET /events.ics, GET /events/{id}.ics, and GET /events
// with Accept: text/calendar) list exactly what the same JSON request
// lists: the same query, visibility rules, redaction and language. Each
// VEVENT is built from the rendered event object, whose linked venues and
// organizers come from r.loadLinked (the one visibility rule of
// linkrules.go), so a field or linked record the JSON leaves out or blanks
// for the caller is absent from the feed too: a feed never decides
// visibility itself. Escaping is app/ical's (contentline.go).
const (
	// defaultFeedEvents is a feed's page size when per_page is not given.
	defaultFeedEvents = 200
	// maxFeedEvents caps per_page on a feed.
	maxFeedEvents = 500
)

// feedArgs declares the parameters of GET /events.ics: those of GET
// /events with a larger page.
func (s *Server) feedArgs() []arg {
	args := s.eventListArgs()
	for i := range args {
		if args[i].Name == "per_page" {
			args[i].Default = strconv.Itoa(defaultFeedEvents)
			args[i].Desc = "Events per feed page; larger values are clamped to " + strconv.Itoa(maxFeedEvents) + "."
		}
	}
	return args
}

// wantsCalendar reports whether a GET /events request prefers an
// iCalendar body (Accept: text/calendar over JSON).
func wantsCalendar(c *fiber.Ctx) bool {
	a := c.Get(fiber.HeaderAccept)
	return strings.Contains(a, "text/calendar") && c.Accepts(fiber.MIMEApplicationJSON, "text/calendar") == "text/calendar"
}

// feedPage reads page and per_page for a feed: per_page defaults to
// defaultFeedEvents (whatever the route's JSON default) and is clamped to
// maxFeedEvents.
func (r *request) feedPage() (page, perPage int) {
	p, _ := asInt(r.bag.values["page"])
	pp := int64(defaultFeedEvents)
	if r.c.Query("per_page") != "" {
		pp, _ = asInt(r.bag.values["per_page"])
	}
	return int(p), int(min(max(pp, 1), maxFeedEvents))
}

// listEventFeed serves GET /events.ics (and GET /events for Accept:
// text/calendar).
func (s *Server) listEventFeed(r *request) error {
	page, perPage := r.feedPage()
	var events []ical.Event
	var seriesErr error
	seen := map[int64]bool{}
	_, res, err := s.eventPage(r, page, perPage, func(p *repository.Post, o *obj) {
		if p.Event != nil && p.Event.Recurrence != nil {
			// A series once per page, with its rules and changed
			// occurrences, however many of its occurrences the page has.
			if !seen[p.ID] && seriesErr == nil {
				seen[p.ID] = true
				evs, err := s.icalSeries(r, p)
				events, seriesErr = append(events, evs...), err
			}
			return
		}
		events = append(events, s.icalEvent(p, o))
	})
	if err == nil {
		err = seriesErr
	}
	if err != nil {
		return err
	}
	pages := (res.Total + perPage - 1) / perPage
	r.c.Set("X-WP-Total", strconv.Itoa(res.Total))
	r.c.Set("X-WP-TotalPages", strconv.Itoa(pages))
	r.c.Set("X-TEC-Total", strconv.Itoa(res.Total))
	r.c.Set("X-TEC-TotalPages", strconv.Itoa(pages))
	return s.sendCalendar(r, events)
}

// getEventFeed serves GET /events/{id}.ics with the rules of a single read
// (checkReadable, then the caller's linked records, as sendPost does).
func (s *Server) getEventFeed(r *request) error {
	ev, _, _ := s.postTypes()
	p, err := r.loadPost(ev, byID)
	if err != nil {
		return err
	}
	if err := r.checkReadable(ev, p); err != nil {
		return err
	}
	if p.Event != nil && p.Event.Recurrence != nil {
		evs, err := s.icalSeries(r, p)
		if err != nil {
			return err
		}
		return s.sendCalendar(r, evs)
	}
	l, err := r.loadLinked([]*repository.Post{p})
	if err != nil {
		return err
	}
	o := s.renderEvent(p, l, view{lang: r.lang})
	return s.sendCalendar(r, []ical.Event{s.icalEvent(p, o)})
}

// sendCalendar writes a calendar response.
func (s *Server) sendCalendar(r *request, events []ical.Event) error {
	var buf bytes.Buffer
	cal := ical.Calendar{ProdID: "-//eventcal//Event Calendar API//EN", Name: s.siteHost, Events: events}
	if err := ical.Write(&buf, cal); err != nil {
		return err
	}
	r.c.Set(fiber.HeaderContentType, ical.ContentType)
	return r.c.Status(200).Send(buf.Bytes())
}

// icalEvent builds a VEVENT from a post and the object rendered from it
// for this caller (which holds the caller's language and redactions).
func (s *Server) icalEvent(p *repository.Post, o *obj) ical.Event {
	e := p.Event
	if e == nil {
		e = &repository.EventFields{}
	}
	loc, zone := s.eventZone(e)
	out := ical.Event{
		UID:         "event-" + strconv.FormatInt(p.ID, 10) + "@" + s.siteHost,
		Modified:    p.Modified.UTC().Truncate(time.Second),
		Start:       e.StartUTC,
		End:         e.EndUTC,
		Zone:        loc,
		ZoneName:    zone,
		AllDay:      e.AllDay,
		Summary:     ical.PlainText(objString(o, "title")),
		Description: ical.PlainText(objString(o, "description")),
		URL:         objString(o, "url"),
		Status:      icalStatus(p.Status),
	}
	if cats, ok := o.at("categories").([]any); ok {
		for _, c := range cats {
			if co, ok := c.(*obj); ok {
				out.Categories = append(out.Categories, ical.PlainText(objString(co, "name")))
			}
		}
	}
	if v := firstObj(o.at("venue")); v != nil {
		var parts []string
		for _, k := range []string{"venue", "address", "city", "stateprovince", "zip", "country"} {
			if x := strings.TrimSpace(ical.PlainText(objString(v, k))); x != "" {
				parts = append(parts, x)
			}
		}
		out.Location = strings.Join(parts, ", ")
		lat, okLat := v.at("geo_lat").(float64)
		lng, okLng := v.at("geo_lng").(float64)
		if okLat && okLng {
			out.Geo = &ical.Point{Lat: lat, Lng: lng}
		}
	}
	if orgs, ok := o.at("organizer").([]any); ok {
		for _, x := range orgs {
			if org, ok := x.(*obj); ok {
				if email := objString(org, "email"); email != "" {
					out.Organizer = &ical.Organizer{Name: ical.PlainText(objString(org, "organizer")), Email: email}
					break
				}
			}
		}
	}
	return out
}

// icalStatus maps a post status to a VEVENT STATUS: published and private
// events are confirmed, trashed ones cancelled, the rest tentative.
func icalStatus(status string) ical.Status {
	switch status {
	case repository.StatusPublish, repository.StatusPrivate:
		return ical.StatusConfirmed
	case repository.StatusTrash:
		return ical.StatusCancelled
	default:
		return ical.StatusTentative
	}
}

// objString reads a string field of a rendered object.
func objString(o *obj, k string) string {
	s, _ := o.at(k).(string)
	return s
}

// firstObj returns a rendered venue: the object itself, or the first of a
// list of them.
func firstObj(v any) *obj {
	switch x := v.(type) {
	case *obj:
		return x
	case []any:
		for _, it := range x {
			if o, ok := it.(*obj); ok {
				return o
			}
		}
	}
	return nil
}
