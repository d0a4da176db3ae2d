// Package replay serves the recorded TEC 6.17.1 exchanges from a local
// HTTP server, for the importer's tests: each request gets the recorded
// answer of its method, path (query parameters in any order; page=1 as if
// absent) and kind of authentication, with the recorded status, headers
// and body. The recordings are in this package's testdata/tec-6.17.1; its
// README.md says how they were recorded and what they show.
//
// WordPress's own wp/v2/tribe_events route was not recorded; the server
// synthesises it from the recordings (every recorded event ID, the hidden
// ones included), paged as WordPress pages it.
package replay

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/calendar/eventcal/config/testsupport"
)

// Credentials the server accepts as the recording's application password.
const (
	User        = "fx-admin"
	AppPassword = "abcd EFGH 1234 ijkl MNOP 5678"
)

// Namespace is the TEC namespace path of the recordings.
const Namespace = "/wp-json/tribe/events/v1"

// Exchange is one recorded request and its answer.
type Exchange struct {
	Request struct {
		Method string `json:"method"`
		Path   string `json:"path"`
		Auth   string `json:"auth"`
	} `json:"request"`
	Status  int             `json:"status"`
	Headers [][2]string     `json:"headers"`
	Body    json.RawMessage `json:"body"`
	// File is the recording's file name.
	File string `json:"-"`
}

// fixtures is the recordings' directory, relative to the module root.
var fixtures = filepath.Join("app", "wpimport", "replay", "testdata", "tec-6.17.1")

// Dir returns the recordings' directory: testdata/tec-6.17.1 of this
// package, found from the module root (the directory holding go.mod above
// the test's working directory), so that a test of any package of the
// module finds it.
func Dir(t testing.TB) string {
	t.Helper()
	dir := testsupport.ModuleRoot(t)
	fx := filepath.Join(dir, fixtures)
	if _, err := os.Stat(filepath.Join(fx, "INDEX.tsv")); err != nil {
		t.Fatalf("replay: the recorded exchanges are not at %s: %v", fx, err)
	}
	return fx
}

// Load reads every recording, keyed by file name without ".json".
func Load(t testing.TB) map[string]*Exchange {
	t.Helper()
	dir := Dir(t)
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("replay: no recordings in %s", dir)
	}
	out := map[string]*Exchange{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var x Exchange
		if err := json.Unmarshal(b, &x); err != nil {
			t.Fatalf("replay: %s: %v", f, err)
		}
		x.File = strings.TrimSuffix(filepath.Base(f), ".json")
		out[x.File] = &x
	}
	return out
}

// Server is the replaying source.
type Server struct {
	*httptest.Server
	mu        sync.Mutex
	exchanges map[string]*Exchange // by key(method, path, auth)
	byFile    map[string]*Exchange
	wpIDs     []int64
	protected map[int64]bool
	responses int
	// cutAfter, when > 0, makes every response after that many a 503.
	cutAfter int
	// noWP makes wp/v2/tribe_events answer 404 (route not reachable).
	noWP bool
	// requests records every request line served (method, path, auth kind).
	requests []string
	// authHeaders records every Authorization header received.
	authHeaders []string
}

// New starts a server replaying the recordings; it stops with the test.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{exchanges: map[string]*Exchange{}, byFile: Load(t), protected: map[int64]bool{}}
	events := map[int64]bool{}
	for _, x := range s.byFile {
		s.exchanges[key(x.Request.Method, x.Request.Path, x.Request.Auth)] = x
		if strings.HasPrefix(x.File, "events-single-") && x.Status == 403 && strings.Contains(string(x.Body), "event-password-protected") {
			// events-single-369-pw1: the ID is in the name.
			if id, err := strconv.ParseInt(strings.Split(x.File, "-")[2], 10, 64); err == nil {
				s.protected[id] = true
			}
		}
		if strings.HasPrefix(x.File, "events-single-") && x.Status == 200 {
			var b struct {
				ID int64 `json:"id"`
			}
			_ = json.Unmarshal(x.Body, &b)
			events[b.ID] = true
		}
		if strings.HasPrefix(x.File, "events-list-all-statuses-") && x.Status == 200 {
			var b struct {
				Events []struct {
					ID int64 `json:"id"`
				} `json:"events"`
			}
			_ = json.Unmarshal(x.Body, &b)
			for _, e := range b.Events {
				events[e.ID] = true
			}
		}
	}
	for id := range events {
		s.wpIDs = append(s.wpIDs, id)
	}
	slices.Sort(s.wpIDs)
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Root is the TEC namespace root of the server (the --from URL).
func (s *Server) Root() string { return s.URL + Namespace }

// Exchange returns the recording of a file (name without ".json").
func (s *Server) Exchange(file string) *Exchange { return s.byFile[file] }

// Replace serves body instead of the recorded body of file (a change at
// the source); modify receives the decoded recorded body and changes it.
func (s *Server) Replace(t testing.TB, file string, modify func(body map[string]any)) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	x := s.byFile[file]
	if x == nil {
		t.Fatalf("replay: no recording %s", file)
	}
	var body map[string]any
	if err := json.Unmarshal(x.Body, &body); err != nil {
		t.Fatal(err)
	}
	modify(body)
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	c := *x
	c.Body = b
	s.byFile[file] = &c
	s.exchanges[key(c.Request.Method, c.Request.Path, c.Request.Auth)] = &c
}

// Remove makes a recording answer 404 (a record deleted at the source, or
// a list page gone).
func (s *Server) Remove(file string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	x := s.byFile[file]
	delete(s.exchanges, key(x.Request.Method, x.Request.Path, x.Request.Auth))
}

// DisableWP makes WordPress's own wp/v2/tribe_events route answer 404,
// as on a site that disabled it.
func (s *Server) DisableWP() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.noWP = true
}

// CutAfter makes every response after the n-th a 503 (0: never).
func (s *Server) CutAfter(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cutAfter, s.responses = n, 0
}

// Requests returns the requests served so far ("GET path auth").
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// AuthHeaders returns every Authorization header received.
func (s *Server) AuthHeaders() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.authHeaders)
}

// auth classifies a request's credentials as the recordings do.
func auth(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if h == "" {
		return "anonymous"
	}
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte(User+":"+AppPassword))
	if h == want {
		return "basic-application-password"
	}
	return "basic-wrong-password"
}

// key is the lookup key of a request: method, path, the query sorted
// with page=1 dropped, and the kind of authentication.
func key(method, rawPath, auth string) string {
	p, q, _ := strings.Cut(rawPath, "?")
	vals, _ := url.ParseQuery(q)
	if vals.Get("page") == "1" {
		vals.Del("page")
	}
	var parts []string
	for k, vs := range vals {
		for _, v := range vs {
			parts = append(parts, k+"="+v)
		}
	}
	sort.Strings(parts)
	return method + " " + strings.TrimRight(p, "/") + "?" + strings.Join(parts, "&") + " " + auth
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	a := auth(r)
	s.requests = append(s.requests, r.Method+" "+r.URL.RequestURI()+" "+a)
	if h := r.Header.Get("Authorization"); h != "" {
		s.authHeaders = append(s.authHeaders, h)
	}
	s.responses++
	if s.cutAfter > 0 && s.responses > s.cutAfter {
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprint(w, `{"code":"cut","message":"the source went away","data":{"status":503}}`)
		return
	}
	if a == "basic-wrong-password" {
		s.mu.Unlock()
		s.write(w, s.byFile["events-list-error-bad-credentials"])
		return
	}
	if strings.TrimRight(r.URL.Path, "/") == "/wp-json/wp/v2/tribe_events" && !s.noWP {
		ids := s.wpIDs
		s.mu.Unlock()
		s.serveWP(w, r, ids, a)
		return
	}
	x := s.exchanges[key(r.Method, r.URL.RequestURI(), a)]
	if x == nil && r.URL.Query().Get("hide_empty") == "false" {
		// Only the authenticated term lists were recorded with
		// hide_empty=false; anonymous callers get the default list.
		q := r.URL.Query()
		q.Del("hide_empty")
		x = s.exchanges[key(r.Method, r.URL.Path+"?"+q.Encode(), a)]
	}
	s.mu.Unlock()
	if x == nil {
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"code":"rest_no_route","message":"No route was found matching the URL and request method.","data":{"status":404}}`)
		return
	}
	s.write(w, x)
}

// write sends a recorded answer.
func (s *Server) write(w http.ResponseWriter, x *Exchange) {
	for _, h := range x.Headers {
		switch strings.ToLower(h[0]) {
		case "content-length", "transfer-encoding", "connection", "date":
			continue
		}
		w.Header().Add(h[0], h[1])
	}
	w.WriteHeader(x.Status)
	body := []byte(x.Body)
	var text string
	if json.Unmarshal(x.Body, &text) == nil {
		body = []byte(text) // a recorded non-JSON body
	}
	_, _ = w.Write(body)
}

// serveWP answers /wp-json/wp/v2/tribe_events?_fields=id,content.protected
// as WordPress does: 100 per page at most, X-WP-Total and
// X-WP-TotalPages, 400 rest_post_invalid_page_number past the end, and
// content.protected true for the password-protected events (those whose
// recorded single read is 403 event-password-protected). Anonymous
// callers get no more than the published events; this server gives them
// nothing.
func (s *Server) serveWP(w http.ResponseWriter, r *http.Request, ids []int64, a string) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	if a == "anonymous" {
		ids = nil
	}
	per, _ := strconv.Atoi(r.URL.Query().Get("per_page"))
	if per <= 0 || per > 100 {
		per = 10
	}
	page, _ := strconv.Atoi(r.URL.Query().Get("page"))
	if page <= 0 {
		page = 1
	}
	pages := (len(ids) + per - 1) / per
	w.Header().Set("X-WP-Total", strconv.Itoa(len(ids)))
	w.Header().Set("X-WP-TotalPages", strconv.Itoa(pages))
	if page > max(pages, 1) {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"code":"rest_post_invalid_page_number","message":"The page number requested is larger than the number of pages available.","data":{"status":400}}`)
		return
	}
	lo, hi := min((page-1)*per, len(ids)), min(page*per, len(ids))
	out := make([]map[string]any, 0, hi-lo)
	for _, id := range ids[lo:hi] {
		item := map[string]any{"id": id}
		if strings.Contains(r.URL.Query().Get("_fields"), "content") {
			item["content"] = map[string]bool{"protected": s.protected[id]}
		}
		out = append(out, item)
	}
	_ = json.NewEncoder(w).Encode(out)
}
