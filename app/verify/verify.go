// Package verify compares two running eventcal services through their
// public API, record by record, as their readers see them: the check
// after moving a calendar from one store to another (an export loaded
// into MongoDB, a restore), or between a primary and its copy.
//
// For every reader (anonymous, and one per API token) and every language,
// Compare reads on both services every page of every list (events with
// every status the reader may see, each series once; venues;
// organizers; categories and tags, empty ones included), then every item
// either side's lists name: by ID, by slug (events, venues, organizers)
// and, for events, its iCalendar object and, for a series, every page of
// its occurrences. IDs no list names, up to the largest one listed, are
// read as events by ID too (up to Options.MaxProbes of them), so that
// events hidden from listings, and others a list leaves out, are compared
// as well. The namespace index is compared once. Not compared: the
// /events.ics feed and single occurrences by key (the per-event .ics and
// the occurrence lists carry the same records), the admin routes
// (webhooks, users, tokens, sources, backups) and anything a reader
// cannot see.
//
// Two answers are equal when their status, Content-Type, list totals
// (X-WP-Total, X-WP-TotalPages and the X-TEC- twins) and bodies are equal
// byte for byte. A difference names the item, the route, the reader, the
// language and the first differing JSON path with both values ("$.title:
// \"Fête\" at from, \"Fete\" at against"), the first differing line of an
// iCalendar body, or a status ("missing at against: status 200 at from,
// 404 at against (rest-event-not-found)").
//
// Bodies carry links built from SITE_URL, so two services compare equal
// only when they are configured with the same SITE_URL (and REST_ROOT,
// API_NAMESPACE, LANGUAGES, TIMEZONE and currency settings): compare the
// new service before it takes the old one's address, with the old one's
// settings.
//
// The work is bounded: pages of 50 items (the API's largest), a timeout
// on every request, a cap on every body, at most Concurrency requests in
// flight on each service, and network errors or overload answers (429,
// 502-504) asked again a few times before the comparison stops with an
// *UnreachableError.
package verify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/calendar/eventcal/repository"
)

// Service is one running service: its base URL (scheme://host:port, with
// the path of a reverse proxy's prefix if any) and the client to ask it
// with (nil: a client of Compare's own).
type Service struct {
	URL    string
	Client *http.Client
}

// Defaults of Options.
const (
	// DefaultRoot is the API root of the default settings (REST_ROOT
	// empty, API_NAMESPACE calendar/events/v1).
	DefaultRoot = "/calendar/events/v1"
	// DefaultMaxDifferences is how many differences a Report lists.
	DefaultMaxDifferences = 100
	// DefaultTimeout bounds one request.
	DefaultTimeout = 30 * time.Second
	// DefaultMaxBody caps one body (larger ones are reported, not
	// compared).
	DefaultMaxBody = 32 << 20
	// DefaultConcurrency is how many items are compared at once.
	DefaultConcurrency = 4
	// DefaultRetries is how many times a request is asked again after a
	// network error or an overload answer.
	DefaultRetries = 2
	// DefaultRetryPause is the pause before the first retry (then twice
	// it, ...), unless the answer's Retry-After says otherwise.
	DefaultRetryPause = 500 * time.Millisecond
	// DefaultMaxProbes bounds the IDs no list names that are read.
	DefaultMaxProbes = 100_000
)

// Options tell Compare how to read.
type Options struct {
	// Tokens are the API tokens to read as ("" = anonymous); each is one
	// reader. None: anonymous alone.
	Tokens []string
	// Languages to compare; nil: the languages the services announce
	// (those both announce; one announced by one side only is a
	// difference).
	Languages []string
	// Progress receives a line per reader and language compared (nil:
	// none).
	Progress io.Writer
	// MaxDifferences is how many differences the report lists at most
	// (the first ones in the order of the comparison); the count of the
	// others goes on in Report.More. 0: DefaultMaxDifferences.
	MaxDifferences int
	// Root is the API root path of both services (REST_ROOT +
	// "/" + API_NAMESPACE); "": DefaultRoot.
	Root string
	// Timeout bounds each request; 0: DefaultTimeout.
	Timeout time.Duration
	// MaxBody caps each body in bytes; 0: DefaultMaxBody.
	MaxBody int64
	// Concurrency is how many items are compared at once (each item asks
	// both services at the same time; the five lists of a view are read
	// side by side, a page at a time each); 0: DefaultConcurrency.
	Concurrency int
	// Retries is how many times a request is asked again after a network
	// error or a 429, 502, 503 or 504; 0: DefaultRetries, negative: none.
	Retries int
	// RetryPause is the pause before the first retry; 0:
	// DefaultRetryPause.
	RetryPause time.Duration
	// MaxProbes bounds, for each reader and language, how many IDs that
	// no list names are read as events by ID (to find events hidden from
	// listings): IDs imported from another system can be sparse, and
	// reading millions of them is not worth it. When more are missing
	// from the lists, none is read and Report.Notes says so. 0:
	// DefaultMaxProbes.
	MaxProbes int
}

// withDefaults returns o with its zero values replaced by the defaults.
func (o Options) withDefaults() Options {
	if o.MaxDifferences <= 0 {
		o.MaxDifferences = DefaultMaxDifferences
	}
	if o.Root == "" {
		o.Root = DefaultRoot
	}
	o.Root = "/" + strings.Trim(o.Root, "/")
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxBody <= 0 {
		o.MaxBody = DefaultMaxBody
	}
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultConcurrency
	}
	switch {
	case o.Retries == 0:
		o.Retries = DefaultRetries
	case o.Retries < 0:
		o.Retries = 0
	}
	if o.RetryPause <= 0 {
		o.RetryPause = DefaultRetryPause
	}
	if o.MaxProbes <= 0 {
		o.MaxProbes = DefaultMaxProbes
	}
	if len(o.Tokens) == 0 {
		o.Tokens = []string{""}
	}
	return o
}

// Difference is one answer that differs between the two services.
type Difference struct {
	// Item names what was compared: "event 12", "venue 3", "category 5",
	// "events list", "namespace index", "languages".
	Item string
	// Route is the request, path and query ("GET
	// /calendar/events/v1/events/12?multilang_language=fr").
	Route string
	// Reader is "anonymous" or "token <ID>" (the token's public ID, as
	// 'eventcal token list' shows it; never the token).
	Reader string
	// Language is the language asked for ("" for the namespace index).
	Language string
	// What says how the answers differ: the first differing JSON path
	// with both values, the first differing line of a text body, the
	// statuses, the Content-Type or a list total.
	What string
}

// String is the difference on one line.
func (d Difference) String() string {
	lang := d.Language
	if lang == "" {
		lang = "-"
	}
	return fmt.Sprintf("%s: %s (%s, %s): %s", d.Item, d.Route, d.Reader, lang, d.What)
}

// Report is the outcome of a comparison.
type Report struct {
	// Items is how many items (events, venues, organizers, categories,
	// tags) were compared, each counted once whatever the readers and
	// languages.
	Items int
	// Requests is how many requests were sent, on both services together
	// (retries included).
	Requests int
	// Differences are the first differences found, at most
	// Options.MaxDifferences, in the order of the comparison (reader,
	// language, lists, then items by kind and ID).
	Differences []Difference
	// More counts the differences found beyond those listed.
	More int
	// Notes are the caveats of the comparison: a reader the from service
	// refuses (a revoked or mistyped token), IDs not probed (MaxProbes).
	Notes []string
}

// Equal reports whether no difference was found.
func (r *Report) Equal() bool { return len(r.Differences) == 0 && r.More == 0 }

// Compare reads every list and item of from and against as every reader
// of opts, in every language, and reports where their answers differ. An
// error means the comparison could not be made or finish (a service
// unreachable or not this API: *UnreachableError; a language asked for
// that a service does not announce; ctx ended); differences are not
// errors.
func Compare(ctx context.Context, from, against Service, opts Options) (*Report, error) {
	opts = opts.withDefaults()
	c := &comparer{opts: opts, items: map[string]bool{}}
	var err error
	if c.from, err = newSide("from", from, opts); err != nil {
		return nil, err
	}
	if c.against, err = newSide("against", against, opts); err != nil {
		return nil, err
	}
	defer c.from.close()
	defer c.against.close()
	langs, err := c.languages(ctx)
	if err != nil {
		return nil, err
	}
	for ri, token := range opts.Tokens {
		for li, lang := range langs {
			v := view{index: ri*len(langs) + li, reader: readerName(token), token: token, lang: lang}
			before := c.differenceCount()
			listedText, err := c.compareView(ctx, v)
			if err != nil {
				return nil, err
			}
			c.progress("%s, %s: listed %s; %d differences (%d items, %d requests so far)",
				v.reader, v.lang, listedText, c.differenceCount()-before, c.itemCount(), c.requests.Load())
		}
	}
	rep := &Report{Items: c.itemCount(), Requests: int(c.requests.Load()), More: c.more, Notes: c.notes}
	for _, d := range c.diffs {
		rep.Differences = append(rep.Differences, d.Difference)
	}
	return rep, nil
}

// newSide checks a service's URL and gives it a client.
func newSide(name string, s Service, opts Options) (*side, error) {
	u, err := url.Parse(s.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("%s: %q is not a service's base URL (http(s)://host:port)", name, s.URL)
	}
	sd := &side{name: name, base: strings.TrimSuffix(s.URL, "/") + opts.Root, http: s.Client}
	if sd.http == nil {
		sd.own = &http.Transport{
			Proxy:               http.ProxyFromEnvironment,
			MaxIdleConnsPerHost: opts.Concurrency * 2,
			IdleConnTimeout:     90 * time.Second,
		}
		sd.http = &http.Client{Transport: sd.own}
	}
	return sd, nil
}

// readerName names a reader in a difference: never the token itself.
func readerName(token string) string {
	if token == "" {
		return "anonymous"
	}
	return "token " + (&repository.Token{Hash: repository.HashToken(token)}).ID()
}

// comparer is one comparison under way.
type comparer struct {
	opts          Options
	from, against *side
	requests      atomic.Int64

	mu    sync.Mutex
	notes []string
	diffs []ordered // the first differences, in order, at most MaxDifferences
	more  int
	found int
	items map[string]bool
}

// view is one reader in one language.
type view struct {
	index  int
	reader string
	token  string
	lang   string
}

// order places a difference in the comparison's order, whatever the
// order in which concurrent requests answered: view, group (0 the
// index, 1 lists, 2 items), the item's place and the request's place.
type order [4]int

// ordered is a difference with its place.
type ordered struct {
	Difference
	at order
}

// less orders two places.
func (o order) less(p order) bool {
	for i := range o {
		if o[i] != p[i] {
			return o[i] < p[i]
		}
	}
	return false
}

// differ records a difference, keeping the MaxDifferences first ones in
// the comparison's order and counting the rest.
func (c *comparer) differ(at order, d Difference) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.found++
	i := sort.Search(len(c.diffs), func(i int) bool { return at.less(c.diffs[i].at) })
	c.diffs = slices.Insert(c.diffs, i, ordered{d, at})
	if len(c.diffs) > c.opts.MaxDifferences {
		c.diffs = c.diffs[:c.opts.MaxDifferences]
		c.more++
	}
}

// differenceCount is how many differences were found so far.
func (c *comparer) differenceCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.found
}

// compared counts an item.
func (c *comparer) compared(item string) {
	c.mu.Lock()
	c.items[item] = true
	c.mu.Unlock()
}

// itemCount is how many items were compared.
func (c *comparer) itemCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.items)
}

// fetchBoth asks both services at once.
func (c *comparer) fetchBoth(ctx context.Context, path string, q url.Values, token string) (a, b *answer, err error) {
	var errB error
	done := make(chan struct{})
	go func() {
		defer close(done)
		b, errB = c.get(ctx, c.against, path, q, token)
	}()
	a, err = c.get(ctx, c.from, path, q, token)
	<-done
	if err != nil {
		return nil, nil, err
	}
	if errB != nil {
		return nil, nil, errB
	}
	return a, b, nil
}

// route writes a request as a difference names it.
func (c *comparer) route(path string, q url.Values) string {
	r := "GET " + c.opts.Root + path
	if len(q) > 0 {
		r += "?" + q.Encode()
	}
	return r
}

// check compares two answers to one request and records the first
// difference, if any. It reports whether they are equal.
func (c *comparer) check(at order, v view, item, path string, q url.Values, a, b *answer) bool {
	what := compareAnswers(a, b, c.opts.MaxBody)
	if what == "" {
		return true
	}
	c.differ(at, Difference{Item: item, Route: c.route(path, q), Reader: v.reader, Language: v.lang, What: what})
	return false
}

// compareAnswers returns how two answers differ, or "".
func compareAnswers(a, b *answer, maxBody int64) string {
	if a.status != b.status {
		what := fmt.Sprintf("status %d%s at from, %d%s at against", a.status, errorCode(a), b.status, errorCode(b))
		switch {
		case a.status == http.StatusOK:
			return "missing at against: " + what
		case b.status == http.StatusOK:
			return "missing at from: " + what
		}
		return what
	}
	if a.overCap || b.overCap {
		return fmt.Sprintf("a body over %d bytes (at %s): not compared", maxBody, map[bool]string{true: "from", false: "against"}[a.overCap])
	}
	if a.ctype != b.ctype {
		return fmt.Sprintf("Content-Type %q at from, %q at against", a.ctype, b.ctype)
	}
	if d := diffBodies(isJSON(a.ctype), a.body, b.body); d != "" {
		return d
	}
	for _, h := range comparedHeaders {
		if a.totals[h] != b.totals[h] {
			return fmt.Sprintf("header %s: %q at from, %q at against", h, a.totals[h], b.totals[h])
		}
	}
	return ""
}

// isJSON reports whether a Content-Type is JSON.
func isJSON(ctype string) bool {
	mt, _, _ := strings.Cut(ctype, ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// errorCode returns " (code)" for an error answer in the API's envelope,
// else "".
func errorCode(a *answer) string {
	if a.status < 400 || !isJSON(a.ctype) {
		return ""
	}
	n, err := parseJSON(a.body)
	if err != nil {
		return ""
	}
	if code := n.get("code").str(); code != "" {
		return " (" + code + ")"
	}
	return ""
}

// languages reads both namespace indexes, compares them, and returns the
// languages to compare.
func (c *comparer) languages(ctx context.Context) ([]string, error) {
	anon := view{reader: readerName("")}
	var a, b *answer
	var errA, errB error
	done := make(chan struct{})
	go func() {
		defer close(done)
		b, errB = c.getCapped(ctx, c.against, "", nil, "", indexCap)
	}()
	a, errA = c.getCapped(ctx, c.from, "", nil, "", indexCap)
	<-done
	if err := errors.Join(errA, errB); err != nil {
		return nil, err
	}
	la, err := c.announced(c.from, a)
	if err != nil {
		return nil, err
	}
	lb, err := c.announced(c.against, b)
	if err != nil {
		return nil, err
	}
	if what := compareAnswers(a, b, indexCap); what != "" {
		c.differ(order{-1, 0, 0, 0}, Difference{Item: "namespace index", Route: c.route("", nil), Reader: anon.reader, What: what})
	}
	if c.opts.Languages != nil {
		for _, l := range c.opts.Languages {
			for _, s := range []struct {
				side  *side
				langs []string
			}{{c.from, la}, {c.against, lb}} {
				if !slices.Contains(s.langs, l) {
					return nil, fmt.Errorf("language %q: the %s service does not serve it (it serves %s)", l, s.side.name, strings.Join(s.langs, ", "))
				}
			}
		}
		return c.opts.Languages, nil
	}
	var both []string
	for i, l := range la {
		if slices.Contains(lb, l) {
			both = append(both, l)
		} else {
			c.differ(order{-1, 0, 1, i}, Difference{Item: "languages", Route: c.route("", nil), Reader: anon.reader, Language: l,
				What: fmt.Sprintf("language %q served at from, not at against", l)})
		}
	}
	for i, l := range lb {
		if !slices.Contains(la, l) {
			c.differ(order{-1, 0, 2, i}, Difference{Item: "languages", Route: c.route("", nil), Reader: anon.reader, Language: l,
				What: fmt.Sprintf("language %q served at against, not at from", l)})
		}
	}
	if len(both) == 0 {
		return nil, fmt.Errorf("the services serve no language in common (from: %s; against: %s)", strings.Join(la, ", "), strings.Join(lb, ", "))
	}
	return both, nil
}

// indexCap caps the namespace index, which must be read whole (it is
// about 100 KiB).
const indexCap = 16 << 20

// announced returns the languages a namespace index declares (the enum
// of multilang_language on the index's own route), or an
// *UnreachableError when the answer is not this API's index.
func (c *comparer) announced(s *side, a *answer) ([]string, error) {
	notAPI := func(why string) error {
		return &UnreachableError{Side: s.name, URL: s.base, Err: fmt.Errorf("%w: %s (is the URL a service's base URL, and the API root %s?)", errNotAPI, why, c.opts.Root)}
	}
	if a.status != http.StatusOK || !isJSON(a.ctype) || a.overCap {
		return nil, notAPI(fmt.Sprintf("it answered %d %s (%d bytes)", a.status, a.ctype, len(a.body)))
	}
	n, err := parseJSON(a.body)
	if err != nil {
		return nil, notAPI(err.Error())
	}
	rt := n.get("routes").get(c.opts.Root)
	eps := rt.get("endpoints")
	if eps == nil || eps.kind != '[' || len(eps.vals) == 0 {
		return nil, notAPI("it lists no route " + c.opts.Root)
	}
	enum := eps.vals[0].get("args").get("multilang_language").get("enum")
	if enum == nil || enum.kind != '[' || len(enum.vals) == 0 {
		return nil, notAPI("it declares no languages")
	}
	var langs []string
	for _, l := range enum.vals {
		if s := l.str(); s != "" {
			langs = append(langs, s)
		}
	}
	return langs, nil
}

// statuses are the post statuses a signed-in reader lists: every one
// (the service leaves out what the reader may not read).
const statuses = "publish,future,draft,pending,private,trash"

// Bounds of the event and occurrence lists' window: the widest the API
// accepts whatever the services' TIMEZONE. The API reads a bound in that
// zone and refuses one outside the years limits.MinYear to
// limits.MaxYear there or in UTC (1000-01-01 00:00 in Europe/Paris is in
// the year 999 in UTC: the list answers 400), so a day is left at each
// end for zones up to 14 hours from UTC. Events of those two days are
// still compared by ID (the probe of IDs no list names).
const (
	windowStart = "1000-01-02 00:00:00"
	windowEnd   = "9999-12-30 23:59:59"
)

// perPage is the page size of every list: the API's largest.
const perPage = "50"

// listSpec is one list a view walks.
type listSpec struct {
	item, path, key string
	kind            string // the item kind of its entries: event, venue, ...
	query           func(v view) url.Values
}

// langQuery is the query of an item read: the language.
func langQuery(v view) url.Values {
	return url.Values{"multilang_language": {v.lang}}
}

// pageQuery is the query of a list: the language and pages of perPage.
func pageQuery(v view) url.Values {
	q := langQuery(v)
	q.Set("per_page", perPage)
	return q
}

// postListQuery is the query of a venue or organizer list.
func postListQuery(v view) url.Values {
	q := pageQuery(v)
	if v.token != "" {
		q.Set("status", statuses)
	}
	return q
}

// windowQuery is a query over every date.
func windowQuery(v view) url.Values {
	q := pageQuery(v)
	q.Set("start_date", windowStart)
	q.Set("end_date", windowEnd)
	return q
}

// eventListQuery is the query of the events list: every date, every
// status the reader may list, each series once (its occurrences are
// compared through its own list).
func eventListQuery(v view) url.Values {
	q := windowQuery(v)
	q.Set("hide_subsequent_recurrences", "true")
	if v.token != "" {
		q.Set("status", statuses)
	}
	return q
}

// termListQuery is the query of a category or tag list: empty terms too.
func termListQuery(v view) url.Values {
	q := pageQuery(v)
	q.Set("hide_empty", "false")
	return q
}

// lists are the lists every view walks, in the comparison's order.
var lists = []listSpec{
	{"events list", "/events", "events", "event", eventListQuery},
	{"venues list", "/venues", "venues", "venue", postListQuery},
	{"organizers list", "/organizers", "organizers", "organizer", postListQuery},
	{"categories list", "/categories", "categories", "category", termListQuery},
	{"tags list", "/tags", "tags", "tag", termListQuery},
}

// listed is an item a list names, on either side.
type listed struct {
	id     int64
	slugs  []string
	series bool
}

// note adds what one list entry says about its item.
func (l *listed) note(entry *node) {
	if s := entry.get("slug").str(); s != "" && !slices.Contains(l.slugs, s) {
		l.slugs = append(l.slugs, s)
	}
	if r := entry.get("recurrence"); r != nil && r.text != "null" {
		l.series = true
	}
}

// maxPages bounds the pages of one list (a total_pages beyond it is not
// followed): 50 million items.
const maxPages = 1_000_000

// walkList compares every page of one list and adds the items the pages
// of either side name to into, by ID. at is the list's place; its pages
// are numbered from at[3]. It returns the from service's answer to the
// first page.
func (c *comparer) walkList(ctx context.Context, v view, at order, item, path, key string, q url.Values, into map[int64]*listed) (*answer, error) {
	var first *answer
	for page := 1; ; page++ {
		q.Set("page", strconv.Itoa(page))
		a, b, err := c.fetchBoth(ctx, path, q, v.token)
		if err != nil {
			return nil, err
		}
		if page == 1 {
			first = a
			if a.status == http.StatusBadRequest && b.status == http.StatusBadRequest {
				return nil, fmt.Errorf("both services refuse the %s query %s: %d%s (is one of them another version of the API?)", item, c.route(path, q), a.status, errorCode(a))
			}
		}
		pat := at
		pat[3] += page
		c.check(pat, v, item, path, q, a, b)
		pages := max(collect(a, key, into), collect(b, key, into))
		if page >= pages || page >= maxPages {
			return first, nil
		}
	}
}

// collect adds the items of one page of a list to into and returns the
// list's total_pages (0 when the answer is not a list).
func collect(a *answer, key string, into map[int64]*listed) int {
	if a.status != http.StatusOK || !isJSON(a.ctype) || a.overCap {
		return 0
	}
	n, err := parseJSON(a.body)
	if err != nil {
		return 0
	}
	if entries := n.get(key); entries != nil && entries.kind == '[' {
		for _, e := range entries.vals {
			id := e.get("id").int()
			if id <= 0 {
				continue
			}
			l := into[id]
			if l == nil {
				l = &listed{id: id}
				into[id] = l
			}
			l.note(e)
		}
	}
	return int(min(n.get("total_pages").int(), maxPages))
}

// compareView compares everything one reader sees in one language. It
// returns what the lists named ("57 events, 1 venues, ...").
func (c *comparer) compareView(ctx context.Context, v view) (string, error) {
	found := make([]map[int64]*listed, len(lists))
	firsts := make([]*answer, len(lists))
	errs := make([]error, len(lists))
	var wg sync.WaitGroup
	for i, l := range lists {
		found[i] = map[int64]*listed{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			firsts[i], errs[i] = c.walkList(ctx, v, order{v.index, 1, i, 0}, l.item, l.path, l.key, l.query(v), found[i])
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return "", err
	}
	var named []string
	for i, l := range lists {
		named = append(named, fmt.Sprintf("%d %s", len(found[i]), l.key))
	}
	if a := firsts[0]; a.status == http.StatusUnauthorized || a.status == http.StatusForbidden {
		c.note(fmt.Sprintf("%s, %s: the from service refuses this reader, %d%s; only the refusals are compared", v.reader, v.lang, a.status, errorCode(a)))
	}

	// The items, in order: events (listed, and the IDs no post list
	// names, probed), venues, organizers, categories, tags.
	var tasks []func(ctx context.Context, at order) error
	maxID, posts := int64(0), map[int64]bool{}
	for i := range 3 {
		for id := range found[i] {
			posts[id] = true
			maxID = max(maxID, id)
		}
	}
	events := found[0]
	probe := maxID-int64(len(posts)) <= int64(c.opts.MaxProbes)
	if !probe {
		c.note(fmt.Sprintf("%s, %s: %d IDs up to %d are named by no list, more than MaxProbes (%d): they were not read, "+
			"so events hidden from listings were not compared", v.reader, v.lang, maxID-int64(len(posts)), maxID, c.opts.MaxProbes))
	}
	for id := int64(1); id <= maxID; id++ {
		if l := events[id]; l != nil {
			tasks = append(tasks, func(ctx context.Context, at order) error { return c.compareEvent(ctx, v, at, l, false) })
		} else if !posts[id] && probe {
			l := &listed{id: id}
			tasks = append(tasks, func(ctx context.Context, at order) error { return c.compareEvent(ctx, v, at, l, true) })
		}
	}
	for i := 1; i < len(lists); i++ {
		spec := lists[i]
		for _, id := range sortedIDs(found[i]) {
			l := found[i][id]
			tasks = append(tasks, func(ctx context.Context, at order) error { return c.compareItem(ctx, v, at, spec, l) })
		}
	}
	return strings.Join(named, ", "), c.run(ctx, v, tasks)
}

// progressEvery is how often (in items) a view's progress is written.
const progressEvery = 1000

// progress writes one line to Options.Progress, if any.
func (c *comparer) progress(format string, args ...any) {
	if c.opts.Progress == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	fmt.Fprintf(c.opts.Progress, format+"\n", args...)
}

// note records a caveat of the comparison (Report.Notes) and writes it
// to the progress.
func (c *comparer) note(s string) {
	c.mu.Lock()
	c.notes = append(c.notes, s)
	c.mu.Unlock()
	c.progress("note: %s", s)
}

// sortedIDs returns a list's IDs in order.
func sortedIDs(m map[int64]*listed) []int64 {
	ids := make([]int64, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// run runs the item tasks of a view, Concurrency at a time, and returns
// the first error (which stops the others).
func (c *comparer) run(ctx context.Context, v view, tasks []func(ctx context.Context, at order) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan int)
	var wg sync.WaitGroup
	var done atomic.Int64
	for range min(c.opts.Concurrency, max(len(tasks), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := tasks[i](ctx, order{v.index, 2, i, 0}); err != nil {
					cancel(err)
				}
				if n := done.Add(1); n%progressEvery == 0 {
					c.progress("%s, %s: %d of %d items read (%d requests so far)", v.reader, v.lang, n, len(tasks), c.requests.Load())
				}
			}
		}()
	}
feed:
	for i := range tasks {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return err
	}
	return nil
}

// compareEvent compares one event: by ID, by each slug either side's
// list (or read) shows, as iCalendar, and a series' occurrences. With
// probe the event is an ID no list named: it is compared only when one
// side answers it.
func (c *comparer) compareEvent(ctx context.Context, v view, at order, l *listed, probe bool) error {
	item := fmt.Sprintf("event %d", l.id)
	path := fmt.Sprintf("/events/%d", l.id)
	q := langQuery(v)
	a, b, err := c.fetchBoth(ctx, path, q, v.token)
	if err != nil {
		return err
	}
	if probe {
		if a.status != http.StatusOK && b.status != http.StatusOK && a.status == b.status {
			return nil // neither side has an event there for this reader
		}
		for _, ans := range []*answer{a, b} {
			if ans.status == http.StatusOK && isJSON(ans.ctype) {
				if n, err := parseJSON(ans.body); err == nil {
					l.note(n)
				}
			}
		}
	}
	c.compared(fmt.Sprintf("event %d", l.id))
	c.check(at, v, item, path, q, a, b)
	return c.compareRest(ctx, v, at, item, "/events", l, true)
}

// compareItem compares one venue, organizer, category or tag: by ID,
// and by each slug for venues and organizers.
func (c *comparer) compareItem(ctx context.Context, v view, at order, spec listSpec, l *listed) error {
	item := fmt.Sprintf("%s %d", spec.kind, l.id)
	c.compared(item)
	path := fmt.Sprintf("%s/%d", spec.path, l.id)
	q := langQuery(v)
	a, b, err := c.fetchBoth(ctx, path, q, v.token)
	if err != nil {
		return err
	}
	c.check(at, v, item, path, q, a, b)
	if spec.kind == "category" || spec.kind == "tag" {
		return nil // terms have no by-slug route
	}
	return c.compareRest(ctx, v, at, item, spec.path, l, false)
}

// compareRest compares an item's reads after the one by ID: by slug,
// and for an event its iCalendar object and a series' occurrences.
func (c *comparer) compareRest(ctx context.Context, v view, at order, item, collection string, l *listed, event bool) error {
	q := langQuery(v)
	step := 1
	// compare reads path on both sides and compares the answers as the
	// next step of the item.
	compare := func(path string) error {
		a, b, err := c.fetchBoth(ctx, path, q, v.token)
		if err != nil {
			return err
		}
		at[3] = step
		step++
		c.check(at, v, item, path, q, a, b)
		return nil
	}
	for _, slug := range l.slugs {
		if err := compare(collection + "/by-slug/" + url.PathEscape(slug)); err != nil {
			return err
		}
	}
	if !event {
		return nil
	}
	if err := compare(fmt.Sprintf("/events/%d.ics", l.id)); err != nil {
		return err
	}
	if !l.series {
		return nil
	}
	at[3] = step
	_, err := c.walkList(ctx, v, at, item, fmt.Sprintf("/events/%d/occurrences", l.id), "events", windowQuery(v), map[int64]*listed{})
	return err
}
