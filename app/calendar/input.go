package calendar

import (
	"github.com/calendar/eventcal/app/datetext"
	"github.com/calendar/eventcal/repository"
)

// RecordInput holds the fields every kind takes. Text values are as the
// caller decoded them (the service trims where the field is trimmed);
// dates were read once by the caller (datetext.Read, through
// values.ReadDate) and are taken as instants in the record's zone once it
// is known (values.DateIn), never parsed again.
type RecordInput struct {
	// Name is the event title, venue name or organizer name.
	Name        Opt[string]
	Description Opt[string]
	Excerpt     Opt[string]
	// Slug is set only when the client sent one (a path parameter of the
	// same name does not count).
	Slug    Opt[string]
	Status  Opt[string]
	Date    Opt[datetext.Value]
	DateUTC Opt[datetext.Value]
	Author  Opt[int64]
	// Image is the featured image: an ID, a URL to register, or neither
	// (removes it).
	Image Opt[ImageRef]
}

// ImageRef names a featured image: a registered image's ID or an image
// URL; both zero removes the image.
type ImageRef struct {
	ID  int64
	URL string
}

// EventInput is a create or (partial) update of an event.
type EventInput struct {
	RecordInput
	Timezone                 Opt[string]
	StartDate, EndDate       Opt[datetext.Value]
	AllDay                   Opt[bool]
	ShowMap, ShowMapLink     Opt[bool]
	HideFromListings, Sticky Opt[bool]
	Featured, Ticketed       Opt[bool]
	Cost                     Opt[[]string]
	// CurrencySymbol, CurrencyCode and CurrencyPosition are the event's
	// own currency, checked by the caller (package config/currency;
	// "" clears one).
	CurrencySymbol, CurrencyCode, CurrencyPosition Opt[string]
	Website                                        Opt[string]
	Password                                       Opt[string]
	Venues, Organizers                             Links
	Categories, Tags                               Opt[[]LabelItem]
	Recurrence                                     Opt[*repository.Recurrence]

	// EventStatus is one of repository.EventStatuses ("" is scheduled);
	// EventStatusReason is plain text (CheckEventStatus bounds both).
	EventStatus, EventStatusReason Opt[string]

	// Source links the event to the calendar source it was imported
	// from (a nil value removes the link). Only the system (a nil actor or
	// Operator) sets it: the source runner, package app/sources.
	Source Opt[*repository.SourceLink]
	// ClearOverrides drops every changed occurrence of the series before
	// the write (the source runner rewrites a series' changes from its
	// feed, one UpdateOccurrence each). System only, as Source.
	ClearOverrides bool
}

// VenueInput is a create or (partial) update of a venue, or inline venue
// data in an event write.
type VenueInput struct {
	RecordInput
	Address, City, Country, Province, State, Zip, Phone, Website Opt[string]
	StateProvince                                                Opt[string]
	ShowMap, ShowMapLink                                         Opt[bool]
	GeoLat, GeoLng                                               Opt[*float64]
}

// OrganizerInput is a create or (partial) update of an organizer, or
// inline organizer data in an event write.
type OrganizerInput struct {
	RecordInput
	Phone, Email, Website Opt[string]
}

// Links is the venue or organizer value of an event write.
type Links struct {
	Set bool
	// Raw is the value as received.
	Raw   any
	Items []Link
	// Problem is what is wrong with the value's form, found while
	// decoding it ("" when nothing): the write refuses it with the
	// other look-up problems.
	Problem string
}

// Link is one item of a Links: an existing record's ID, or inline data
// (Venue or Organizer) to create or reuse a record from.
type Link struct {
	ID        int64
	Venue     *VenueInput
	Organizer *OrganizerInput
}

// LabelItem is one item of a categories or tags value: an ID (IsID) or a
// slug or name to look up, created when found nowhere.
type LabelItem struct {
	ID   int64
	IsID bool
	Name string
}

// OccurrenceInput is a change of one occurrence of a series.
type OccurrenceInput struct {
	Title, Description, Excerpt Opt[string]
	StartDate, EndDate          Opt[datetext.Value]
	Status                      Opt[string]
	Venues, Organizers          Links
	Cost                        Opt[[]string]
	Website                     Opt[string]
	Featured                    Opt[bool]

	// EventStatus and EventStatusReason give the occurrence its own event
	// status (EventInput's); "canceled" keeps it listed as cancelled.
	EventStatus, EventStatusReason Opt[string]
}
