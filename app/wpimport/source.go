package wpimport

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/calendar/eventcal/config/limits"
)

// The source's list parameters (the recordings' README,
// replay/testdata/tec-6.17.1/README.md, "Listing every event").
const (
	// perPage is the source's largest page; more is silently clamped.
	perPage = 50
	// allStatuses lists every status explicitly: without a status the
	// source means "any", which leaves out the trash, and "any" itself
	// is refused.
	allStatuses = "publish,future,draft,pending,private,trash"
	// windowStart and windowEnd cover every event: the source lists only
	// upcoming events by default and refuses 1970-01-01 (timestamp 0).
	windowStart = "1971-01-01"
	windowEnd   = "2100-12-31"
	// wpPerPage is WordPress's largest page on wp/v2.
	wpPerPage = 100
)

// tecTerm is a category or tag as the source shows it.
type tecTerm struct {
	ID          int64  `json:"id"`
	Name        string `json:"name"`
	Slug        string `json:"slug"`
	Description string `json:"description"`
	Parent      int64  `json:"parent"`
}

// tecImage is the featured image object of an event, venue or organizer.
type tecImage struct {
	ID        int64  `json:"id"`
	URL       string `json:"url"`
	Extension string `json:"extension"`
	// Width, Height and Filesize are the source's (0 when absent or not
	// a number); Sizes its smaller copies, by name.
	Width    looseInt        `json:"width"`
	Height   looseInt        `json:"height"`
	Filesize looseInt        `json:"filesize"`
	Sizes    json.RawMessage `json:"sizes"`
}

// looseInt is a whole number the source may write as a number or a
// numeric string; anything else reads as 0 (an image's size is
// decoration: an odd value drops it, not the record).
type looseInt int64

// UnmarshalJSON reads a number or a numeric string; anything else is 0.
func (n *looseInt) UnmarshalJSON(b []byte) error {
	*n = 0
	s := strings.Trim(strings.TrimSpace(string(b)), `"`)
	if v, err := strconv.ParseInt(s, 10, 64); err == nil && v > 0 {
		*n = looseInt(v)
	}
	return nil
}

// tecPost holds what events, venues and organizers have in common.
type tecPost struct {
	ID          int64           `json:"id"`
	Author      json.RawMessage `json:"author"`
	Status      string          `json:"status"`
	Date        string          `json:"date"`
	DateUTC     string          `json:"date_utc"`
	Modified    string          `json:"modified"`
	ModifiedUTC string          `json:"modified_utc"`
	URL         string          `json:"url"`
	Description string          `json:"description"`
	Slug        string          `json:"slug"`
	Image       json.RawMessage `json:"image"`
}

// tecEvent is an event as the source shows it.
type tecEvent struct {
	tecPost
	Title        string `json:"title"`
	Excerpt      string `json:"excerpt"`
	AllDay       bool   `json:"all_day"`
	StartDate    string `json:"start_date"`
	EndDate      string `json:"end_date"`
	UTCStartDate string `json:"utc_start_date"`
	UTCEndDate   string `json:"utc_end_date"`
	Timezone     string `json:"timezone"`
	Cost         string `json:"cost"`
	CostDetails  struct {
		CurrencySymbol   string   `json:"currency_symbol"`
		CurrencyCode     string   `json:"currency_code"`
		CurrencyPosition string   `json:"currency_position"`
		Values           []string `json:"values"`
	} `json:"cost_details"`
	Website          string          `json:"website"`
	ShowMap          bool            `json:"show_map"`
	ShowMapLink      bool            `json:"show_map_link"`
	HideFromListings bool            `json:"hide_from_listings"`
	Sticky           bool            `json:"sticky"`
	Featured         bool            `json:"featured"`
	Categories       []tecTerm       `json:"categories"`
	Tags             []tecTerm       `json:"tags"`
	Venue            json.RawMessage `json:"venue"`
	Organizer        json.RawMessage `json:"organizer"`
}

// tecVenue is a venue as the source shows it.
type tecVenue struct {
	tecPost
	Venue         string `json:"venue"`
	Address       string `json:"address"`
	City          string `json:"city"`
	Country       string `json:"country"`
	Province      string `json:"province"`
	State         string `json:"state"`
	StateProvince string `json:"stateprovince"`
	Zip           string `json:"zip"`
	Phone         string `json:"phone"`
	Website       string `json:"website"`
	ShowMap       *bool  `json:"show_map"`
	ShowMapLink   *bool  `json:"show_map_link"`
	// GeoLat and GeoLng are the coordinates Events Calendar Pro adds
	// (the free plugin has none); read by ReadPublic only.
	GeoLat looseFloat `json:"geo_lat"`
	GeoLng looseFloat `json:"geo_lng"`
}

// looseFloat is a number the source may write as a number or a numeric
// string; anything else (or "") reads as absent.
type looseFloat struct {
	v   float64
	set bool
}

// UnmarshalJSON reads a number or a numeric string; anything else is
// absent.
func (f *looseFloat) UnmarshalJSON(b []byte) error {
	*f = looseFloat{}
	s := strings.Trim(strings.TrimSpace(string(b)), `"`)
	if v, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil && !math.IsNaN(v) && !math.IsInf(v, 0) {
		*f = looseFloat{v: v, set: true}
	}
	return nil
}

// tecOrganizer is an organizer as the source shows it.
type tecOrganizer struct {
	tecPost
	Organizer string `json:"organizer"`
	Phone     string `json:"phone"`
	Website   string `json:"website"`
	Email     string `json:"email"`
}

// listKind is one of the source's lists.
type listKind struct {
	name string // the path and the body key: "events", "venues", ...
	// posts are filtered by status; terms never are.
	posts bool
}

var (
	listEvents     = listKind{"events", true}
	listVenues     = listKind{"venues", true}
	listOrganizers = listKind{"organizers", true}
	listCategories = listKind{"categories", false}
	listTags       = listKind{"tags", false}
)

// listQuery returns the query of page page of a list: every status and
// the widest window when authenticated (anonymous callers may only ask
// for published records, which is what the source gives them without a
// status), every term (hide_empty=false).
func (c *client) listQuery(k listKind, page int) url.Values {
	q := url.Values{}
	q.Set("per_page", strconv.Itoa(perPage))
	q.Set("page", strconv.Itoa(page))
	if k.posts && c.authenticated() {
		q.Set("status", allStatuses)
	}
	if k == listEvents && c.public {
		return q // the source's default window: upcoming events
	}
	if k == listEvents {
		q.Set("start_date", windowStart)
		q.Set("end_date", windowEnd)
	}
	if !k.posts {
		q.Set("hide_empty", "false")
	}
	return q
}

func (c *client) authenticated() bool { return c.user != "" || c.password != "" }

// fetchList reads every page of a list and gives each record to each as
// it arrives (raw, and the ID read from it: 0 when unreadable); no page
// is kept. A page past the end is a 404 for posts and an empty page for
// terms; total_pages (body) or X-TEC-TotalPages ends the loop earlier. A
// list that needs more than Caps.Pages pages stops the run (*CapError).
// progress is told the total (X-TEC-Total) once known and every page's
// count. It returns the records given and the total the first page
// announced (-1 when none).
func (c *client) fetchList(ctx context.Context, k listKind, progress func(total, n int), each func(id int64, raw json.RawMessage) error) (int, int, error) {
	seen := map[int64]bool{}
	announced, count := -1, 0
	// promised is the pages the last page announced (0: none).
	promised := 0
	for page := 1; ; page++ {
		if c.caps.Pages > 0 && page > c.caps.Pages {
			return count, announced, &CapError{Cap: CapPages, Limit: int64(c.caps.Pages), Where: "list " + k.name}
		}
		res, err := c.get(ctx, c.root, "/"+k.name, c.listQuery(k, page))
		if err != nil {
			return count, announced, err
		}
		// Past the end; for ReadPublic only past the pages announced: a
		// page missing before that would leave its events out of the
		// read, and the runner would take them for removed.
		if res.status == http.StatusNotFound && page > 1 && !(c.public && page <= promised) {
			break
		}
		if res.status != http.StatusOK {
			return count, announced, &StatusError{Status: res.status, msg: fmt.Sprintf("list %s page %d: %s%s", k.name, page, c.describe(res), authHint(res))}
		}
		var body map[string]json.RawMessage
		if err := json.Unmarshal(res.body, &body); err != nil {
			return count, announced, notTEC("list %s page %d: the answer is not a JSON object: %v", k.name, page, err)
		}
		res.body = nil // the page is dropped as soon as it is decoded
		var items []json.RawMessage
		if _, ok := body[k.name]; !ok && c.public {
			return count, announced, notTEC("list %s page %d: the answer has no %q list: not The Events Calendar's REST API", k.name, page, k.name)
		}
		if raw, ok := body[k.name]; ok && !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			if err := json.Unmarshal(raw, &items); err != nil {
				return count, announced, notTEC("list %s page %d: %q is not a list: %v", k.name, page, k.name, err)
			}
		}
		total, err := strconv.Atoi(res.header.Get("X-TEC-Total"))
		if err != nil {
			total = jsonInt(body["total"])
		}
		if page == 1 {
			announced = total
		}
		if progress != nil {
			progress(total, len(items))
		}
		for _, raw := range items {
			var head struct {
				ID int64 `json:"id"`
			}
			_ = json.Unmarshal(raw, &head)
			if head.ID > 0 && seen[head.ID] {
				continue // a record moved between pages while reading
			}
			if head.ID > 0 {
				seen[head.ID] = true
				if err := c.hold(heldPerID); err != nil {
					return count, announced, err
				}
			}
			count++
			if err := each(head.ID, raw); err != nil {
				return count, announced, err
			}
		}
		pages := jsonInt(body["total_pages"])
		if pages == 0 {
			pages, _ = strconv.Atoi(res.header.Get("X-TEC-TotalPages"))
		}
		promised = pages
		if len(items) == 0 || (pages > 0 && page >= pages) {
			break
		}
	}
	return count, announced, nil
}

// authHint adds what to do about a refused request.
func authHint(res *response) string {
	switch res.status {
	case http.StatusUnauthorized:
		return " (check --user and --app-password: a WordPress application password, not the login password)"
	case http.StatusForbidden:
		return " (the user may lack the rights to read every status)"
	}
	return ""
}

// jsonInt reads a JSON number or numeric string, 0 otherwise.
func jsonInt(raw json.RawMessage) int {
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		v, _ := strconv.Atoi(n.String())
		return v
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		v, _ := strconv.Atoi(s)
		return v
	}
	return 0
}

// maxEventPassword bounds a protected event's password as WordPress
// stores it (post_password is a varchar(255)); a longer one is not taken.
const maxEventPassword = 255

// fetchSingle reads one record by ID. ok is false (with the response)
// when the source did not answer 200.
func (c *client) fetchSingle(ctx context.Context, k listKind, id int64) (json.RawMessage, *response, error) {
	return c.fetchSingleWith(ctx, k, id, nil)
}

// fetchSingleWith is fetchSingle with a query (a protected event's
// ?password=).
func (c *client) fetchSingleWith(ctx context.Context, k listKind, id int64, q url.Values) (json.RawMessage, *response, error) {
	res, err := c.get(ctx, c.root, "/"+k.name+"/"+strconv.FormatInt(id, 10), q)
	if err != nil {
		return nil, nil, err
	}
	if res.status != http.StatusOK {
		return nil, res, nil
	}
	return res.body, res, nil
}

// gone reports whether a single read says the record does not exist: the
// source answers 400 rest_invalid_param for an unknown ID (or an ID of
// another kind), newer releases 404.
func gone(res *response) bool {
	return res != nil && (res.status == http.StatusNotFound ||
		(res.status == http.StatusBadRequest && res.code() == "rest_invalid_param"))
}

// wpEvents is what WordPress's own route tells of the events.
type wpEvents struct {
	// ids is every event ID the route lists.
	ids []int64
	// protected holds the password-protected ones among them
	// (content.protected).
	protected map[int64]bool
	// passwords holds the protected events' passwords, which the route
	// names in the edit context.
	passwords map[int64]string
	// statuses holds the event status and reason of the events whose
	// meta names one (_tribe_events_status, in the edit context).
	statuses map[int64]wpStatus
	// currency holds each event's cost and currency as written
	// (_EventCost, _EventCurrencySymbol, _EventCurrencyCode,
	// _EventCurrencyPosition), which the route names in the edit context.
	currency map[int64]wpCurrency
	// editContext says the route was read in the edit context: then it
	// lists every event, ended hidden ones included. Outside it,
	// WordPress leaves out events that have ended.
	editContext bool
}

// wpEventIDs enumerates every event ID through WordPress's own
// /wp/v2/tribe_events route, which also lists events hidden from
// listings (the TEC lists never show them) and says which are
// password-protected. ok is false when the route is not reachable
// (another REST root, the route disabled, a refusal).
//
// Authenticated, the route is read in the edit context
// (context=edit), which lists every event (outside it WordPress leaves out
// events that have ended, so a hidden one that has ended would be found
// nowhere) and names the protected events' passwords. A user the source
// refuses the edit context (401 or 403 rest_forbidden_context) gets the
// plain route, and editContext says so.
func (c *client) wpEventIDs(ctx context.Context) (out wpEvents, ok bool, err error) {
	out.protected, out.passwords, out.statuses, out.currency = map[int64]bool{}, map[int64]string{}, map[int64]wpStatus{}, map[int64]wpCurrency{}
	if c.wpRoot == nil {
		return out, false, nil
	}
	out.editContext = c.authenticated()
	for page := 1; ; page++ {
		if c.caps.Pages > 0 && page > c.caps.Pages {
			return out, false, &CapError{Cap: CapPages, Limit: int64(c.caps.Pages), Where: "list wp/v2/tribe_events"}
		}
		q := url.Values{}
		q.Set("per_page", strconv.Itoa(wpPerPage))
		q.Set("page", strconv.Itoa(page))
		q.Set("_fields", "id,content.protected")
		if c.authenticated() {
			q.Set("status", allStatuses)
		}
		if out.editContext {
			q.Set("context", "edit")
			q.Set("_fields", "id,content.protected,password,meta")
		}
		res, err := c.get(ctx, c.wpRoot, "/tribe_events", q)
		if err != nil {
			return out, false, err
		}
		if out.editContext && page == 1 && (res.status == http.StatusUnauthorized || res.status == http.StatusForbidden) &&
			res.code() == "rest_forbidden_context" {
			out.editContext = false
			page = 0
			continue
		}
		if res.status == http.StatusBadRequest && page > 1 && res.code() == "rest_post_invalid_page_number" {
			break
		}
		if res.status != http.StatusOK {
			if page == 1 {
				return out, false, nil
			}
			return out, false, fmt.Errorf("list wp/v2/tribe_events page %d: %s", page, c.describe(res))
		}
		var items []struct {
			ID      int64 `json:"id"`
			Content struct {
				Protected bool `json:"protected"`
			} `json:"content"`
			Password string `json:"password"`
			// Meta is an object, or [] from WordPress when the post
			// type registers no meta (wpMeta).
			Meta json.RawMessage `json:"meta"`
		}
		if err := json.Unmarshal(res.body, &items); err != nil {
			if page == 1 {
				return out, false, nil
			}
			return out, false, fmt.Errorf("list wp/v2/tribe_events page %d: %v", page, err)
		}
		for _, it := range items {
			if it.ID > 0 {
				if err := c.hold(heldPerID); err != nil {
					return out, false, err
				}
				out.ids = append(out.ids, it.ID)
				if it.Content.Protected {
					out.protected[it.ID] = true
				}
				if cur, ok := wpCurrencyMeta(it.Meta); ok {
					if err := c.hold(heldPerID + int64(len(cur.cost)+len(cur.symbol)+len(cur.code)+len(cur.position))); err != nil {
						return out, false, err
					}
					out.currency[it.ID] = cur
				}
				if it.Password != "" && len(it.Password) <= maxEventPassword {
					out.passwords[it.ID] = it.Password
					c.redact.add(it.Password)
				}
				if st, ok := wpEventStatus(it.Meta); ok {
					out.statuses[it.ID] = st
				}
			}
		}
		pages, _ := strconv.Atoi(res.header.Get("X-WP-TotalPages"))
		if len(items) == 0 || (pages > 0 && page >= pages) {
			break
		}
	}
	return out, true, nil
}

// wpStatus is an event's status meta: _tribe_events_status and
// _tribe_events_status_reason as the source wrote them.
type wpStatus struct {
	status, reason string
}

// wpEventStatus reads the event-status meta of an item of WordPress's
// route. ok is false when the meta names neither a status nor a reason
// (no meta, [] or not an object, or both empty).
func wpEventStatus(raw json.RawMessage) (wpStatus, bool) {
	var meta struct {
		Status any `json:"_tribe_events_status"`
		Reason any `json:"_tribe_events_status_reason"`
	}
	if s := strings.TrimSpace(string(raw)); !strings.HasPrefix(s, "{") || json.Unmarshal(raw, &meta) != nil {
		return wpStatus{}, false
	}
	str := func(v any) string {
		if l, ok := v.([]any); ok && len(l) > 0 {
			v = l[0] // meta registered as not single: a list of values
		}
		s, _ := v.(string)
		return s
	}
	st := wpStatus{status: str(meta.Status), reason: str(meta.Reason)}
	return st, st.status != "" || st.reason != ""
}

// wpCurrency is an event's cost as written and its own currency, from
// WordPress's meta (empty: none of its own).
type wpCurrency struct{ cost, symbol, code, position string }

// wpEventMeta is the part of an event's meta (edit context) the import
// reads. A meta value is a string, or a list of strings for meta that is
// not single; anything else reads as absent.
type wpEventMeta struct {
	Cost     metaText `json:"_EventCost"`
	Symbol   metaText `json:"_EventCurrencySymbol"`
	Code     metaText `json:"_EventCurrencyCode"`
	Position metaText `json:"_EventCurrencyPosition"`
}

// wpCurrencyMeta reads the cost and currency meta of an item of
// WordPress's route; ok is false when the meta names none of them (no
// meta, [] or not an object, or a source that does not show them).
func wpCurrencyMeta(raw json.RawMessage) (wpCurrency, bool) {
	var m wpEventMeta
	if s := strings.TrimSpace(string(raw)); !strings.HasPrefix(s, "{") || json.Unmarshal(raw, &m) != nil {
		return wpCurrency{}, false
	}
	return m.currency()
}

// currency returns the meta's cost and currency; ok is false when the
// meta names none of them (a source that does not show them).
func (m wpEventMeta) currency() (wpCurrency, bool) {
	if !m.Cost.set && !m.Symbol.set && !m.Code.set && !m.Position.set {
		return wpCurrency{}, false
	}
	return wpCurrency{cost: m.Cost.v, symbol: m.Symbol.v, code: m.Code.v, position: m.Position.v}, true
}

// metaText is one meta value: a string, or the first of a list.
type metaText struct {
	v   string
	set bool
}

// UnmarshalJSON reads a string or a list of strings; anything else (or
// a value over the short-text limit) is absent.
func (t *metaText) UnmarshalJSON(b []byte) error {
	*t = metaText{}
	var s string
	if json.Unmarshal(b, &s) != nil {
		var l []string
		if json.Unmarshal(b, &l) != nil || len(l) == 0 {
			return nil
		}
		s = l[0]
	}
	if len(s) <= limits.MaxShortText {
		*t = metaText{v: s, set: true}
	}
	return nil
}

// decodeImage reads an image value: false, null, [] or an object.
func decodeImage(raw json.RawMessage) (*tecImage, error) {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "false" || s == "null" || s == "[]" || s == `""` {
		return nil, nil
	}
	var img tecImage
	if err := json.Unmarshal(raw, &img); err != nil {
		return nil, fmt.Errorf("not an image object: %v", err)
	}
	if img.ID <= 0 || img.URL == "" {
		return nil, nil
	}
	return &img, nil
}

// decodeLinks reads the venue or organizer value of an event: [] for
// none, one object, or a list of objects; it returns their IDs.
func decodeLinks(raw json.RawMessage) ([]int64, error) {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" || s == "[]" || s == "false" || s == `""` {
		return nil, nil
	}
	type ref struct {
		ID int64 `json:"id"`
	}
	var ids []int64
	if strings.HasPrefix(s, "[") {
		var refs []ref
		if err := json.Unmarshal(raw, &refs); err != nil {
			return nil, err
		}
		for _, r := range refs {
			if r.ID > 0 {
				ids = append(ids, r.ID)
			}
		}
		return ids, nil
	}
	var r ref
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, err
	}
	if r.ID > 0 {
		ids = append(ids, r.ID)
	}
	return ids, nil
}

// siteZone reads the site's time zone from WordPress's REST index
// (/wp-json/: timezone_string, else gmt_offset hours), nil when it is not
// reachable. Drafts carry "0000-00-00 00:00:00" as their UTC dates; their
// local dates are read in this zone.
func (c *client) siteZone(ctx context.Context) (*time.Location, error) {
	if c.wpRoot == nil {
		return nil, nil
	}
	index := *c.wpRoot
	index.Path = strings.TrimSuffix(index.Path, "/wp/v2")
	res, err := c.get(ctx, &index, "/", nil)
	if err != nil {
		return nil, err
	}
	if res.status != http.StatusOK {
		return nil, nil
	}
	var body struct {
		TimezoneString string          `json:"timezone_string"`
		GMTOffset      json.RawMessage `json:"gmt_offset"`
	}
	if json.Unmarshal(res.body, &body) != nil {
		return nil, nil
	}
	if body.TimezoneString != "" {
		if loc, err := time.LoadLocation(body.TimezoneString); err == nil {
			return loc, nil
		}
	}
	var off json.Number
	if json.Unmarshal(body.GMTOffset, &off) != nil {
		var s string
		if json.Unmarshal(body.GMTOffset, &s) != nil {
			return nil, nil
		}
		off = json.Number(s)
	}
	h, err := off.Float64()
	if err != nil || h < -14 || h > 14 {
		return nil, nil
	}
	return time.FixedZone(fmt.Sprintf("UTC%+g", h), int(h*3600)), nil
}
