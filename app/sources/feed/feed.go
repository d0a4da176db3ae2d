// Package feed holds what a calendar source's reader hands the source
// runner: the events of one fetched feed, decoded and checked, in one
// shape whatever the source's format (an iCalendar feed, package
// app/sources/ics; a site running The Events Calendar, package
// app/sources/tec). It has no behaviour besides Digest: the readers fill
// it, the runner (package app/sources) maps it into the calendar.
package feed

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"
)

// Calendar is one feed as read.
type Calendar struct {
	// Name is the feed's own name (X-WR-CALNAME, NAME, a site's name);
	// "" when it has none.
	Name string
	// Events are the feed's events, one per identity (UID, plus
	// RecurrenceID for a lone instance), in feed order.
	Events []Event
	// Problems are the feed's events that could not be read (counted as
	// failed by the run); the rest of the feed still imports.
	Problems []Problem
}

// Problem is one event of a feed that could not be read.
type Problem struct {
	// UID is the event's UID when it had one.
	UID string
	// Problem says what is wrong, for the run's record ("DTSTART: ...").
	Problem string
}

// Event is one event of a feed: a single event or a series with its
// changed instances.
type Event struct {
	// UID identifies the event within its source (iCalendar UID; for a
	// TEC site, the event's ID there as a decimal string).
	UID string
	// RecurrenceID is set only for a lone changed instance whose series
	// the feed does not hold: its original start as written
	// ("20060102T150405" local, "20060102T150405Z" or "20060102").
	RecurrenceID string

	// Title, Description (plain text, unescaped) and URL (http or https,
	// "" for none) of the event.
	Title       string
	Description string
	URL         string

	// Zone is the IANA name of the event's time zone (Windows names and
	// custom VTIMEZONE blocks already resolved); "" for a floating time
	// or a date, which the runner reads in the site's zone. "UTC" for
	// times in UTC. A site running The Events Calendar may also give a
	// manual offset such as "UTC+2" (repository.LoadZone reads both).
	Zone string
	// AllDay marks dates without times (VALUE=DATE).
	AllDay bool
	// Start and End are the event's start and end: instants for timed
	// events (in Zone's location when Zone is set), and for all-day
	// events the first day and the day after the last (End exclusive, as
	// RFC 5545 writes it) at midnight UTC. End is never before Start; an
	// event without an end or duration ends when it starts (a date, the
	// day after).
	Start, End time.Time

	// Rules are RRULE values without the "RRULE:" prefix, as the feed
	// wrote them; Exclusions (EXDATE) and Additions (RDATE) are
	// instants (dates at midnight UTC for all-day events).
	Rules      []string
	Exclusions []time.Time
	Additions  []time.Time
	// Overrides are the series' changed instances (RECURRENCE-ID), in
	// feed order.
	Overrides []Override

	// Cancelled is STATUS:CANCELLED (for a single event: it left the
	// calendar).
	Cancelled bool
	// Tentative is STATUS:TENTATIVE.
	Tentative bool

	// Location is the event's place; nil when none.
	Location *Place
	// Organizer is the event's organizer; nil when none.
	Organizer *Person
	// Categories are the feed's category names (CATEGORIES), trimmed, in
	// feed order, without duplicates.
	Categories []string
	// Tags are the feed's tag names, as Categories (a site running The
	// Events Calendar names them; iCalendar has none). Left out of the
	// digest's input when empty, so feeds without tags digest as before.
	Tags []string `json:",omitempty"`
	// Cost is the event's cost as written ("" for none; iCalendar has
	// none).
	Cost string
	// Image is the event's image URL (http or https; "" for none).
	Image string

	// Modified is the feed's last modification of the event
	// (LAST-MODIFIED; zero when not given), for the record only: changes
	// are found by Digest, not by it.
	Modified time.Time
}

// Override is one changed instance of a series (a VEVENT with a
// RECURRENCE-ID and the series' UID).
type Override struct {
	// Of is the instance's original start (RECURRENCE-ID): an instant, or
	// for all-day series the date at midnight UTC.
	Of time.Time
	// Cancelled removes the instance (STATUS:CANCELLED).
	Cancelled bool
	// Start and End move the instance (zero: unchanged).
	Start, End time.Time
	// Title, Description and URL replace the series' (nil: unchanged).
	Title, Description, URL *string
	// Location replaces the series' place (nil: unchanged).
	Location *Place
}

// Place is an event's location.
type Place struct {
	// Name is the venue's name (the first line of LOCATION).
	Name string
	// Address is the rest of LOCATION, or the address a TEC site gave.
	Address, City, Region, PostalCode, Country string
	// Lat and Lng are GEO (nil when not given).
	Lat, Lng *float64
}

// Person is an event's organizer.
type Person struct {
	// Name is the organizer's name (CN), else the e-mail address.
	Name string
	// Email is the mailto: address ("" for none).
	Email   string
	Phone   string
	Website string
}

// Digest returns a hex digest of the event as read (overrides
// included): two reads of an unchanged feed give the same digest, and a
// change of any field changes it.
func (e *Event) Digest() string {
	b, err := json.Marshal(e)
	if err != nil { // only unsupported values, which Event has none of
		panic(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
