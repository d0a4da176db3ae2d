// Package tec reads a calendar source of format "tec": a partner's site
// running The Events Calendar (the WordPress plugin), read through its
// REST API as an anonymous visitor reads it, into a feed.Calendar for the
// source runner (package app/sources).
//
// It is the other side of package app/wpimport, which migrates a whole
// site keeping every record's ID (eventcal import): a source is a
// partner's calendar pulled into this one, so Read takes only what the
// partner publishes (its upcoming published events, every page of its
// events list, as its own calendar shows them) and hands each event over
// by value: the runner gives it an ID here and identifies it by (source,
// UID). Read uses wpimport's client (root discovery from a site's
// address, rate limit, retries with backoff, caps, redaction of the
// site's error text) and its mapping rules (wpimport.ReadPublic), then
// turns each mapped event into a feed.Event:
//
//   - UID: the event's ID at the partner site, as a decimal string. The
//     ID is what TEC itself keys an event by; it survives a change of
//     the event's title or slug, which changes its permalink, so a
//     renamed event stays the same event here (with its editor's
//     changes) instead of leaving the feed and coming back as a new one.
//     The permalink is kept as the event's URL when it has no website.
//   - Title plain text (entities decoded, markup removed as the API
//     removes it from a title); Description the description's HTML made
//     plain (ical.PlainText: paragraphs and list items become lines,
//     entities decoded).
//   - Dates: timed events are the UTC instants TEC gives, in the event's
//     own zone (Zone is the TEC time zone as written: an IANA name, "UTC",
//     or a manual offset such as "UTC+2", which repository.LoadZone
//     reads). At a manual offset TEC's UTC dates are off (10:00 at UTC+2
//     comes with 07:00 UTC), so there the local wall time at the offset
//     is the event's time. All-day events are dates (Zone ""), End the
//     day after the last day.
//   - Cost as the site shows it ("$5 – $15"); URL the event's website,
//     else its page at the site; Image the featured image's URL; Modified
//     the event's modification time.
//   - The first venue becomes Location (name, address, city, region,
//     postal code, country, and the coordinates Events Calendar Pro adds);
//     the first organizer Organizer (name, e-mail, phone, website); the
//     runner matches both by name. Categories and Tags are names.
//
// TEC's free plugin has no recurrence in its REST API (Events Calendar
// Pro's series are listed as their single occurrences), so a TEC event is
// always a single event: no Rules, Overrides or RecurrenceID. Its event
// status (cancelled, postponed) is not in the anonymous REST API either.
package tec

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/calendar/eventcal/app/ical"
	"github.com/calendar/eventcal/app/sources/feed"
	"github.com/calendar/eventcal/app/sources/fetch"
	"github.com/calendar/eventcal/app/wpimport"
	"github.com/calendar/eventcal/config/netguard"
	"github.com/calendar/eventcal/repository"
)

// Caps bound one read: of wpimport's caps, Pages (of the events list,
// 50 events a page), Requests (retries and discovery included), Bytes (of
// the whole read), Response (one response body) and Events apply. A zero
// field takes its default (DefaultMax*).
type Caps = wpimport.Caps

// Default caps: a partner's 10,000 upcoming events read within all of
// them.
const (
	// DefaultMaxEvents is Caps.Events's default.
	DefaultMaxEvents = 10_000
	// DefaultMaxPages is Caps.Pages's default (DefaultMaxEvents at 50 a
	// page, and one more).
	DefaultMaxPages = DefaultMaxEvents/50 + 1
	// DefaultMaxRequests is Caps.Requests's default.
	DefaultMaxRequests = 1_000
	// DefaultMaxBytes is Caps.Bytes's default (256 MiB).
	DefaultMaxBytes = 256 << 20
	// DefaultMaxResponse is Caps.Response's default (20 MiB: a page of 50
	// events with long descriptions is well below 1 MiB).
	DefaultMaxResponse = 20 << 20
)

// DefaultRetries is Options.Retries's default: fewer than eventcal
// import's, since a source runs again on its schedule (a failing site
// fails a run after about 3 s of backoff, or the Retry-After it asks
// for, at most 5 minutes a retry).
const DefaultRetries = 2

// defaultCaps are Caps's defaults.
var defaultCaps = Caps{Pages: DefaultMaxPages, Requests: DefaultMaxRequests, Bytes: DefaultMaxBytes,
	Response: DefaultMaxResponse, Events: DefaultMaxEvents}

// Options configure Read.
type Options struct {
	// Client sends the requests: the fetcher's guarded client (its
	// address rules, redirects and time limit). nil: a plain client,
	// for tests and tools only.
	Client *http.Client
	// Language is the language code the text is read in ("" is "en").
	Language string
	// Caps bound the read.
	Caps Caps
	// Logger receives retries and the records left out (nil: discarded).
	Logger *slog.Logger
	// Rate is the request rate, requests a second (0: wpimport's
	// default, 10; negative: no limit); Retries how often a request
	// failing with a timeout, 429 or 5xx is retried (0: DefaultRetries;
	// negative: never); RetryBase the first backoff wait, doubled per
	// retry (0: 1 s).
	Rate      float64
	Retries   int
	RetryBase time.Duration
}

// Error is a read that failed: nothing of the source may be used. Reason
// is one of "url" (rawURL is not an http(s) URL without credentials or
// query), "not_a_calendar", "status", "too_large", "too_many_events",
// "timeout", "network", or the fetcher's "blocked" and "redirect" (its
// client's refusals, in its words); the text (Error) is the run's error, and starts
// with what happened ("not a calendar: ...", "too large: ...").
type Error struct {
	Reason string
	// Message is the run's error text.
	Message string
	// Err is the cause.
	Err error
}

func (e *Error) Error() string { return e.Message }
func (e *Error) Unwrap() error { return e.Err }

// Read reads the upcoming published events of the site running The
// Events Calendar at rawURL (the site's address, its REST root, the
// tribe/events/v1 namespace root or a route under it) into a feed.Calendar. An event the
// import's rules refuse (a date that is not one, a time zone this service
// does not know, an image or website it would not store) goes to
// Calendar.Problems; a venue, organizer or term they refuse is left out
// of the event that names it (logged). Any other failure is an *Error and
// nothing of the source is returned.
func Read(ctx context.Context, rawURL string, o Options) (*feed.Calendar, error) {
	lang := o.Language
	if lang == "" {
		lang = "en"
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	retries := o.Retries
	if retries == 0 {
		retries = DefaultRetries
	}
	snap, err := wpimport.ReadPublic(ctx, wpimport.PublicOptions{
		Source: rawURL, Language: lang, HTTPClient: o.Client, Logger: logger,
		Rate: o.Rate, Retries: retries, RetryBase: o.RetryBase, Permanent: permanent,
		Caps: o.Caps.Or(defaultCaps),
	})
	if err != nil {
		return nil, readError(ctx, err)
	}
	cal := &feed.Calendar{}
	for _, f := range snap.Failed {
		if f.Kind == wpimport.KindEvent {
			cal.Problems = append(cal.Problems, feed.Problem{UID: uid(f.ID), Problem: problemText(f)})
			continue
		}
		logger.Warn("a record of the source was left out of the events that name it", "source", snap.Root, "record", f.String())
	}
	for _, ev := range snap.Events {
		e, err := event(snap, ev, lang)
		if err != nil {
			cal.Problems = append(cal.Problems, feed.Problem{UID: uid(ev.Record.ID), Problem: err.Error()})
			continue
		}
		cal.Events = append(cal.Events, e)
	}
	return cal, nil
}

// ContentHash is a digest of a calendar Read returned, for the runner's
// ReadResult.ContentHash (a TEC source has no one body to hash): the
// digests of its events and its problems, in order. Two reads of an
// unchanged site give the same hash; any change of an event changes it.
func ContentHash(cal *feed.Calendar) string {
	h := sha256.New()
	for i := range cal.Events {
		fmt.Fprintf(h, "e %s\n", cal.Events[i].Digest())
	}
	for _, p := range cal.Problems {
		fmt.Fprintf(h, "p %q %q\n", p.UID, p.Problem)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// uid is the feed UID of a source ID ("" for none).
func uid(id int64) string {
	if id <= 0 {
		return ""
	}
	return strconv.FormatInt(id, 10)
}

// problemText is a failed event's problem, for the run's record.
func problemText(f wpimport.Failure) string {
	if f.Field == "" {
		return f.Reason
	}
	return f.Field + ": " + f.Reason
}

// permanent reports an error of the fetcher's client that a retry
// cannot mend: an address its rules refuse (its dialer's
// *netguard.BlockedError), a redirect it does not follow, a body past its
// bound.
func permanent(err error) bool {
	var be *netguard.BlockedError
	if errors.As(err, &be) {
		return true
	}
	var fe *fetch.Error
	if !errors.As(err, &fe) {
		return false
	}
	switch fe.Reason {
	case fetch.ReasonBlocked, fetch.ReasonRedirect, fetch.ReasonTooLarge:
		return true
	}
	return false
}

// readError turns ReadPublic's error into an *Error.
func readError(ctx context.Context, err error) *Error {
	var capErr *wpimport.CapError
	var status *wpimport.StatusError
	var fe *fetch.Error
	var be *netguard.BlockedError
	switch {
	case errors.As(err, &be):
		where := "the site's address " + be.Addr.String() + " is refused"
		if be.Host != "" && be.Host != be.Addr.String() {
			where = "the site's host " + be.Host + " resolves to " + be.Addr.String() + ", which is refused"
		}
		return &Error{Reason: fetch.ReasonBlocked, Message: fmt.Sprintf("%s: %v", where, be.Err), Err: err}
	case errors.As(err, &fe) && fe.Reason != fetch.ReasonNetwork && fe.Reason != fetch.ReasonTruncated:
		// The fetcher's words (blocked, redirect, too_large, timeout).
		return &Error{Reason: fe.Reason, Message: fe.Message, Err: err}
	case errors.As(err, &capErr):
		switch capErr.Cap {
		case wpimport.CapEvents:
			return &Error{Reason: "too_many_events", Message: fmt.Sprintf("too many events: the site lists more than %d", capErr.Limit), Err: err}
		case wpimport.CapPages:
			return &Error{Reason: "too_large", Message: fmt.Sprintf("too large: the site's events list has more than %d pages", capErr.Limit), Err: err}
		case wpimport.CapRequests:
			return &Error{Reason: "too_large", Message: fmt.Sprintf("too large: reading the site took more than %d requests", capErr.Limit), Err: err}
		default:
			return &Error{Reason: "too_large", Message: fmt.Sprintf("too large: the site sent more than %d bytes", capErr.Limit), Err: err}
		}
	case errors.Is(err, wpimport.ErrSourceURL):
		return &Error{Reason: "url", Message: err.Error(), Err: err}
	case errors.Is(err, wpimport.ErrTooLarge):
		return &Error{Reason: "too_large", Message: "too large: " + err.Error(), Err: err}
	case errors.Is(err, wpimport.ErrNotTEC):
		return &Error{Reason: "not_a_calendar", Message: "not a calendar: " + err.Error(), Err: err}
	case errors.As(err, &status):
		return &Error{Reason: "status", Message: fmt.Sprintf("the site answered HTTP %d: %s", status.Status, err.Error()), Err: err}
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return &Error{Reason: "timeout", Message: "timed out: the site was not read within the run's time limit", Err: err}
	case ctx.Err() != nil:
		return &Error{Reason: "network", Message: "the read was cancelled", Err: err}
	case errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), ": timeout"):
		return &Error{Reason: "timeout", Message: "timed out: " + err.Error(), Err: err}
	}
	return &Error{Reason: "network", Message: "the site could not be read: " + err.Error(), Err: err}
}

// event turns one mapped event into a feed event.
func event(snap *wpimport.Snapshot, ev wpimport.PublicEvent, lang string) (feed.Event, error) {
	p := ev.Record
	e := p.Event
	out := feed.Event{
		UID:         uid(p.ID),
		Title:       p.Title.Get(lang, lang),
		Description: ical.PlainText(p.Content.Get(lang, lang)),
		URL:         ev.Link,
		Cost:        ev.Cost,
		Image:       ev.Image,
		Modified:    p.Modified.UTC(),
	}
	if e.Website != nil && *e.Website != "" {
		out.URL = *e.Website
	}
	if e.AllDay {
		start, err := day(e.StartLocal)
		if err != nil {
			return feed.Event{}, fmt.Errorf("start_date: %v", err)
		}
		last, err := day(e.EndLocal)
		if err != nil {
			return feed.Event{}, fmt.Errorf("end_date: %v", err)
		}
		if last.Before(start) {
			last = start
		}
		out.AllDay, out.Start, out.End = true, start, last.AddDate(0, 0, 1)
	} else {
		zone, loc := e.Timezone, time.UTC
		switch zone {
		case "", "UTC":
			zone = "UTC"
		default:
			l, ok := repository.LoadZone(zone)
			if !ok {
				return feed.Event{}, fmt.Errorf("timezone: %q is not a time zone this service knows", zone)
			}
			loc = l
		}
		out.Zone, out.Start, out.End = zone, e.StartUTC.In(loc), e.EndUTC.In(loc)
		if offsetZone.MatchString(zone) {
			// TEC's UTC dates of an event at a manual offset are off (10:00
			// at UTC+2 comes with 07:00 UTC): the wall time the site shows
			// at the offset is the event's time.
			start, err1 := time.ParseInLocation(wpLayout, e.StartLocal, loc)
			end, err2 := time.ParseInLocation(wpLayout, e.EndLocal, loc)
			if err1 != nil || err2 != nil || end.Before(start) {
				return feed.Event{}, fmt.Errorf("start_date: %q .. %q are not the event's dates", e.StartLocal, e.EndLocal)
			}
			out.Start, out.End = start, end
		}
	}
	if len(e.Venues) > 0 {
		if v := snap.Venues[e.Venues[0]]; v != nil && v.Venue != nil {
			f := v.Venue
			out.Location = &feed.Place{
				Name: v.Title.Get(lang, lang), Address: f.Address, City: f.City,
				Region: firstOf(f.StateProvince, f.State, f.Province), PostalCode: f.Zip, Country: f.Country,
				Lat: f.GeoLat, Lng: f.GeoLng,
			}
		}
	}
	if len(e.Organizers) > 0 {
		if o := snap.Organizers[e.Organizers[0]]; o != nil && o.Organizer != nil {
			out.Organizer = &feed.Person{
				Name: o.Title.Get(lang, lang), Email: o.Organizer.Email,
				Phone: o.Organizer.Phone, Website: o.Organizer.Website,
			}
		}
	}
	out.Categories = names(snap.Categories, e.Categories, lang)
	out.Tags = names(snap.Tags, e.Tags, lang)
	return out, nil
}

// wpLayout is how TEC writes dates.
const wpLayout = "2006-01-02 15:04:05"

// offsetZone matches a manual offset WordPress writes as a time zone
// (UTC+2, UTC-5:30, UTC+5.5).
var offsetZone = regexp.MustCompile(`^UTC[+-]\d`)

// day reads the date of a local "2006-01-02 15:04:05" as midnight UTC.
func day(local string) (time.Time, error) {
	t, err := time.Parse("2006-01-02", strings.TrimSpace(strings.SplitN(local, " ", 2)[0]))
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not a date", local)
	}
	return t, nil
}

// names returns the names of the labels ids, in order, without
// duplicates (nil for none).
func names(labels map[int64]*repository.Label, ids []int64, lang string) []string {
	var out []string
	seen := map[string]bool{}
	for _, id := range ids {
		l := labels[id]
		if l == nil {
			continue
		}
		n := l.Name.Get(lang, lang)
		if n == "" || seen[n] {
			continue
		}
		seen[n] = true
		out = append(out, n)
	}
	return out
}

// firstOf returns the first non-empty value.
func firstOf(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}
