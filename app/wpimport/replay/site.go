package replay

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Site is a hand-made TEC 6.17.1 site, for tests of sources the
// recordings do not show (hostile records, endless lists, a source that
// echoes the credentials). SiteServer serves it the way the recordings
// show TEC serving a site:
//
//   - lists (events, venues, organizers, categories, tags): 50 records a
//     page (per_page larger is clamped, as events-list-per-page-100-
//     clamped-to-50 shows), the body {"<list>": [...], "rest_url",
//     "total", "total_pages"} with X-TEC-Total and X-TEC-TotalPages; a
//     page past the end is 404 <kind>-archive-page-not-found for posts
//     (events-list-all-statuses-page-5-past-the-end) and 200 with an
//     empty list for terms (tags-list-authenticated-page-2-past-the-end);
//   - a read by ID: the record, or 400 rest_invalid_param for an unknown
//     ID (venues-single-error-invalid-id-999999);
//   - WordPress's /wp-json/wp/v2/tribe_events?_fields=id,content.protected:
//     100 a page, X-WP-Total and X-WP-TotalPages, 400
//     rest_post_invalid_page_number past the end (what serveWP follows);
//   - /wp-json/: the REST index with the site's time zone (UTC).
//
// Records are given as TEC shows them (Event, Venue, Organizer, Term make
// ones shaped like the recordings); the server sends them as they are.
type Site struct {
	Categories, Tags, Venues, Organizers, Events []map[string]any
	// Hidden are events hidden from listings: only WordPress's route
	// and a read by ID show them.
	Hidden []map[string]any
	// Endless names a list ("events", "categories", ..., or "wp" for
	// WordPress's route) whose pages never end: past its records every
	// page is full of new records (Make's, else a minimal one of the
	// list's kind) and no total is announced.
	Endless string
	// Make makes the record of ID id for an endless list (nil: the
	// minimal one).
	Make func(id int64) map[string]any
	// Protected maps the IDs of password-protected events (listed or
	// hidden) to their passwords. As the source does, the TEC lists show
	// them with no description, excerpt, terms, venue or organizers; a
	// TEC read by ID answers 403 event-password-protected (to its admin
	// too) unless ?password= gives the password; WordPress's route in the
	// edit context names the password.
	Protected map[int64]string
	// Today is the date WordPress's route outside the edit context
	// counts as now (default 2026-11-25): it leaves out the events that
	// ended before it (the lab's wp/v2 list missed the events that had
	// ended), hidden ones included. The edit context lists them all.
	Today string
	// Meta holds events' meta as WordPress's route shows it in the edit
	// context (keyed by event ID, then meta key: _tribe_events_status,
	// _tribe_events_status_reason, _EventCost, _EventCurrencySymbol,
	// _EventCurrencyCode, _EventCurrencyPosition...). In the edit context
	// every event has meta with the event-status keys, "" unless Meta gives
	// them; the route names meta when _fields asks for it (or is absent).
	Meta map[int64]map[string]any
	// NoEditContext refuses WordPress's edit context (403
	// rest_forbidden_context), as for a user who may not edit events.
	NoEditContext bool
	// Users are WordPress's users as /wp/v2/users shows them in the edit
	// context (id, username, email, roles); that route needs credentials
	// (401 rest_forbidden_context without).
	Users []map[string]any
	// Login and AppPassword are the credentials WordPress's
	// /wp/v2/users/me accepts ("": any credentials are an
	// administrator's). IgnoreAuth makes it ignore them as WordPress
	// does where application passwords are unavailable (plain http on a
	// site that is not "local") or the web server drops the
	// Authorization header: 401 rest_not_logged_in.
	Login, AppPassword string
	IgnoreAuth         bool
	// EchoAuth makes every request answer 401 incorrect_password with a
	// message that echoes the request's Authorization header, wrapped in
	// an ANSI escape and line breaks, as a hostile source may.
	EchoAuth bool
}

// SiteServer serves a Site.
type SiteServer struct {
	*httptest.Server
	site     *Site
	mu       sync.Mutex
	requests int
}

// NewSite starts a server for site; it stops with the test.
func NewSite(t testing.TB, site *Site) *SiteServer {
	t.Helper()
	s := &SiteServer{site: site}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Root is the TEC namespace root of the server (the --from URL).
func (s *SiteServer) Root() string { return s.URL + Namespace }

// Requests counts the requests served.
func (s *SiteServer) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}

// endlessBase is the first ID an endless list makes.
const endlessBase = 1_000_000

func (s *SiteServer) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests++
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	if s.site.EchoAuth {
		w.WriteHeader(http.StatusUnauthorized)
		msg := "\x1b[2J\x1b[31mThe provided password is an invalid application password.\r\nYou sent: " + r.Header.Get("Authorization") + "\u202e"
		writeJSON(w, map[string]any{"code": "incorrect_password", "message": msg, "data": map[string]any{"status": 401}})
		return
	}
	path := strings.TrimRight(r.URL.Path, "/")
	switch {
	case path == "":
		// The site's home page: HTML, with the REST root in a Link
		// header as WordPress sends it.
		w.Header().Set("Content-Type", "text/html; charset=UTF-8")
		w.Header().Set("Link", "<"+s.URL+"/wp-json/>; rel=\"https://api.w.org/\"")
		_, _ = w.Write([]byte("<!doctype html><title>FX</title>"))
		return
	case path == "/wp-json":
		writeJSON(w, map[string]any{"name": "FX", "timezone_string": "UTC", "gmt_offset": 0, "namespaces": []string{"oembed/1.0", "tribe/events/v1", "wp/v2"}})
		return
	case path == "/wp-json/wp/v2/users/me":
		s.serveMe(w, r)
		return
	case path == "/wp-json/wp/v2/users":
		if r.Header.Get("Authorization") == "" || r.URL.Query().Get("context") != "edit" {
			w.WriteHeader(http.StatusUnauthorized)
			writeJSON(w, map[string]any{"code": "rest_forbidden_context", "message": "Sorry, you are not allowed to list users.", "data": map[string]any{"status": 401}})
			return
		}
		users := s.site.Users
		if users == nil {
			users = []map[string]any{}
		}
		w.Header().Set("X-WP-Total", strconv.Itoa(len(users)))
		w.Header().Set("X-WP-TotalPages", "1")
		writeJSON(w, users)
		return
	case path == "/wp-json/wp/v2/tribe_events":
		s.serveWPRoute(w, r)
		return
	}
	rest, ok := strings.CutPrefix(path, Namespace+"/")
	if !ok {
		notFound(w)
		return
	}
	list, idText, single := strings.Cut(rest, "/")
	records, kind := s.list(list)
	if kind == "" {
		notFound(w)
		return
	}
	if single {
		id, _ := strconv.ParseInt(idText, 10, 64)
		all := records
		if list == "events" {
			all = append(slices.Clone(records), s.site.Hidden...)
		}
		for _, rec := range all {
			if recordID(rec) == id {
				if pw, ok := s.site.Protected[id]; ok && list == "events" && r.URL.Query().Get("password") != pw {
					w.WriteHeader(http.StatusForbidden)
					writeJSON(w, map[string]any{"code": "event-password-protected", "message": "The requested event is password protected.", "data": map[string]any{"status": 403}})
					return
				}
				writeJSON(w, rec)
				return
			}
		}
		w.WriteHeader(http.StatusBadRequest)
		writeJSON(w, map[string]any{"code": "rest_invalid_param", "message": "Invalid parameter(s): id", "data": map[string]any{"status": 400}})
		return
	}
	page, _ := strconv.Atoi(r.URL.Query().Get("page"))
	page = max(page, 1)
	const per = 50
	lo, hi := min((page-1)*per, len(records)), min(page*per, len(records))
	items := slices.Clone(records[lo:hi])
	if list == "events" {
		for i, rec := range items {
			if _, ok := s.site.Protected[recordID(rec)]; ok {
				items[i] = redactedEvent(rec)
			}
		}
	}
	pages := (len(records) + per - 1) / per
	body := map[string]any{"rest_url": s.URL + Namespace + "/" + list + "/"}
	if s.site.Endless == list {
		for id := int64(endlessBase + (page-1)*per + len(items)); len(items) < per; id++ {
			items = append(items, s.make(kind, id))
		}
	} else {
		body["total"], body["total_pages"] = len(records), pages
		w.Header().Set("X-TEC-Total", strconv.Itoa(len(records)))
		w.Header().Set("X-TEC-TotalPages", strconv.Itoa(pages))
		if page > max(pages, 1) && kind != "term" {
			w.WriteHeader(http.StatusNotFound)
			name := strings.TrimSuffix(list, "s")
			writeJSON(w, map[string]any{"code": name + "-archive-page-not-found", "message": "The requested " + name + " archive page does not exist", "data": map[string]any{"status": 404}})
			return
		}
	}
	body[list] = items
	writeJSON(w, body)
}

// list returns the records of a list and their kind ("post" or "term").
func (s *SiteServer) list(name string) ([]map[string]any, string) {
	switch name {
	case "events":
		return s.site.Events, "post"
	case "venues":
		return s.site.Venues, "post"
	case "organizers":
		return s.site.Organizers, "post"
	case "categories":
		return s.site.Categories, "term"
	case "tags":
		return s.site.Tags, "term"
	}
	return nil, ""
}

// make returns the record id of an endless list.
func (s *SiteServer) make(kind string, id int64) map[string]any {
	if s.site.Make != nil {
		return s.site.Make(id)
	}
	switch {
	case kind == "term":
		return Term(id, fmt.Sprintf("Endless %d", id), "")
	case s.site.Endless == "venues":
		return Venue(id, fmt.Sprintf("Endless %d", id))
	case s.site.Endless == "organizers":
		return Organizer(id, fmt.Sprintf("Endless %d", id))
	}
	return Event(id, fmt.Sprintf("Endless %d", id))
}

// serveMe answers WordPress's /wp/v2/users/me: the user the credentials
// name, 401 incorrect_password for wrong ones, 401 rest_not_logged_in
// without any (or with IgnoreAuth).
func (s *SiteServer) serveMe(w http.ResponseWriter, r *http.Request) {
	user, pw, ok := r.BasicAuth()
	refuse := func(code, msg string) {
		w.WriteHeader(http.StatusUnauthorized)
		writeJSON(w, map[string]any{"code": code, "message": msg, "data": map[string]any{"status": 401}})
	}
	switch {
	case !ok || s.site.IgnoreAuth:
		refuse("rest_not_logged_in", "You are not currently logged in.")
	case s.site.Login != "" && (user != s.site.Login || strings.ReplaceAll(pw, " ", "") != strings.ReplaceAll(s.site.AppPassword, " ", "")):
		refuse("incorrect_password", "The provided password is an invalid application password.")
	default:
		writeJSON(w, map[string]any{"id": 1, "name": user, "slug": user, "roles": []string{"administrator"}})
	}
}

// redactedEvent is a password-protected event as the TEC lists show it.
func redactedEvent(rec map[string]any) map[string]any {
	out := maps.Clone(rec)
	out["description"], out["excerpt"] = "", ""
	out["categories"], out["tags"], out["venue"], out["organizer"] = []any{}, []any{}, []any{}, []any{}
	return out
}

// serveWPRoute answers WordPress's own event route as serveWP does. In
// the edit context (context=edit: authenticated, and refused with
// NoEditContext) it lists every event and names the passwords and meta
// (Site.Meta); outside
// it, events that ended before Today are left out.
func (s *SiteServer) serveWPRoute(w http.ResponseWriter, r *http.Request) {
	edit := r.URL.Query().Get("context") == "edit"
	if edit && (s.site.NoEditContext || r.Header.Get("Authorization") == "") {
		status := http.StatusForbidden
		if r.Header.Get("Authorization") == "" {
			status = http.StatusUnauthorized
		}
		w.WriteHeader(status)
		writeJSON(w, map[string]any{"code": "rest_forbidden_context", "message": "Sorry, you are not allowed to edit posts in this post type.", "data": map[string]any{"status": status}})
		return
	}
	today := s.site.Today
	if today == "" {
		today = "2026-11-25"
	}
	var ids []int64
	for _, e := range append(slices.Clone(s.site.Events), s.site.Hidden...) {
		if end, _ := e["end_date"].(string); !edit && end != "" && end < today {
			continue
		}
		ids = append(ids, recordID(e))
	}
	slices.Sort(ids)
	page, _ := strconv.Atoi(r.URL.Query().Get("page"))
	page = max(page, 1)
	const per = 100
	out := []map[string]any{}
	if s.site.Endless == "wp" {
		for i := range per {
			out = append(out, map[string]any{"id": endlessBase + (page-1)*per + i, "content": map[string]bool{"protected": false}})
		}
		writeJSON(w, out)
		return
	}
	pages := (len(ids) + per - 1) / per
	w.Header().Set("X-WP-Total", strconv.Itoa(len(ids)))
	w.Header().Set("X-WP-TotalPages", strconv.Itoa(pages))
	if page > max(pages, 1) {
		w.WriteHeader(http.StatusBadRequest)
		writeJSON(w, map[string]any{"code": "rest_post_invalid_page_number", "message": "The page number requested is larger than the number of pages available.", "data": map[string]any{"status": 400}})
		return
	}
	for _, id := range ids[min((page-1)*per, len(ids)):min(page*per, len(ids))] {
		pw, protected := s.site.Protected[id]
		item := map[string]any{"id": id, "content": map[string]bool{"protected": protected}}
		if edit {
			item["password"] = pw
			if f := r.URL.Query().Get("_fields"); f == "" || strings.Contains(f, "meta") {
				meta := map[string]any{"_tribe_events_status": "", "_tribe_events_status_reason": ""}
				maps.Copy(meta, s.site.Meta[id])
				item["meta"] = meta
			}
		}
		out = append(out, item)
	}
	writeJSON(w, out)
}

func notFound(w http.ResponseWriter) {
	w.WriteHeader(http.StatusNotFound)
	writeJSON(w, map[string]any{"code": "rest_no_route", "message": "No route was found matching the URL and request method.", "data": map[string]any{"status": 404}})
}

func writeJSON(w http.ResponseWriter, v any) {
	_ = json.NewEncoder(w).Encode(v)
}

// recordID reads a record's "id" (a float64 from JSON, or an int64 or int
// from Go).
func recordID(rec map[string]any) int64 {
	switch v := rec["id"].(type) {
	case int64:
		return v
	case int:
		return int64(v)
	case float64:
		return int64(v)
	case json.Number:
		n, _ := v.Int64()
		return n
	}
	return 0
}

// The record makers below return records shaped as the recordings show
// them (events-list-all-statuses-page-4, venues-list-all-statuses-page-1,
// organizers-list-all-statuses-page-1, tags-list-hide-empty-false), with
// the fields an importer reads; tests change the fields they are about.

// Event returns a published event of 2027-05-01 19:00–22:00 UTC.
func Event(id int64, title string) map[string]any {
	return map[string]any{
		"id": id, "global_id": fmt.Sprintf("127.0.0.1?id=%d", id), "author": "1", "status": "publish",
		"date": "2026-11-25 16:44:40", "date_utc": "2026-11-25 16:44:40", "modified": "2026-11-25 16:44:40", "modified_utc": "2026-11-25 16:44:40",
		"url": fmt.Sprintf("http://127.0.0.1:8088/event/e-%d/", id), "rest_url": fmt.Sprintf("http://127.0.0.1:8088/wp-json/tribe/events/v1/events/%d", id),
		"title": title, "description": "<p>About it.</p>", "excerpt": "", "slug": fmt.Sprintf("e-%d", id), "image": false,
		"all_day": false, "start_date": "2027-05-01 19:00:00", "end_date": "2027-05-01 22:00:00",
		"utc_start_date": "2027-05-01 19:00:00", "utc_end_date": "2027-05-01 22:00:00", "timezone": "UTC", "timezone_abbr": "UTC",
		"cost": "", "cost_details": map[string]any{"currency_symbol": "", "currency_code": "", "currency_position": "", "values": []string{}},
		"website": fmt.Sprintf("http://127.0.0.1:8088/event/e-%d/", id), "show_map": true, "show_map_link": true,
		"hide_from_listings": false, "sticky": false, "featured": false,
		"categories": []any{}, "tags": []any{}, "venue": []any{}, "organizer": []any{}, "custom_fields": []any{},
	}
}

// Venue returns a published venue.
func Venue(id int64, name string) map[string]any {
	return map[string]any{
		"id": id, "author": "1", "status": "publish",
		"date": "2026-11-25 16:54:19", "date_utc": "2026-11-25 16:54:19", "modified": "2026-11-25 16:54:19", "modified_utc": "2026-11-25 16:54:19",
		"url": fmt.Sprintf("http://127.0.0.1:8088/venue/v-%d/", id), "venue": name, "slug": fmt.Sprintf("v-%d", id),
		"show_map": true, "show_map_link": true,
	}
}

// Organizer returns a published organizer.
func Organizer(id int64, name string) map[string]any {
	return map[string]any{
		"id": id, "author": "1", "status": "publish",
		"date": "2026-11-25 16:54:21", "date_utc": "2026-11-25 16:54:21", "modified": "2026-11-25 16:54:21", "modified_utc": "2026-11-25 16:54:21",
		"url": fmt.Sprintf("http://127.0.0.1:8088/organizer/o-%d/", id), "organizer": name, "slug": fmt.Sprintf("o-%d", id),
	}
}

// Term returns a category or tag (slug "" makes one from the ID).
func Term(id int64, name, slug string) map[string]any {
	if slug == "" {
		slug = fmt.Sprintf("t-%d", id)
	}
	return map[string]any{"id": id, "count": 0, "description": "", "name": name, "slug": slug, "taxonomy": "post_tag", "meta": []any{}}
}

// WPUser returns a WordPress user as /wp/v2/users shows it in the edit
// context.
func WPUser(id int64, login, email string, roles ...string) map[string]any {
	return map[string]any{"id": id, "username": login, "name": login, "email": email, "roles": roles}
}
