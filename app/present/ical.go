package present

import (
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/calendar/eventcal/app/ical"
	"github.com/calendar/eventcal/repository"
)

// WriteCalendar writes events as an iCalendar (RFC 5545) object named
// after the site.
func (rn *Renderer) WriteCalendar(w io.Writer, events []ical.Event) error {
	return ical.Write(w, ical.Calendar{ProdID: "-//eventcal//Event Calendar API//EN", Name: rn.siteHost, Events: events})
}

// ICalEvent builds a VEVENT from a post and the object rendered from it
// for this caller (which holds the caller's language and redactions).
func (rn *Renderer) ICalEvent(p *repository.Post, o *Obj) ical.Event {
	e := p.Event
	if e == nil {
		e = &repository.EventFields{}
	}
	loc, zone := rn.EventZone(e)
	out := ical.Event{
		UID:         "event-" + strconv.FormatInt(p.ID, 10) + "@" + rn.siteHost,
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
	if cats, ok := o.At("categories").([]any); ok {
		for _, c := range cats {
			if co, ok := c.(*Obj); ok {
				out.Categories = append(out.Categories, ical.PlainText(objString(co, "name")))
			}
		}
	}
	if v := firstObj(o.At("venue")); v != nil {
		var parts []string
		for _, k := range []string{"venue", "address", "city", "stateprovince", "zip", "country"} {
			if x := strings.TrimSpace(ical.PlainText(objString(v, k))); x != "" {
				parts = append(parts, x)
			}
		}
		out.Location = strings.Join(parts, ", ")
		lat, okLat := v.At("geo_lat").(float64)
		lng, okLng := v.At("geo_lng").(float64)
		if okLat && okLng {
			out.Geo = &ical.Point{Lat: lat, Lng: lng}
		}
	}
	if orgs, ok := o.At("organizer").([]any); ok {
		for _, x := range orgs {
			if org, ok := x.(*Obj); ok {
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
func objString(o *Obj, k string) string {
	s, _ := o.At(k).(string)
	return s
}

// firstObj returns a rendered venue: the object itself, or the first of a
// list of them.
func firstObj(v any) *Obj {
	switch x := v.(type) {
	case *Obj:
		return x
	case []any:
		for _, it := range x {
			if o, ok := it.(*Obj); ok {
				return o
			}
		}
	}
	return nil
}
