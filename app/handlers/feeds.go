package handlers

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/calendar/eventcal/app/ical"
	"github.com/calendar/eventcal/app/input"
	"github.com/calendar/eventcal/app/present"
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
func (pt *events) feedArgs() []Arg {
	args := pt.eventListArgs()
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
func feedPage(c *fiber.Ctx, b *input.Bag) (page, perPage int) {
	p, _ := input.AsInt(b.Values["page"])
	pp := int64(defaultFeedEvents)
	if c.Query("per_page") != "" {
		pp, _ = input.AsInt(b.Values["per_page"])
	}
	return int(p), int(min(max(pp, 1), maxFeedEvents))
}

// listEventFeed serves GET /events.ics (and GET /events for Accept:
// text/calendar).
func (pt *events) listEventFeed(r *Request) error {
	page, perPage := feedPage(r.c, r.bag)
	var events []ical.Event
	var seriesErr error
	seen := map[int64]bool{}
	_, res, err := pt.eventPage(newLister(r), page, perPage, func(p *repository.Record, o *present.Event) {
		if p.Event != nil && p.Event.Recurrence != nil {
			// A series once per page, with its rules and changed
			// occurrences, however many of its occurrences the page has.
			if !seen[p.ID] && seriesErr == nil {
				seen[p.ID] = true
				evs, err := pt.icalSeries(r, p)
				events, seriesErr = append(events, evs...), err
			}
			return
		}
		events = append(events, pt.render.ICalEvent(p, o))
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
	return pt.sendCalendar(r, events)
}

// getEventFeed serves GET /events/{id}.ics with the rules of a single read
// (checkReadable, then the caller's linked records, as sendPost does).
func (pt *events) getEventFeed(r *Request) error {
	p, err := pt.load(r, byID)
	if err != nil {
		return err
	}
	if err := pt.checkReadable(r, p); err != nil {
		return err
	}
	if p.Event != nil && p.Event.Recurrence != nil {
		evs, err := pt.icalSeries(r, p)
		if err != nil {
			return err
		}
		return pt.sendCalendar(r, evs)
	}
	l, err := newLister(r).linked([]*repository.Record{p})
	if err != nil {
		return err
	}
	o := pt.render.Event(p, l, present.View{Lang: r.lang})
	return pt.sendCalendar(r, []ical.Event{pt.render.ICalEvent(p, o)})
}

// sendCalendar writes a calendar response.
func (pt *events) sendCalendar(r *Request, events []ical.Event) error {
	var buf bytes.Buffer
	if err := pt.render.WriteCalendar(&buf, events); err != nil {
		return err
	}
	r.c.Set(fiber.HeaderContentType, ical.ContentType)
	return r.c.Status(200).Send(buf.Bytes())
}
