package tec_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/calendar/eventcal/app/wpimport/replay"
)

// recordedSite serves the recorded TEC 6.17.1 site (app/wpimport/replay's
// recordings) as an anonymous visitor sees it:
//
//   - GET /wp-json/tribe/events/v1/events without a query: the recorded
//     default-window answer (events-list-anonymous-default-window)
//     verbatim;
//   - with per_page and page: the same default window (the 46 published
//     events that end on or after the recorded window's start, in the
//     recorded order), served from the anonymous wide-window recording
//     (events-list-anonymous-page-1) as TEC pages a list: per_page
//     clamped to 50, total and total_pages in the body and the X-TEC-*
//     headers, next_rest_url, and the recorded 404
//     event-archive-page-not-found past the end;
//   - /wp-json/tribe/events/v1: the recorded namespace index;
//   - /wp-json/: WordPress's REST index naming the namespace;
//   - /: the site's home page, HTML whose head names the REST root
//     (<link rel="https://api.w.org/">), without a Link header.
//
// modify, when set, changes the served events (decoded) before paging.
type recordedSite struct {
	*httptest.Server
	mu       sync.Mutex
	window   []map[string]any // the default window's events
	recorded *replay.Exchange // the default-window recording
	pastEnd  *replay.Exchange
	index    *replay.Exchange
	requests []string
	agents   []string // the User-Agent of each request
	// status, when set, answers every request with it.
	status int
}

// windowStart is the recorded default window's start
// (events-list-anonymous-default-window's rest_url).
const windowStart = "2026-11-24 00:00:00"

func newRecordedSite(t *testing.T, modify func(events map[int64]map[string]any)) *recordedSite {
	t.Helper()
	rec := replay.Load(t)
	s := &recordedSite{recorded: rec["events-list-anonymous-default-window"], pastEnd: rec["events-list-anonymous-page-2-past-the-end"],
		index: rec["namespace-index"]}
	var wide struct {
		Events []map[string]any `json:"events"`
	}
	if err := json.Unmarshal(rec["events-list-anonymous-page-1"].Body, &wide); err != nil {
		t.Fatal(err)
	}
	byID := map[int64]map[string]any{}
	for _, e := range wide.Events {
		if end, _ := e["end_date"].(string); end >= windowStart {
			s.window = append(s.window, e)
			byID[int64(e["id"].(float64))] = e
		}
	}
	if modify != nil {
		modify(byID)
	}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Root is the namespace root.
func (s *recordedSite) Root() string { return s.URL + replay.Namespace }

// Requests returns the request URIs served.
func (s *recordedSite) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

func (s *recordedSite) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests = append(s.requests, r.URL.RequestURI())
	s.agents = append(s.agents, r.Header.Get("User-Agent"))
	status := s.status
	s.mu.Unlock()
	if status != 0 {
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"code":"internal_server_error","message":"<p>There has been a critical error on this website.</p>","data":{"status":%d}}`, status)
		return
	}
	path := strings.TrimRight(r.URL.Path, "/")
	switch path {
	case "":
		w.Header().Set("Content-Type", "text/html; charset=UTF-8")
		fmt.Fprintf(w, "<!DOCTYPE html>\n<html lang=\"en-US\"><head><meta charset=\"UTF-8\"><title>FX</title>\n"+
			"<link rel='dns-prefetch' href='//s.w.org' />\n<link rel=\"https://api.w.org/\" href=\"%s/wp-json/\" />\n"+
			"<link rel=\"alternate\" type=\"application/rss+xml\" href=\"%s/feed/\" /></head><body><h1>FX</h1></body></html>", s.URL, s.URL)
	case "/wp-json":
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		fmt.Fprint(w, `{"name":"FX","description":"","url":"`+s.URL+`","home":"`+s.URL+`","gmt_offset":0,"timezone_string":"UTC","namespaces":["oembed/1.0","tribe/events/v1","wp/v2"],"routes":{}}`)
	case replay.Namespace:
		write(w, s.index)
	case replay.Namespace + "/events":
		if r.URL.RawQuery == "" {
			write(w, s.recorded)
			return
		}
		s.serveList(w, r.URL.Query())
	default:
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"code":"rest_no_route","message":"No route was found matching the URL and request method.","data":{"status":404}}`)
	}
}

// serveList pages the default window as TEC pages a list.
func (s *recordedSite) serveList(w http.ResponseWriter, q url.Values) {
	per, _ := strconv.Atoi(q.Get("per_page"))
	if per <= 0 {
		per = 10
	}
	per = min(per, 50)
	page, _ := strconv.Atoi(q.Get("page"))
	page = max(page, 1)
	s.mu.Lock()
	events := s.window
	s.mu.Unlock()
	pages := (len(events) + per - 1) / per
	if page > pages {
		write(w, s.pastEnd)
		return
	}
	base := s.URL + replay.Namespace + "/events/"
	body := map[string]any{
		"events":      events[(page-1)*per : min(page*per, len(events))],
		"rest_url":    base + fmt.Sprintf("?page=%d&per_page=%d&start_date=%s&status=publish", page, per, windowStart),
		"total":       len(events),
		"total_pages": pages,
	}
	if page < pages {
		body["next_rest_url"] = base + fmt.Sprintf("?per_page=%d&status=publish&page=%d", per, page+1)
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.Header().Set("Link", "<"+s.URL+"/wp-json/>; rel=\"https://api.w.org/\"")
	w.Header().Set("X-TEC-Total", strconv.Itoa(len(events)))
	w.Header().Set("X-TEC-TotalPages", strconv.Itoa(pages))
	_ = json.NewEncoder(w).Encode(body)
}

// write sends a recorded answer.
func write(w http.ResponseWriter, x *replay.Exchange) {
	for _, h := range x.Headers {
		switch strings.ToLower(h[0]) {
		case "content-length", "transfer-encoding", "connection", "date":
			continue
		}
		w.Header().Add(h[0], h[1])
	}
	w.WriteHeader(x.Status)
	_, _ = w.Write(x.Body)
}
