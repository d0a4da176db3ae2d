package handlers

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/calendar/eventcal/app/datetext"
	"github.com/calendar/eventcal/app/httpcache"
	"github.com/calendar/eventcal/app/input"
	"github.com/calendar/eventcal/app/input/values"
)

// CacheKey names the response to r in the rendered-response cache: the
// route, the language, the caller (role and user ID: what a logged-in
// caller sees depends on both), the calendar day (default date ranges),
// and every parameter with its default applied, in name order, so that
// neither parameter order nor spelled-out defaults split the key. Routes
// whose answer depends on more than that (the admin ones) are not stored.
func (r *Request) CacheKey(rt *Route) httpcache.Request {
	req := httpcache.Request{Private: r.user != nil}
	if strings.HasPrefix(rt.Path, "/admin") || strings.HasPrefix(rt.Path, "/sources") {
		// Not kept: the admin views and the sources (whose runs the
		// runner records outside any write route) show the store as it
		// is now.
		return req
	}
	var sb strings.Builder
	sb.Grow(128)
	sb.WriteString(r.s.cfg.APIRoot()) // TEC_COMPAT serves the routes under two roots
	sb.WriteString(rt.Path)
	if rt.Path == "/events" {
		// Accept: text/calendar turns the list into a feed (feeds.go).
		req.Vary = []string{fiber.HeaderAccept}
		if wantsCalendar(r.c) {
			sb.WriteString(".ics")
		}
	}
	sb.WriteByte(0)
	sb.WriteString(r.lang)
	sb.WriteByte(0)
	if r.user != nil {
		sb.WriteString(string(r.user.Role))
		sb.WriteByte(':')
		sb.WriteString(strconv.FormatInt(r.user.ID, 10))
	}
	sb.WriteByte(0)
	now := r.s.now()
	sb.WriteString(now.In(r.s.cfg.Location).Format(time.DateOnly))
	names := make([]string, 0, len(r.bag.Values))
	for k := range r.bag.Values {
		names = append(names, k)
	}
	sort.Strings(names)
	relative := false
	for _, k := range names {
		v := r.bag.Values[k]
		sb.WriteByte(0)
		sb.WriteString(k)
		sb.WriteByte('=')
		if s, ok := v.(string); ok {
			sb.WriteString(strconv.Quote(s))
			relative = relative || (isDateParam[k] && r.relativeDate(k, s, now))
		} else {
			raw, err := json.Marshal(v)
			if err != nil {
				return req
			}
			sb.Write(raw)
		}
	}
	if relative || input.Truthy(r.bag.Values["only_with_upcoming"]) {
		// The answer depends on the time of day: keyed by the second.
		sb.WriteByte(0)
		sb.WriteString(strconv.FormatInt(now.Unix(), 10))
	}
	req.Key = sb.String()
	return req
}

// isDateParam names the parameters parsed as dates (eventListArgs).
var isDateParam = map[string]bool{"start_date": true, "end_date": true, "starts_before": true,
	"starts_after": true, "ends_before": true, "ends_after": true}

// relativeDate reports whether the date parameter name (sent as s)
// means a different instant at another time of the same day ("now", "+1
// hour"): such answers must not be reused for the whole day. A date the
// route read once (readDate) as a date and time or an instant never does,
// and is not read again; a phrase is read again an hour earlier.
func (r *Request) relativeDate(name, s string, now time.Time) bool {
	loc, lang := r.s.cfg.Location, r.lang
	var a time.Time
	var errA error
	if d, ok := r.bag.Decoded(name); ok {
		v, _ := d.(datetext.Value)
		if !v.IsPhrase() {
			return false
		}
		a, errA = v.In(loc)
	} else {
		a, errA = values.ParseDate(s, loc, now, lang)
	}
	b, errB := values.ParseDate(s, loc, now.Add(-time.Hour-time.Minute-time.Second), lang)
	return errA == nil && errB == nil && !a.Equal(b)
}
