package present

import (
	"bytes"
	"time"

	"github.com/calendar/eventcal/app/datetext"
	"github.com/calendar/eventcal/repository"
)

// EventLD is the schema.org Event of a rendered event (json_ld).
type EventLD struct {
	Name        string
	Description string
	Image       *string // the image's url; omitted when nil
	URL         string
	// AttendanceMode is eventAttendanceMode: the original says
	// OfflineEventAttendanceMode of every event; omitted when empty.
	AttendanceMode string
	StartDate      string
	EndDate        string
	EventStatus    string // omitted when empty
	Location       *PlaceLD
	Organizer      []*PersonLD // omitted when nil
	Offers         *Offer
	// Performer is what the original writes as performer: the word
	// "Organization" of every event; only The Events Calendar's root has
	// it (omitted when empty).
	Performer string

	// PreviousStartDate is the start a moved occurrence had (omitted when
	// empty).
	PreviousStartDate string
}

func (ld *EventLD) writeJSON(buf *bytes.Buffer) error {
	w := openObj(buf)
	w.raw("@context", `"http://schema.org"`)
	w.raw("@type", `"Event"`)
	w.str("name", ld.Name)
	w.str("description", ld.Description)
	if ld.Image != nil {
		w.str("image", *ld.Image)
	}
	w.str("url", ld.URL)
	w.strSet("eventAttendanceMode", ld.AttendanceMode)
	w.str("startDate", ld.StartDate)
	w.str("endDate", ld.EndDate)
	w.strSet("eventStatus", ld.EventStatus)
	w.strSet("previousStartDate", ld.PreviousStartDate)
	if ld.Location != nil {
		w.typed("location", ld.Location)
	}
	if ld.Organizer != nil {
		w.typed("organizer", listOf[*PersonLD](ld.Organizer))
	}
	if ld.Offers != nil {
		w.typed("offers", ld.Offers)
	}
	w.strSet("performer", ld.Performer)
	return w.close()
}

// MarshalJSON writes the schema.org Event.
func (ld *EventLD) MarshalJSON() ([]byte, error) { return marshal(ld) }

// Offer is the schema.org Offer of an event with a cost.
type Offer struct {
	Price         string
	PriceCurrency string // omitted when empty
	URL           string
}

func (o *Offer) writeJSON(buf *bytes.Buffer) error {
	w := openObj(buf)
	w.raw("@type", `"Offer"`)
	w.str("price", o.Price)
	w.strSet("priceCurrency", o.PriceCurrency)
	w.str("url", o.URL)
	return w.close()
}

// eventJSONLD is the schema.org Event of a rendered event (its linked
// fields filled in).
func (rn *Renderer) eventJSONLD(e *Event) *EventLD {
	ld := &EventLD{Name: e.Title, Description: e.Description, URL: e.URL,
		AttendanceMode: "https://schema.org/OfflineEventAttendanceMode",
		StartDate:      isoDate(e.UTCStartDate), EndDate: isoDate(e.UTCEndDate)}
	if rn.TECShaped() {
		ld.Performer = "Organization"
	}
	if e.Image != nil {
		u := e.Image.URL
		ld.Image = &u
	}
	switch e.EventStatus {
	case repository.EventCanceled, repository.EventPostponed, repository.EventMovedOnline:
		ld.EventStatus = schemaEventStatus[e.EventStatus]
	default:
		if e.Status == repository.StatusPublish {
			ld.EventStatus = schemaEventStatus[repository.EventScheduled]
		}
	}
	if len(e.Venue) > 0 {
		ld.Location = placeJSONLD(e.Venue[0], keptValue)
	}
	if len(e.Organizer) > 0 {
		for _, o := range e.Organizer {
			ld.Organizer = append(ld.Organizer, personJSONLD(o, keptValue))
		}
	}
	if vals := e.CostDetails.Values; len(vals) > 0 {
		cur := e.CostDetails.CurrencyCode
		if cur == "" {
			cur = e.CostDetails.CurrencySymbol
		}
		ld.Offers = &Offer{Price: vals[0], PriceCurrency: cur, URL: e.URL}
	}
	return ld
}

// schemaEventStatus maps an event status to its schema.org EventStatusType.
var schemaEventStatus = map[string]string{
	repository.EventScheduled:   "https://schema.org/EventScheduled",
	repository.EventCanceled:    "https://schema.org/EventCancelled",
	repository.EventPostponed:   "https://schema.org/EventPostponed",
	repository.EventMovedOnline: "https://schema.org/EventMovedOnline",
}

// schemaRescheduled is the schema.org status of a moved occurrence.
const schemaRescheduled = "https://schema.org/EventRescheduled"

// isoDate turns a rendered UTC date into ISO 8601.
func isoDate(s string) string {
	t, err := time.Parse(datetext.Layout, s)
	if err != nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// PlaceLD is the schema.org Place of a venue.
type PlaceLD struct {
	Name        string
	Description string
	URL         string
	Address     PostalAddress
	Telephone   string // omitted when empty
	Geo         *GeoLD
}

func (ld *PlaceLD) writeJSON(buf *bytes.Buffer) error {
	w := openObj(buf)
	w.raw("@context", `"http://schema.org"`)
	w.raw("@type", `"Place"`)
	w.str("name", ld.Name)
	w.str("description", ld.Description)
	w.str("url", ld.URL)
	w.typed("address", &ld.Address)
	w.strSet("telephone", ld.Telephone)
	if ld.Geo != nil {
		w.typed("geo", ld.Geo)
	}
	return w.close()
}

// MarshalJSON writes the schema.org Place.
func (ld *PlaceLD) MarshalJSON() ([]byte, error) { return marshal(ld) }

// PostalAddress is the schema.org PostalAddress of a venue (empty parts
// omitted).
type PostalAddress struct {
	StreetAddress, AddressLocality, AddressRegion, PostalCode, AddressCountry string
}

func (a *PostalAddress) writeJSON(buf *bytes.Buffer) error {
	w := openObj(buf)
	w.raw("@type", `"PostalAddress"`)
	w.strSet("streetAddress", a.StreetAddress)
	w.strSet("addressLocality", a.AddressLocality)
	w.strSet("addressRegion", a.AddressRegion)
	w.strSet("postalCode", a.PostalCode)
	w.strSet("addressCountry", a.AddressCountry)
	return w.close()
}

// GeoLD is the schema.org GeoCoordinates of a venue.
type GeoLD struct{ Latitude, Longitude float64 }

func (g *GeoLD) writeJSON(buf *bytes.Buffer) error {
	w := openObj(buf)
	w.raw("@type", `"GeoCoordinates"`)
	w.float("latitude", g.Latitude)
	w.float("longitude", g.Longitude)
	return w.close()
}

// keptValue is a venue's or organizer's field as its written object
// holds it: "" for "0", which the object drops (strKept).
func keptValue(s string) string {
	if s == "0" {
		return ""
	}
	return s
}

// asIs is a field as the renderer holds it.
func asIs(s string) string { return s }

// placeJSONLD is the schema.org Place of a rendered venue; field maps its
// text fields (asIs for the venue's own json_ld, keptValue for an
// event's, which reads the written venue).
func placeJSONLD(v *Venue, field func(string) string) *PlaceLD {
	ld := &PlaceLD{Name: field(v.Name), Description: field(v.Description), URL: field(v.URL), Telephone: field(v.Phone),
		Address: PostalAddress{StreetAddress: field(v.Address), AddressLocality: field(v.City), AddressRegion: field(v.StateProvince),
			PostalCode: field(v.Zip), AddressCountry: field(v.Country)}}
	if v.GeoLat != nil && v.GeoLng != nil {
		ld.Geo = &GeoLD{Latitude: *v.GeoLat, Longitude: *v.GeoLng}
	}
	return ld
}

// PersonLD is the schema.org Person of an organizer (empty fields
// omitted).
type PersonLD struct {
	Name, Description, URL, Telephone, Email, SameAs string
}

func (ld *PersonLD) writeJSON(buf *bytes.Buffer) error {
	w := openObj(buf)
	w.raw("@context", `"http://schema.org"`)
	w.raw("@type", `"Person"`)
	w.strSet("name", ld.Name)
	w.strSet("description", ld.Description)
	w.strSet("url", ld.URL)
	w.strSet("telephone", ld.Telephone)
	w.strSet("email", ld.Email)
	w.strSet("sameAs", ld.SameAs)
	return w.close()
}

// MarshalJSON writes the schema.org Person.
func (ld *PersonLD) MarshalJSON() ([]byte, error) { return marshal(ld) }

// personJSONLD is the schema.org Person of a rendered organizer (field:
// as placeJSONLD).
func personJSONLD(o *Organizer, field func(string) string) *PersonLD {
	return &PersonLD{Name: field(o.Name), Description: field(o.Description), URL: field(o.URL), Telephone: field(o.Phone),
		Email: field(o.Email), SameAs: field(o.Website)}
}
