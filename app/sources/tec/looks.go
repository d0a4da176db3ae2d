package tec

import (
	"bytes"
	"encoding/json"
	"mime"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/calendar/eventcal/app/wpimport"
)

// namespace is The Events Calendar's REST namespace.
const namespace = "tribe/events/v1"

// apiLink matches WordPress's REST link in a Link header
// (<https://example.org/wp-json/>; rel="https://api.w.org/").
var apiLink = regexp.MustCompile(`<[^>]+>\s*;\s*rel="?https://api\.w\.org/"?`)

// Looks reports whether a fetched answer is a source Read can read (the
// "auto" format's test, after the iCalendar one):
//
//   - JSON of The Events Calendar's REST API: its namespace root
//     ({"namespace": "tribe/events/v1", "routes": ...}), WordPress's REST
//     index naming that namespace ({"namespaces": [..., "tribe/events/v1"]}),
//     or one of its lists (a "rest_url" under /tribe/events/v1/);
//   - a WordPress page announcing its REST API, in a Link header
//     (rel="https://api.w.org/") or in the page's head
//     (<link rel="https://api.w.org/" href="...">): Read then finds the
//     REST root as eventcal import does, and says "not a calendar" when
//     the site has no tribe/events/v1 namespace.
//
// Anything else (an iCalendar body, a plain HTML page, other JSON) is
// not one.
func Looks(contentType string, header http.Header, body []byte) bool {
	b := bytes.TrimSpace(bytes.TrimPrefix(body, []byte("\xef\xbb\xbf")))
	if len(b) > 0 && b[0] == '{' {
		return looksJSON(b)
	}
	mt, _, _ := mime.ParseMediaType(contentType)
	htmlType := mt == "text/html" || mt == "application/xhtml+xml"
	htmlBody := len(b) > 0 && b[0] == '<' && !bytes.HasPrefix(b, []byte("<?xml"))
	if !htmlType && !htmlBody {
		return false
	}
	for _, l := range header.Values("Link") {
		if apiLink.MatchString(l) {
			return true
		}
	}
	_, ok := wpimport.HTMLAPILink(b)
	return ok
}

// looksJSON reports whether a JSON object is The Events Calendar's REST
// root, WordPress's REST index naming it, or one of its lists.
func looksJSON(b []byte) bool {
	var v struct {
		Namespace  string          `json:"namespace"`
		Namespaces []string        `json:"namespaces"`
		Routes     json.RawMessage `json:"routes"`
		RestURL    string          `json:"rest_url"`
	}
	if json.Unmarshal(b, &v) != nil {
		return false
	}
	switch {
	case v.Namespace == namespace && len(v.Routes) > 0:
		return true
	case slices.Contains(v.Namespaces, namespace):
		return true
	case strings.Contains(v.RestURL, "/"+namespace+"/"):
		return true
	}
	return false
}
