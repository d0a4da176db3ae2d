package present

import (
	"bytes"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// List is the envelope of the event, venue and organizer lists:
// {<Key>: items, rest_url, next_rest_url?, previous_rest_url?, total,
// total_pages, facets?}.
type List struct {
	// Key names the items: events, venues or organizers.
	Key   string
	Items []any
	// RestURL is this page's address; NextRestURL and PreviousRestURL
	// are omitted when empty.
	RestURL         string
	NextRestURL     string
	PreviousRestURL string
	Total           int
	TotalPages      int
	// Facets is set when the request asked for facets (Facets).
	Facets *Obj
}

func (l *List) writeJSON(buf *bytes.Buffer) error {
	w := openObj(buf)
	w.key(l.Key)
	items := l.Items
	if items == nil {
		items = []any{}
	}
	if err := WriteJSON(buf, items); err != nil {
		return err
	}
	w.str("rest_url", l.RestURL)
	w.strSet("next_rest_url", l.NextRestURL)
	w.strSet("previous_rest_url", l.PreviousRestURL)
	w.int("total", int64(l.Total))
	w.int("total_pages", int64(l.TotalPages))
	if l.Facets != nil {
		w.val("facets", l.Facets)
	}
	return w.close()
}

// MarshalJSON writes the envelope.
func (l *List) MarshalJSON() ([]byte, error) { return marshal(l) }

// Paging is one page of a list: what its envelope, links and headers say.
type Paging struct {
	Page, PerPage, Total int
	// Base is the list's address (API root, language prefix, path and a
	// trailing slash).
	Base string
	// Sent holds the parameters the client sent, each written back as
	// text (lists joined by commas), page, _method and password left out.
	Sent map[string]string
}

// Pages is the number of pages (0 for an empty list).
func (pg Paging) Pages() int {
	if pg.Total > 0 {
		return (pg.Total + pg.PerPage - 1) / pg.PerPage
	}
	return 0
}

// NewList builds the envelope of a page of items.
func NewList(key string, items []any, pg Paging) *List {
	pages := pg.Pages()
	l := &List{Key: key, Items: items, RestURL: pg.URL(pg.Page, true), Total: pg.Total, TotalPages: pages}
	if pg.Page < pages {
		l.NextRestURL = pg.URL(pg.Page+1, false)
	}
	if pg.Page > 1 && pg.Page-1 <= pages {
		l.PreviousRestURL = pg.URL(pg.Page-1, false)
	}
	return l
}

// LabelList is the envelope of /categories and /tags, in WordPress's
// order: {rest_url, total, total_pages, <Key>: items, next_rest_url?,
// previous_rest_url?}. It has List's fields (Facets is not written).
type LabelList List

func (l *LabelList) writeJSON(buf *bytes.Buffer) error {
	w := openObj(buf)
	w.str("rest_url", l.RestURL)
	w.int("total", int64(l.Total))
	w.int("total_pages", int64(l.TotalPages))
	items := l.Items
	if items == nil {
		items = []any{}
	}
	w.val(l.Key, items)
	w.strSet("next_rest_url", l.NextRestURL)
	w.strSet("previous_rest_url", l.PreviousRestURL)
	return w.close()
}

// MarshalJSON writes the envelope.
func (l *LabelList) MarshalJSON() ([]byte, error) { return marshal(l) }

// envelope is a list envelope SendList writes: its totals and links.
type envelope interface {
	jsonValue
	paging() (total, pages int, prev, next string)
}

func (l *List) paging() (int, int, string, string) {
	return l.Total, l.TotalPages, l.PreviousRestURL, l.NextRestURL
}

func (l *LabelList) paging() (int, int, string, string) { return (*List)(l).paging() }

// SendList writes a list envelope (List, LabelList) with the paging
// headers: the totals, and Link to the next and previous pages (RFC
// 8288; the body's links stay), as WordPress does for its lists.
func SendList(c *fiber.Ctx, l envelope) error {
	total, pages, prev, next := l.paging()
	c.Set("X-TEC-Total", strconv.Itoa(total))
	c.Set("X-TEC-TotalPages", strconv.Itoa(pages))
	c.Set("X-WP-Total", strconv.Itoa(total))
	c.Set("X-WP-TotalPages", strconv.Itoa(pages))
	var links []string
	for _, x := range []struct{ url, rel string }{{prev, "prev"}, {next, "next"}} {
		if x.url != "" {
			links = append(links, "<"+x.url+`>; rel="`+x.rel+`"`)
		}
	}
	if len(links) > 0 {
		c.Set("Link", strings.Join(links, ", "))
	}
	return SendJSON(c, 200, l)
}

// linkOrder is the order of parameters in the original plugin's list
// links, then everything else the client sent, alphabetically.
var linkOrder = []string{"page", "per_page", "start_date", "end_date", "search", "geoloc", "geoloc_lat", "geoloc_lng",
	"geoloc_radius", "status", "post_parent", "include", "starts_before", "starts_after", "ends_before", "ends_after",
	"ticketed", "venue", "organizer", "featured", "categories", "tags", "strict_dates", "event", "has_events",
	"only_with_upcoming", "multilang_language"}

// URL builds a list link carrying every parameter the client sent,
// URL-encoded; rest_url (self) keeps page in its place, next/previous put
// it last and omit page 1.
func (pg Paging) URL(page int, self bool) string {
	var parts []string
	add := func(k, v string) { parts = append(parts, url.QueryEscape(k)+"="+url.QueryEscape(v)) }
	if self {
		add("page", strconv.Itoa(page))
	}
	done := map[string]bool{}
	for _, k := range linkOrder {
		if v, ok := pg.Sent[k]; ok {
			add(k, v)
			done[k] = true
		}
	}
	var rest []string
	for k := range pg.Sent {
		if !done[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	for _, k := range rest {
		add(k, pg.Sent[k])
	}
	if !self && page > 1 {
		add("page", strconv.Itoa(page))
	}
	if len(parts) == 0 {
		return pg.Base
	}
	return pg.Base + "?" + strings.Join(parts, "&")
}
