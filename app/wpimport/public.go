package wpimport

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/calendar/eventcal/app/input/values"
	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/repository"
)

// PublicOptions configure ReadPublic.
type PublicOptions struct {
	// Source is the site's address (https://example.org), its REST root
	// (https://example.org/wp-json) or The Events Calendar's namespace
	// root (https://example.org/wp-json/tribe/events/v1) or a route under
	// it (.../tribe/events/v1/events, read as the root); the first two
	// are resolved as Run resolves them (the site's Link header, the
	// page's <link rel="https://api.w.org/">, else /wp-json).
	Source string
	// Language is the language code the mapped text is set in (""
	// is "en").
	Language string
	// HTTPClient sends the requests (nil: a client with Timeout that
	// follows redirects only within the source's origin).
	HTTPClient *http.Client
	// Rate, Retries, RetryBase and Timeout are Options' (0: the same
	// defaults).
	Rate      float64
	Retries   int
	RetryBase time.Duration
	Timeout   time.Duration
	// Caps bound the read: Pages (of the events list), Requests, Bytes,
	// Response and Events apply; zero fields take their defaults.
	Caps Caps
	// Logger receives retries (nil: discarded).
	Logger *slog.Logger
	// UserAgent is the User-Agent of every request ("": HTTPClient's own
	// when given, else eventcal-sources/<version>).
	UserAgent string
	// Permanent reports a transport error (HTTPClient's: an address its
	// rules refuse, a body past its bound) that a retry cannot mend: the
	// read stops at once with it (nil: every transport error is retried).
	Permanent func(error) bool
}

// CapEvents is Caps.Events, as CapError.Cap names it.
const CapEvents = "events"

// Snapshot is what a site running The Events Calendar shows an anonymous
// visitor: its upcoming published events, each mapped by the import's
// rules (Run's), with the venues, organizers, categories and tags the
// events embed. Nothing in it is claimed or checked against a store: the
// records keep the source's IDs only to tell them apart.
type Snapshot struct {
	// Root is the TEC namespace root read.
	Root string
	// Announced is the total the list's first page announced (-1: none).
	Announced int
	// Events are the events in the list's order (by start), each once.
	Events []PublicEvent
	// Venues and Organizers are the embedded venues and organizers, by
	// the source's ID (the events' Venues and Organizers name them).
	Venues, Organizers map[int64]*repository.Record
	// Categories and Tags are the embedded terms, by the source's ID.
	Categories, Tags map[int64]*repository.Label
	// Failed are the records that could not be mapped (an event that
	// failed is not in Events; a venue, organizer or term that failed is
	// not linked).
	Failed []Failure
	// Requests and BytesRead count the read's requests and body bytes.
	Requests  int
	BytesRead int64
}

// PublicEvent is one event of a Snapshot.
type PublicEvent struct {
	// Record is the event as Run maps it (Record.ID is the source's ID;
	// Title plain text, Content the description through the API's HTML
	// policy; Event's dates, time zone, all-day, cost, website, and the
	// source IDs of its categories, tags, venues and organizers).
	Record *repository.Record
	// Link is the event's page at the source (its permalink, "url"), ""
	// when not an http(s) URL.
	Link string
	// Cost is the cost as the source shows it ("$5 – $15", "€12",
	// "Free"), plain text; "" for none.
	Cost string
	// Image is the URL of the event's featured image ("" for none).
	Image string
}

// ReadPublic reads the events a site running The Events Calendar lists
// for an anonymous visitor: the events list in the source's default
// window (upcoming events, as the site's own list shows them), every page
// the list announces, up to the caps; nothing is sent but anonymous
// GETs. The client, retries with backoff, rate limit, caps, per-response
// bound, root discovery and the redaction of the source's error text are
// Run's; so is the mapping of each record (titles and names plain text,
// descriptions through the API's HTML policy, contact fields, image URL
// and time zone checked), except that venue coordinates (geo_lat,
// geo_lng, which Events Calendar Pro adds) are kept.
//
// A source that is not a site running The Events Calendar (no REST API,
// no tribe/events/v1 namespace, a list that is not one) gives an error
// for which errors.Is(err, ErrNotTEC) holds; a read past a cap a
// *CapError; a failed request (after its retries) the status or
// transport error, with the transport's error in its chain (errors.As).
func ReadPublic(ctx context.Context, opts PublicOptions) (*Snapshot, error) {
	root, err := parsePublicURL(opts.Source)
	if err != nil {
		return nil, err
	}
	lang := opts.Language
	if lang == "" {
		lang = "en"
	}
	caps := opts.Caps.withDefaults()
	c := newClient(root, caps, sending{http: opts.HTTPClient, rate: opts.Rate, retries: opts.Retries,
		retryBase: opts.RetryBase, timeout: opts.Timeout, logger: opts.Logger})
	c.redact, c.public, c.maxBody, c.urlName = newRedactor("", ""), true, caps.Response, "the source URL"
	c.userAgent, c.clientAgent, c.permanent = opts.UserAgent, opts.UserAgent == "" && opts.HTTPClient != nil, opts.Permanent
	if opts.HTTPClient == nil && c.userAgent == "" {
		c.userAgent = config.UserAgent("sources")
	}
	snap := &Snapshot{Announced: -1, Venues: map[int64]*repository.Record{}, Organizers: map[int64]*repository.Record{},
		Categories: map[int64]*repository.Label{}, Tags: map[int64]*repository.Label{}}
	defer func() { snap.Requests, snap.BytesRead = c.requests, c.bytes }()
	if !strings.HasSuffix(root.Path, "/"+tecNamespace) {
		found, err := c.discoverRoot(ctx, root)
		if err != nil {
			return nil, err
		}
		root, c.root = found, found
	}
	snap.Root = root.String()
	m := &mapper{site: snap.Root, lang: lang, geo: true, images: map[int64]*tecImage{}}
	_, announced, err := c.fetchList(ctx, listEvents, nil, func(id int64, raw json.RawMessage) error {
		if caps.Events > 0 && len(snap.Events)+len(snap.Failed) >= caps.Events {
			return &CapError{Cap: CapEvents, Limit: int64(caps.Events), Where: "the events of the list"}
		}
		snap.take(m, c, id, raw)
		return nil
	})
	snap.Announced = announced
	if err != nil {
		return nil, err
	}
	return snap, nil
}

// take maps one event of the list and the records it embeds.
func (s *Snapshot) take(m *mapper, c *client, id int64, raw json.RawMessage) {
	fail := func(kind string, id int64, err error) {
		f := Failure{Kind: kind, ID: id, Reason: c.redact.text(err.Error())}
		var fe *fieldError
		if errors.As(err, &fe) {
			f.Field, f.Reason = fe.field, c.redact.text(fe.problem)
		}
		s.Failed = append(s.Failed, f)
	}
	p, err := m.event(raw)
	if err == nil && id > 0 && p.ID != id {
		err = fieldErr("id", "the list item %d holds record %d", id, p.ID)
	}
	if err != nil {
		fail(KindEvent, id, err)
		return
	}
	var src struct {
		URL        string            `json:"url"`
		Cost       string            `json:"cost"`
		Categories []json.RawMessage `json:"categories"`
		Tags       []json.RawMessage `json:"tags"`
		Venue      json.RawMessage   `json:"venue"`
		Organizer  json.RawMessage   `json:"organizer"`
		Image      json.RawMessage   `json:"image"`
	}
	_ = json.Unmarshal(raw, &src) // m.event read the same fields
	ev := PublicEvent{Record: p, Cost: plainText(decodeText(src.Cost))}
	if u := strings.TrimSpace(src.URL); values.WebURL(u) {
		ev.Link = u
	}
	if img, _ := decodeImage(src.Image); img != nil && checkImage(img) == nil {
		ev.Image = img.URL
	}
	e := p.Event
	// The links m.event read, kept only when the embedded record maps.
	keepTerms := func(list []json.RawMessage, tax repository.LabelKind, into map[int64]*repository.Label) []int64 {
		out := []int64{}
		for _, t := range list {
			l, err := m.term(tax, t)
			if err != nil {
				var head struct {
					ID int64 `json:"id"`
				}
				_ = json.Unmarshal(t, &head)
				fail(string(tax), head.ID, err)
				continue
			}
			if _, ok := into[l.ID]; !ok {
				into[l.ID] = l
			}
			out = append(out, l.ID)
		}
		return out
	}
	e.Categories = keepTerms(src.Categories, repository.LabelCategory, s.Categories)
	e.Tags = keepTerms(src.Tags, repository.LabelTag, s.Tags)
	keepPosts := func(raw json.RawMessage, kind string, mapf func(json.RawMessage) (*repository.Record, error), into map[int64]*repository.Record) []int64 {
		out := []int64{}
		for _, r := range embedded(raw) {
			rec, err := mapf(r)
			if err != nil {
				var head struct {
					ID int64 `json:"id"`
				}
				_ = json.Unmarshal(r, &head)
				fail(kind, head.ID, err)
				continue
			}
			if _, ok := into[rec.ID]; !ok {
				into[rec.ID] = rec
			}
			out = append(out, rec.ID)
		}
		return out
	}
	e.Venues = keepPosts(src.Venue, KindVenue, m.venue, s.Venues)
	e.Organizers = keepPosts(src.Organizer, KindOrganizer, m.organizer, s.Organizers)
	s.Events = append(s.Events, ev)
}

// embedded reads an event's venue or organizer value: [] (or null, false,
// "") for none, one object, or a list of objects.
func embedded(raw json.RawMessage) []json.RawMessage {
	s := strings.TrimSpace(string(raw))
	switch {
	case s == "" || s == "null" || s == "[]" || s == "false" || s == `""`:
		return nil
	case strings.HasPrefix(s, "["):
		var list []json.RawMessage
		if json.Unmarshal(raw, &list) != nil {
			return nil
		}
		return list
	case strings.HasPrefix(s, "{"):
		return []json.RawMessage{raw}
	}
	return nil
}

// ErrSourceURL is the cause (errors.Is) of ReadPublic's refusal of its
// Source.
var ErrSourceURL = errors.New("not a source URL")

// parsePublicURL checks a source's URL for ReadPublic: http or https, a
// host, no user information, no query or fragment. It returns the URL
// without a trailing slash.
func parsePublicURL(raw string) (*url.URL, error) {
	raw = strings.TrimSpace(raw)
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &causeError{msg: "the source URL must be an http(s) URL of a site running The Events Calendar, such as https://example.org or " + fromExample, cause: ErrSourceURL}
	}
	if u.User != nil {
		return nil, &causeError{msg: "the source URL must not hold credentials: a source is read anonymously", cause: ErrSourceURL}
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, &causeError{msg: "the source URL must have no query or fragment, such as https://example.org or " + fromExample, cause: ErrSourceURL}
	}
	u.Path = strings.TrimRight(u.Path, "/")
	// A route under the namespace (.../tribe/events/v1/events) names
	// the namespace root.
	if i := strings.Index(u.Path, "/"+tecNamespace+"/"); i >= 0 {
		u.Path = u.Path[:i+len(tecNamespace)+1]
	}
	u.RawPath = ""
	return u, nil
}
