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

// ICalEvent builds a VEVENT from a post and the event rendered from it
// for this caller (which holds the caller's language and redactions).
func (rn *Renderer) ICalEvent(p *repository.Record, o *Event) ical.Event {
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
		Summary:     ical.PlainText(o.Title),
		Description: ical.PlainText(o.Description),
		URL:         o.URL,
		Status:      icalStatus(p.Status, e.Status()),
	}
	for _, c := range o.Categories {
		out.Categories = append(out.Categories, ical.PlainText(c.Name))
	}
	if len(o.Venue) > 0 {
		v := o.Venue[0]
		var parts []string
		// The fields as the written venue holds them ("0" dropped).
		for _, s := range []string{v.Name, v.Address, v.City, v.StateProvince, v.Zip, v.Country} {
			if x := strings.TrimSpace(ical.PlainText(keptValue(s))); x != "" {
				parts = append(parts, x)
			}
		}
		out.Location = strings.Join(parts, ", ")
		if v.GeoLat != nil && v.GeoLng != nil {
			out.Geo = &ical.Point{Lat: *v.GeoLat, Lng: *v.GeoLng}
		}
	}
	for _, org := range o.Organizer {
		if email := keptValue(org.Email); email != "" {
			out.Organizer = &ical.Organizer{Name: ical.PlainText(keptValue(org.Name)), Email: email}
			break
		}
	}
	return out
}

// icalStatus maps a post status and an event status to a VEVENT STATUS
// (RFC 5545 3.8.1.11 knows TENTATIVE, CONFIRMED and CANCELLED only):
// cancelled events and trashed ones are CANCELLED; postponed events, whose
// date is no longer certain, TENTATIVE; otherwise published and private
// events (moved online ones included: they take place) are CONFIRMED, the
// rest TENTATIVE.
func icalStatus(status, eventStatus string) ical.Status {
	switch eventStatus {
	case repository.EventCanceled:
		return ical.StatusCancelled
	case repository.EventPostponed:
		if status != repository.StatusTrash {
			return ical.StatusTentative
		}
	}
	switch status {
	case repository.StatusPublish, repository.StatusPrivate:
		return ical.StatusConfirmed
	case repository.StatusTrash:
		return ical.StatusCancelled
	default:
		return ical.StatusTentative
	}
}
