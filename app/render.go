package app

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	gosync "sync"
	"time"
	"unicode"

	"github.com/gofiber/fiber/v2"

	"github.com/calendar/eventcal/repository"
)

// sendJSON writes v with the status, without HTML escaping (text comes back
// as stored, decisions.md "Reads").
//
// WordPress's global parameters apply to every response (reference 2.9):
// _fields keeps only the listed (comma-separated, dotted) fields of the
// object, and _envelope wraps the response as {body, status, headers} with
// HTTP 200. _jsonp is not supported (JSONP defeats CORS).
func sendJSON(c *fiber.Ctx, status int, v any) error {
	args := c.Request().URI().QueryArgs()
	if fields := string(args.Peek("_fields")); fields != "" {
		if o, ok := v.(*obj); ok {
			v = pickFields(o, strings.Split(fields, ","))
		}
	}
	if args.Has("_envelope") {
		headers := newObj()
		for _, h := range []string{"X-TEC-Total", "X-TEC-TotalPages", "X-WP-Total", "X-WP-TotalPages", "Location"} {
			if val := c.GetRespHeader(h); val != "" {
				headers.set(h, val)
			}
		}
		v = newObj().set("body", v).set("status", status).set("headers", headers)
		status = fiber.StatusOK
	}
	buf := jsonBuffers.Get().(*bytes.Buffer)
	defer putJSONBuffer(buf)
	if err := writeJSON(buf, v); err != nil {
		return err
	}
	c.Status(status)
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSONCharsetUTF8)
	// SetBody copies: the buffer goes back to the pool.
	c.Response().SetBody(buf.Bytes())
	return nil
}

// jsonBuffers holds the buffers sendJSON encodes into, so that a list
// page is not encoded into a buffer grown from nothing on every request.
var jsonBuffers = gosync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledJSONBuffer is the largest buffer kept in jsonBuffers.
const maxPooledJSONBuffer = 1 << 20

// putJSONBuffer empties a buffer and returns it to the pool (unless it
// grew past maxPooledJSONBuffer).
func putJSONBuffer(buf *bytes.Buffer) {
	if buf.Cap() > maxPooledJSONBuffer {
		return
	}
	buf.Reset()
	jsonBuffers.Put(buf)
}

// pickFields keeps the listed fields of o; "a.b" keeps b inside a. Lists
// of objects are filtered item by item, as WordPress does for collections.
func pickFields(o *obj, fields []string) *obj {
	want := map[string][]string{}
	for _, f := range fields {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		top, rest, _ := strings.Cut(f, ".")
		if rest != "" {
			want[top] = append(want[top], rest)
		} else {
			want[top] = append(want[top], "")
		}
	}
	out := newObj()
	for i, k := range o.keys {
		subs, ok := want[k]
		if !ok {
			continue
		}
		out.set(k, pickNested(o.vals[i], subs))
	}
	return out
}

// pickNested applies nested field paths to a value (whole value when one
// of them is empty).
func pickNested(v any, subs []string) any {
	if contains(subs, "") {
		return v
	}
	switch x := v.(type) {
	case *obj:
		return pickFields(x, subs)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = pickNested(e, subs)
		}
		return out
	}
	return v
}

// view says how an item is rendered.
type view struct {
	lang string
	// single adds json_ld (single-item reads); lists and writes leave it out.
	single bool
}

// linked holds what rendering a set of posts needs besides the posts.
type linked struct {
	posts  map[int64]*repository.Post
	terms  map[int64]*repository.Term
	counts map[repository.Taxonomy]map[int64]int
}

// fetchLinked fetches the venues, organizers, images and terms of posts,
// whatever their status. Renderers never call it: they get what a reader
// may see from linkedFor (linkrules.go), the one place that decides it.
func (s *Server) fetchLinked(ctx context.Context, posts []*repository.Post) (*linked, error) {
	var postIDs, termIDs []int64
	for _, p := range posts {
		if p.ImageID != 0 {
			postIDs = append(postIDs, p.ImageID)
		}
		if e := p.Event; e != nil {
			postIDs = append(postIDs, e.Venues...)
			postIDs = append(postIDs, e.Organizers...)
			termIDs = append(termIDs, e.Categories...)
			termIDs = append(termIDs, e.Tags...)
		}
	}
	l := &linked{posts: map[int64]*repository.Post{}, terms: map[int64]*repository.Term{}, counts: map[repository.Taxonomy]map[int64]int{}}
	if len(postIDs) > 0 {
		m, err := s.linkedPosts(ctx, postIDs)
		if err != nil {
			return nil, err
		}
		l.posts = m
		// images of linked venues and organizers
		var more []int64
		for _, p := range m {
			if p.ImageID != 0 && m[p.ImageID] == nil {
				more = append(more, p.ImageID)
			}
		}
		if len(more) > 0 {
			imgs, err := s.linkedPosts(ctx, more)
			if err != nil {
				return nil, err
			}
			for id, p := range imgs {
				l.posts[id] = p
			}
		}
	}
	if len(termIDs) > 0 {
		m, err := s.linkedTerms(ctx, termIDs)
		if err != nil {
			return nil, err
		}
		l.terms = m
		counts, err := s.counts.forTerms(ctx, s.store, m)
		if err != nil {
			return nil, err
		}
		for id, n := range counts {
			tax := m[id].Taxonomy
			if l.counts[tax] == nil {
				l.counts[tax] = map[int64]int{}
			}
			l.counts[tax][id] = n
		}
	}
	return l, nil
}

// termCountCache keeps term counts (published events per term) for a
// moment. Rendering an event needs the counts of its few terms: those are
// counted one by one (an indexed count) and kept for countTTL; a write
// drops the entries of the terms it touched, so a local reader sees its own
// writes at once and other replicas' writes show within countTTL. Term lists
// need every count of a taxonomy: those maps are cached the same way.
type termCountCache struct {
	// ttl is how long a count is reused (0: countTTL; negative: never).
	ttl time.Duration
	// loading serialises grouped counts (get).
	loading gosync.Mutex
	mu      gosync.Mutex
	terms   map[int64]countEntry
	all     map[repository.Taxonomy]countAll
	version int64
}

type countEntry struct {
	n  int
	at time.Time
}

type countAll struct {
	m  map[int64]int
	at time.Time
}

const countTTL = 2 * time.Second

// fewCounts is how many expired term counts are counted one by one; more
// are read from one grouped count per taxonomy (TermCounts).
const fewCounts = 3

// fresh reports whether a count taken at at may still be used.
func (c *termCountCache) fresh(at time.Time) bool {
	ttl := c.ttl
	if ttl == 0 {
		ttl = countTTL
	}
	return time.Since(at) < ttl
}

// get returns every count of a taxonomy (for term lists).
func (c *termCountCache) get(ctx context.Context, st repository.Store, tax repository.Taxonomy) (map[int64]int, error) {
	c.mu.Lock()
	if a, ok := c.all[tax]; ok && c.fresh(a.at) {
		c.mu.Unlock()
		return a.m, nil
	}
	c.mu.Unlock()
	// One grouped count at a time: concurrent renders that found the map
	// expired wait for the first one's result instead of each counting.
	c.loading.Lock()
	defer c.loading.Unlock()
	c.mu.Lock()
	if a, ok := c.all[tax]; ok && c.fresh(a.at) {
		c.mu.Unlock()
		return a.m, nil
	}
	v := c.version
	c.mu.Unlock()
	m, err := st.TermCounts(ctx, tax)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.version == v {
		if c.all == nil {
			c.all = map[repository.Taxonomy]countAll{}
		}
		c.all[tax] = countAll{m: m, at: time.Now()}
	}
	c.mu.Unlock()
	return m, nil
}

// forTerms returns the counts of the given terms.
func (c *termCountCache) forTerms(ctx context.Context, st repository.Store, terms map[int64]*repository.Term) (map[int64]int, error) {
	out := make(map[int64]int, len(terms))
	var missing []*repository.Term
	c.mu.Lock()
	v := c.version
	for id, t := range terms {
		if e, ok := c.terms[id]; ok && c.fresh(e.at) {
			out[id] = e.n
			continue
		}
		if a, ok := c.all[t.Taxonomy]; ok && c.fresh(a.at) {
			out[id] = a.m[id] // a fresh grouped count (get) has it
			continue
		}
		missing = append(missing, t)
	}
	c.mu.Unlock()
	fresh := map[int64]int{}
	if tc, ok := st.(repository.TermEventCounter); ok && len(missing) > 0 {
		// One query for every missing count, few or many (MongoDB: one
		// command per render, README "MongoDB").
		ids := make([]int64, len(missing))
		for i, t := range missing {
			ids[i] = t.ID
		}
		m, err := tc.CountTermEvents(ctx, ids)
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			out[id], fresh[id] = m[id], m[id]
		}
		missing = nil
	}
	if len(missing) > fewCounts {
		// Many counts expired at once (a page of events after countTTL):
		// one grouped count per taxonomy instead of one count per term.
		byTax := map[repository.Taxonomy]map[int64]int{}
		for _, t := range missing {
			all, ok := byTax[t.Taxonomy]
			if !ok {
				var err error
				if all, err = c.get(ctx, st, t.Taxonomy); err != nil {
					return nil, err
				}
				byTax[t.Taxonomy] = all
			}
			out[t.ID], fresh[t.ID] = all[t.ID], all[t.ID]
		}
		missing = nil
	}
	for _, t := range missing {
		q := repository.PostQuery{Kind: repository.KindEvent, Statuses: []string{repository.StatusPublish}}
		if t.Taxonomy == repository.TaxCategory {
			q.CategoryIDs = []int64{t.ID}
		} else {
			q.TagIDs = []int64{t.ID}
		}
		n, err := st.CountPosts(ctx, q)
		if err != nil {
			return nil, err
		}
		out[t.ID], fresh[t.ID] = n, n
	}
	if len(fresh) > 0 {
		c.mu.Lock()
		if c.version == v {
			if c.terms == nil {
				c.terms = map[int64]countEntry{}
			}
			now := time.Now()
			for id, n := range fresh {
				c.terms[id] = countEntry{n: n, at: now}
			}
		}
		c.mu.Unlock()
	}
	return out, nil
}

// invalidate drops cached counts after a write: those of the given terms
// (and the per-taxonomy maps), or everything when no term is given.
func (c *termCountCache) invalidate(termIDs ...int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.version++
	c.all = nil
	if len(termIDs) == 0 {
		c.terms = nil
		return
	}
	for _, id := range termIDs {
		delete(c.terms, id)
	}
}

// eventTerms lists the terms of the events among posts (nil ones skipped),
// for invalidating their counts.
func eventTerms(posts ...*repository.Post) []int64 {
	var ids []int64
	for _, p := range posts {
		if p != nil && p.Event != nil {
			ids = append(ids, p.Event.Categories...)
			ids = append(ids, p.Event.Tags...)
		}
	}
	return ids
}

// apiBase is the absolute API root for links, with the language prefix
// when the language is not the default one.
func (s *Server) apiBase(lang string) string {
	prefix := ""
	if lang != "" && lang != s.cfg.DefaultLanguage {
		prefix = "/" + lang
	}
	return s.cfg.SiteURL + prefix + s.cfg.APIRoot()
}

// siteBase is the site URL for permalinks, with the language prefix.
func (s *Server) siteBase(lang string) string {
	if lang != "" && lang != s.cfg.DefaultLanguage {
		return s.cfg.SiteURL + "/" + lang
	}
	return s.cfg.SiteURL
}

// textLang returns the language a record's text is shown in: the requested
// one when the record has a translation in it, else the default language,
// else the record's first language (repository.Text.Get's fallback).
func (s *Server) textLang(primary repository.Text, lang string) string {
	switch {
	case primary.Has(lang):
		return lang
	case primary.Has(s.cfg.DefaultLanguage):
		return s.cfg.DefaultLanguage
	}
	if first := primary.First(s.cfg.Languages...); first != "" {
		return first
	}
	return s.cfg.DefaultLanguage
}

// translations lists the languages a record has text in, in LANGUAGES order.
func (s *Server) translations(texts ...repository.Text) []string {
	out := []string{}
	for _, l := range s.cfg.Languages {
		for _, t := range texts {
			if t.Has(l) {
				out = append(out, l)
				break
			}
		}
	}
	return out
}

// localDate formats t in loc as "Y-m-d H:i:s" ("" for the zero time). It
// writes the digits itself (what Format(wpLayout) writes, for years 0 to
// 9999; other years go through Format): a rendered event has a dozen dates.
func localDate(t time.Time, loc *time.Location) string {
	if t.IsZero() {
		return ""
	}
	t = t.In(loc)
	y, mo, d := t.Date()
	if y < 0 || y > 9999 {
		return t.Format(wpLayout)
	}
	h, mi, sec := t.Clock()
	var b [19]byte
	put := func(at, n, width int) {
		for i := at + width - 1; i >= at; i-- {
			b[i] = byte('0' + n%10)
			n /= 10
		}
	}
	put(0, y, 4)
	b[4] = '-'
	put(5, int(mo), 2)
	b[7] = '-'
	put(8, d, 2)
	b[10] = ' '
	put(11, h, 2)
	b[13] = ':'
	put(14, mi, 2)
	b[16] = ':'
	put(17, sec, 2)
	return string(b[:])
}

// dateDetails is {year, month, day, hour, minutes, seconds} as zero-padded strings.
func dateDetails(local string) *obj {
	t, err := time.Parse(wpLayout, local)
	if err != nil {
		return newObj()
	}
	if plainLocalDate(local) {
		// Parse accepted exactly "dddd-dd-dd dd:dd:dd": the fields are
		// the digits as written, which is what Format writes back.
		return newObjN(6).add("year", local[0:4]).add("month", local[5:7]).add("day", local[8:10]).
			add("hour", local[11:13]).add("minutes", local[14:16]).add("seconds", local[17:19])
	}
	return newObjN(6).add("year", t.Format("2006")).add("month", t.Format("01")).add("day", t.Format("02")).
		add("hour", t.Format("15")).add("minutes", t.Format("04")).add("seconds", t.Format("05"))
}

// plainLocalDate reports whether s is "dddd-dd-dd dd:dd:dd" (digits and
// separators only, nothing more).
func plainLocalDate(s string) bool {
	if len(s) != len(wpLayout) {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := wpLayout[i]; c {
		case '-', ' ', ':':
			if s[i] != c {
				return false
			}
		default:
			if s[i] < '0' || s[i] > '9' {
				return false
			}
		}
	}
	return true
}

// eventZone returns an event's time zone (the site zone when unset).
func (s *Server) eventZone(e *repository.EventFields) (*time.Location, string) {
	if e.Timezone != "" {
		if loc, ok := loadZone(e.Timezone); ok {
			return loc, e.Timezone
		}
	}
	return s.cfg.Location, s.cfg.TimezoneName
}

// globalID is "<site host><path>?id=<id>".
func (s *Server) globalID(id int64) string {
	return s.siteHost + "?id=" + strconv.FormatInt(id, 10)
}

// permalink is the public URL of a post.
func (s *Server) permalink(p *repository.Post, lang string) string {
	sl := p.Slug.Get(lang, s.cfg.DefaultLanguage, s.cfg.Languages...)
	return s.siteBase(lang) + "/" + string(p.Kind) + "/" + sl + "/"
}

// renderEvent builds the Event object (reference 9.1 plus decisions.md).
func (s *Server) renderEvent(p *repository.Post, l *linked, v view) *obj {
	return s.completeEvent(s.eventHead(p, v), p, l, v)
}

// renderListedEvent is renderEvent for an event of a list page: the fields
// that depend on the post alone (eventHead) are built once per decoded
// record and language (linkcache.go), p being the linked-record cache's
// record. An event without a start is rendered afresh: its zone
// abbreviation is the one in effect now.
func (s *Server) renderListedEvent(p *repository.Post, l *linked, v view) *obj {
	if p.Event == nil || p.Event.StartUTC.IsZero() {
		return s.renderEvent(p, l, v)
	}
	k := renderedKey{id: p.ID, lang: v.lang, single: v.single, kind: renderedEvent}
	head := s.linkCache.rendered(k, p, nil, 0, func() *obj { return s.eventHead(p, v).freeze() })
	return s.completeEvent(copyObj(head, 2), p, l, v)
}

// Positions of the fields eventHead leaves empty for completeEvent.
const (
	evImage      = 15
	evCategories = 35
	evTags       = 36
	evVenue      = 37
	evOrganizer  = 38
)

// eventHead builds every field of the Event object, in order, that depends
// only on the post, the language and the settings; the linked ones (image,
// categories, tags, venue, organizer) are left nil at their positions and
// json_ld is not added. A head may be shared: it is copied, never changed.
func (s *Server) eventHead(p *repository.Post, v view) *obj {
	e := p.Event
	if e == nil {
		e = &repository.EventFields{}
	}
	def := s.cfg.DefaultLanguage
	loc, tzName := s.eventZone(e)
	o := newObjN(45)
	gid := s.globalID(p.ID)
	o.add("id", p.ID)
	o.add("global_id", gid)
	o.add("global_id_lineage", []string{gid})
	s.addAuthorStatusDates(o, p)
	permalink := s.permalink(p, v.lang)
	o.add("url", permalink)
	o.add("rest_url", s.apiBase(v.lang)+"/events/"+strconv.FormatInt(p.ID, 10))
	o.add("title", p.Title.Get(v.lang, def, s.cfg.Languages...))
	o.add("description", p.Content.Get(v.lang, def, s.cfg.Languages...))
	o.add("excerpt", p.Excerpt.Get(v.lang, def, s.cfg.Languages...))
	o.add("slug", p.Slug.Get(v.lang, def, s.cfg.Languages...))
	o.add("image", nil)
	o.add("all_day", e.AllDay)
	o.add("start_date", e.StartLocal)
	o.add("start_date_details", dateDetails(e.StartLocal))
	o.add("end_date", e.EndLocal)
	o.add("end_date_details", dateDetails(e.EndLocal))
	us, ue := localDate(e.StartUTC, time.UTC), localDate(e.EndUTC, time.UTC)
	o.add("utc_start_date", us)
	o.add("utc_start_date_details", dateDetails(us))
	o.add("utc_end_date", ue)
	o.add("utc_end_date_details", dateDetails(ue))
	o.add("timezone", tzName)
	o.add("timezone_abbr", zoneAbbr(tzName, loc, e.StartUTC))
	cost, details := formatCost(e.Cost)
	o.add("cost", cost)
	o.add("cost_details", details)
	website := permalink
	if e.Website != nil {
		website = *e.Website
	}
	o.add("website", website)
	o.add("show_map", e.ShowMap)
	o.add("show_map_link", e.ShowMapLink)
	o.add("hide_from_listings", e.HideFromListings)
	o.add("sticky", e.Sticky)
	o.add("featured", e.Featured)
	o.add("categories", nil)
	o.add("tags", nil)
	o.add("venue", nil)
	o.add("organizer", nil)
	o.add("custom_fields", []any{})
	o.add("ticketed", e.Ticketed)
	o.add("language", s.textLang(p.Title, v.lang))
	o.add("translations", s.translations(p.Title, p.Content, p.Excerpt))
	o.add("recurrence", renderRecurrence(e.Recurrence))
	if o.keys[evImage] != "image" || o.keys[evCategories] != "categories" || o.keys[evTags] != "tags" ||
		o.keys[evVenue] != "venue" || o.keys[evOrganizer] != "organizer" {
		panic("eventHead: the positions of the linked fields moved")
	}
	return o
}

// completeEvent fills an event's head (eventHead: a new one, or a copy
// of a shared one) with what the event links to, and json_ld for single
// reads.
func (s *Server) completeEvent(o *obj, p *repository.Post, l *linked, v view) *obj {
	e := p.Event
	if e == nil {
		e = &repository.EventFields{}
	}
	o.put(evImage, s.renderImage(l.posts[p.ImageID]))
	o.put(evCategories, s.renderEmbeddedTerms(e.Categories, l, v.lang))
	o.put(evTags, s.renderEmbeddedTerms(e.Tags, l, v.lang))
	var venues []any
	for _, id := range e.Venues {
		if vp := l.posts[id]; vp != nil && vp.Kind == repository.KindVenue {
			venues = append(venues, s.linkedPlace(vp, l, v, true))
		}
	}
	switch len(venues) {
	case 0:
		o.put(evVenue, []any{})
	case 1:
		o.put(evVenue, venues[0])
	default:
		o.put(evVenue, venues)
	}
	orgs := []any{}
	for _, id := range e.Organizers {
		if op := l.posts[id]; op != nil && op.Kind == repository.KindOrganizer {
			orgs = append(orgs, s.linkedPlace(op, l, v, false))
		}
	}
	o.put(evOrganizer, orgs)
	if v.single {
		o.add("json_ld", s.eventJSONLD(o, venues, orgs))
	}
	return o
}

// zoneAbbr is the abbreviation of the zone at t (the name itself for UTC±N).
func zoneAbbr(name string, loc *time.Location, t time.Time) string {
	if strings.HasPrefix(name, "UTC") {
		return name
	}
	if t.IsZero() {
		t = time.Now()
	}
	abbr, _ := t.In(loc).Zone()
	return abbr
}

// renderImage is the Image object (reference 9.5), or false.
func (s *Server) renderImage(img *repository.Post) any {
	if img == nil || img.Image == nil {
		return false
	}
	o := newObj().set("url", img.Image.URL).set("id", img.ID)
	if img.Image.Extension != "" {
		o.set("extension", img.Image.Extension)
	}
	return o
}

// addAuthorStatusDates adds the fields every post response has after its
// IDs, in the reference's order: author, status and the publish and
// modified dates in the site zone and in UTC.
func (s *Server) addAuthorStatusDates(o *obj, p *repository.Post) {
	o.add("author", strconv.FormatInt(p.Author, 10))
	o.add("status", p.Status)
	o.add("date", localDate(p.Date, s.cfg.Location))
	o.add("date_utc", localDate(p.Date, time.UTC))
	o.add("modified", localDate(p.Modified, s.cfg.Location))
	o.add("modified_utc", localDate(p.Modified, time.UTC))
}

// placeHeader starts a venue or organizer object with the fields both
// share, in the reference's order; nameKey holds the name.
func (s *Server) placeHeader(p *repository.Post, l *linked, v view, nameKey string) *obj {
	def := s.cfg.DefaultLanguage
	o := newObjN(24)
	o.add("id", p.ID)
	s.addAuthorStatusDates(o, p)
	o.add("url", s.permalink(p, v.lang))
	o.add(nameKey, p.Title.Get(v.lang, def, s.cfg.Languages...))
	o.add("description", p.Content.Get(v.lang, def, s.cfg.Languages...))
	o.add("excerpt", p.Excerpt.Get(v.lang, def, s.cfg.Languages...))
	o.add("slug", p.Slug.Get(v.lang, def, s.cfg.Languages...))
	o.add("image", s.renderImage(l.posts[p.ImageID]))
	return o
}

// renderVenue builds the Venue object (reference 9.2): empty values are
// dropped before show_map, show_map_link and the global IDs are added.
func (s *Server) renderVenue(p *repository.Post, l *linked, v view) *obj {
	vf := p.Venue
	if vf == nil {
		vf = &repository.VenueFields{}
	}
	o := s.placeHeader(p, l, v, "venue")
	o.add("address", vf.Address)
	o.add("city", vf.City)
	o.add("country", vf.Country)
	o.add("province", vf.Province)
	o.add("state", vf.State)
	o.add("zip", vf.Zip)
	o.add("phone", vf.Phone)
	o.add("website", vf.Website)
	o.add("stateprovince", vf.StateProvince)
	if vf.GeoLat != nil && vf.GeoLng != nil {
		o.add("geo_lat", *vf.GeoLat)
		o.add("geo_lng", *vf.GeoLng)
	}
	if v.single {
		o.add("json_ld", s.placeJSONLD(o))
	}
	dropEmpty(o)
	o.add("show_map", vf.ShowMap)
	o.add("show_map_link", vf.ShowMapLink)
	gid := s.globalID(p.ID)
	o.add("global_id", gid)
	o.add("global_id_lineage", []string{gid})
	o.add("language", s.textLang(p.Title, v.lang))
	o.add("translations", s.translations(p.Title, p.Content, p.Excerpt))
	return o
}

// renderOrganizer builds the Organizer object (reference 9.3).
func (s *Server) renderOrganizer(p *repository.Post, l *linked, v view) *obj {
	of := p.Organizer
	if of == nil {
		of = &repository.OrganizerFields{}
	}
	o := s.placeHeader(p, l, v, "organizer")
	o.add("phone", of.Phone)
	o.add("website", of.Website)
	o.add("email", of.Email)
	if v.single {
		o.add("json_ld", s.personJSONLD(o))
	}
	gid := s.globalID(p.ID)
	o.add("global_id", gid)
	o.add("global_id_lineage", []string{gid})
	dropEmpty(o)
	o.add("language", s.textLang(p.Title, v.lang))
	o.add("translations", s.translations(p.Title, p.Content, p.Excerpt))
	return o
}

// linkedPlace renders p as a venue (renderVenue) or an organizer
// (renderOrganizer), reused from the linked-record cache while p and its
// image are the same decoded records (linkcache.go).
func (s *Server) linkedPlace(p *repository.Post, l *linked, v view, venue bool) *obj {
	k := renderedKey{id: p.ID, lang: v.lang, single: v.single, kind: renderedOrganizer}
	render := s.renderOrganizer
	if venue {
		k.kind, render = renderedVenue, s.renderVenue
	}
	img := l.posts[p.ImageID]
	return s.linkCache.rendered(k, p, img, 0, func() *obj { return render(p, l, v).freeze() })
}

// dropEmpty removes empty and falsy values, as the original does for venues
// and organizers.
func dropEmpty(o *obj) {
	o.filter(func(_ string, v any) bool {
		switch x := v.(type) {
		case string:
			return x != "" && x != "0"
		case bool:
			return x
		case nil:
			return false
		}
		return true
	})
}

// taxonomyName is the WordPress taxonomy name clients of the original expect.
func taxonomyName(tax repository.Taxonomy) string {
	if tax == repository.TaxCategory {
		return "tribe_events_cat"
	}
	return "post_tag"
}

// termCollection is the route segment of a taxonomy.
func termCollection(tax repository.Taxonomy) string {
	if tax == repository.TaxCategory {
		return "categories"
	}
	return "tags"
}

// termURLs is {self, collection, up?}.
func (s *Server) termURLs(t *repository.Term, lang string) *obj {
	base := s.apiBase(lang) + "/" + termCollection(t.Taxonomy)
	o := newObjN(3).add("self", base+"/"+strconv.FormatInt(t.ID, 10)).add("collection", base)
	if t.Parent != 0 {
		o.add("up", base+"/"+strconv.FormatInt(t.Parent, 10))
	}
	return o
}

// renderEmbeddedTerms renders the terms of an event (reference 9.4, first shape).
func (s *Server) renderEmbeddedTerms(ids []int64, l *linked, lang string) []any {
	out := make([]any, 0, len(ids))
	for _, id := range ids {
		t := l.terms[id]
		if t == nil {
			continue
		}
		count := l.counts[t.Taxonomy][t.ID]
		k := renderedKey{id: t.ID, lang: lang, kind: renderedTerm}
		out = append(out, s.linkCache.rendered(k, t, nil, count, func() *obj { return s.renderEmbeddedTerm(t, count, lang).freeze() }))
	}
	return out
}

// renderEmbeddedTerm renders one term of an event.
func (s *Server) renderEmbeddedTerm(t *repository.Term, count int, lang string) *obj {
	def := s.cfg.DefaultLanguage
	o := newObjN(13)
	o.add("name", t.Name.Get(lang, def, s.cfg.Languages...))
	o.add("slug", t.Slug.Get(lang, def, s.cfg.Languages...))
	o.add("term_group", 0)
	o.add("term_taxonomy_id", t.ID)
	o.add("taxonomy", taxonomyName(t.Taxonomy))
	o.add("description", t.Description.Get(lang, def, s.cfg.Languages...))
	o.add("parent", t.Parent)
	o.add("count", count)
	o.add("filter", "raw")
	o.add("id", t.ID)
	o.add("urls", s.termURLs(t, lang))
	o.add("language", s.textLang(t.Name, lang))
	o.add("translations", s.translations(t.Name, t.Description))
	return o
}

// renderTerm renders a term as /categories and /tags do (reference 9.4,
// second shape).
func (s *Server) renderTerm(t *repository.Term, count int, lang string) *obj {
	def := s.cfg.DefaultLanguage
	o := newObj()
	o.set("id", t.ID)
	o.set("count", count)
	o.set("description", t.Description.Get(lang, def, s.cfg.Languages...))
	o.set("name", t.Name.Get(lang, def, s.cfg.Languages...))
	o.set("slug", t.Slug.Get(lang, def, s.cfg.Languages...))
	o.set("taxonomy", taxonomyName(t.Taxonomy))
	if t.Taxonomy == repository.TaxCategory {
		o.set("parent", t.Parent)
	}
	o.set("meta", []any{})
	seg := "tag"
	if t.Taxonomy == repository.TaxCategory {
		seg = "events/category"
	}
	o.set("url", s.siteBase(lang)+"/"+seg+"/"+t.Slug.Get(lang, def, s.cfg.Languages...)+"/")
	o.set("urls", s.termURLs(t, lang))
	o.set("language", s.textLang(t.Name, lang))
	o.set("translations", s.translations(t.Name, t.Description))
	return o
}

// formatCost formats a cost as the original does (reference 6.5): one value
// as written; several as "lowest – highest" with 0 shown as "Free".
// cost_details has the currency symbol and position found in the text and
// the numeric values ascending (as strings, as the original returns them).
func formatCost(raw []string) (string, *obj) {
	details := newObj().set("currency_symbol", "").set("currency_code", "").set("currency_position", "").set("values", []string{})
	if len(raw) == 0 {
		return "", details
	}
	type val struct {
		n    float64
		text string
	}
	var vals []val
	symbol, position := "", ""
	for _, c := range raw {
		for _, m := range costNumber(c) {
			vals = append(vals, val{m.n, c})
		}
		if symbol == "" {
			symbol, position = currencyOf(c)
		}
	}
	sort.SliceStable(vals, func(i, j int) bool { return vals[i].n < vals[j].n })
	strs := make([]string, 0, len(vals))
	seen := map[string]bool{}
	for _, v := range vals {
		s := strconv.FormatFloat(v.n, 'f', -1, 64)
		if !seen[s] {
			seen[s] = true
			strs = append(strs, s)
		}
	}
	details.set("currency_symbol", symbol).set("currency_position", position).set("values", strs)
	if len(raw) == 1 {
		return joinCurrency(strings.TrimSpace(raw[0]), symbol, position), details
	}
	if len(vals) == 0 {
		return strings.Join(raw, ", "), details
	}
	show := func(v val) string {
		if v.n == 0 {
			return "Free"
		}
		return joinCurrency(strings.TrimSpace(v.text), symbol, position)
	}
	lo, hi := vals[0], vals[len(vals)-1]
	if lo.n == hi.n {
		return show(lo), details
	}
	return show(lo) + " – " + show(hi), details
}

type costNum struct{ n float64 }

// costNumber finds the numbers in a cost text; a decimal comma (5,50) is
// read as a decimal point.
func costNumber(s string) []costNum {
	var out []costNum
	var cur strings.Builder
	flush := func() {
		t := strings.Trim(cur.String(), ".,")
		cur.Reset()
		if t == "" {
			return
		}
		// "1,000.50" -> thousands comma; "5,50" -> decimal comma.
		if strings.Contains(t, ",") && strings.Contains(t, ".") {
			t = strings.ReplaceAll(t, ",", "")
		} else if i := strings.LastIndex(t, ","); i >= 0 {
			if strings.Count(t, ",") > 1 || len(t)-i-1 == 3 {
				t = strings.ReplaceAll(t, ",", "")
			} else {
				t = strings.ReplaceAll(t, ",", ".")
			}
		}
		if f, err := strconv.ParseFloat(t, 64); err == nil && !math.IsInf(f, 0) {
			out = append(out, costNum{f})
		}
	}
	for _, r := range s {
		if (r >= '0' && r <= '9') || r == '.' || r == ',' {
			cur.WriteRune(r)
			continue
		}
		flush()
	}
	flush()
	if len(out) == 0 && strings.EqualFold(strings.TrimSpace(s), "free") {
		out = append(out, costNum{0})
	}
	return out
}

// joinCurrency writes one amount and its currency symbol without the space
// between them, as the original's tribe_format_currency does (reference
// 6.5): "€ 12" is "€12", "12 €" is "12€". Any other text (a range, words,
// a symbol of several words) stays as written.
func joinCurrency(text, symbol, position string) string {
	if symbol == "" || strings.ContainsFunc(symbol, unicode.IsSpace) {
		return text
	}
	var amount string
	switch position {
	case "prefix":
		rest, ok := strings.CutPrefix(text, symbol)
		if !ok {
			return text
		}
		amount = strings.TrimSpace(rest)
	case "postfix":
		rest, ok := strings.CutSuffix(text, symbol)
		if !ok {
			return text
		}
		amount = strings.TrimSpace(rest)
	default:
		return text
	}
	if amount == "" || strings.Trim(amount, "0123456789.,") != "" || len(costNumber(amount)) != 1 {
		return text
	}
	if position == "prefix" {
		return symbol + amount
	}
	return amount + symbol
}

// currencyOf finds a currency symbol next to the first number of s.
func currencyOf(s string) (string, string) {
	s = strings.TrimSpace(s)
	i := strings.IndexAny(s, "0123456789")
	if i < 0 {
		return "", ""
	}
	if pre := strings.TrimSpace(s[:i]); pre != "" && !strings.EqualFold(pre, "free") {
		return pre, "prefix"
	}
	j := strings.LastIndexAny(s, "0123456789")
	if post := strings.TrimSpace(s[j+1:]); post != "" {
		return post, "postfix"
	}
	return "", ""
}

// eventJSONLD is the schema.org Event of a rendered event.
func (s *Server) eventJSONLD(o *obj, venues, orgs []any) *obj {
	ld := newObj().set("@context", "http://schema.org").set("@type", "Event")
	name, _ := o.get("title")
	desc, _ := o.get("description")
	ld.set("name", name).set("description", desc)
	if img, ok := o.get("image"); ok {
		if io, ok := img.(*obj); ok {
			u, _ := io.get("url")
			ld.set("image", u)
		}
	}
	u, _ := o.get("url")
	ld.set("url", u)
	ld.set("startDate", isoDate(o, "utc_start_date"))
	ld.set("endDate", isoDate(o, "utc_end_date"))
	if st, _ := o.get("status"); st == repository.StatusPublish {
		ld.set("eventStatus", "https://schema.org/EventScheduled")
	}
	if len(venues) > 0 {
		if vo, ok := venues[0].(*obj); ok {
			ld.set("location", s.placeJSONLD(vo))
		}
	}
	if len(orgs) > 0 {
		var people []any
		for _, x := range orgs {
			if oo, ok := x.(*obj); ok {
				people = append(people, s.personJSONLD(oo))
			}
		}
		ld.set("organizer", people)
	}
	if details, ok := o.get("cost_details"); ok {
		if d, ok := details.(*obj); ok {
			if vals, _ := d.get("values"); len(vals.([]string)) > 0 {
				offer := newObj().set("@type", "Offer").set("price", vals.([]string)[0])
				if sym, _ := d.get("currency_symbol"); sym != "" {
					offer.set("priceCurrency", sym)
				}
				offer.set("url", u)
				ld.set("offers", offer)
			}
		}
	}
	return ld
}

// isoDate turns a rendered UTC date into ISO 8601.
func isoDate(o *obj, key string) string {
	v, _ := o.get(key)
	t, err := time.Parse(wpLayout, fmt.Sprint(v))
	if err != nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// placeJSONLD is the schema.org Place of a rendered venue.
func (s *Server) placeJSONLD(o *obj) *obj {
	ld := newObj().set("@context", "http://schema.org").set("@type", "Place")
	str := func(k string) string {
		v, _ := o.get(k)
		x, _ := v.(string)
		return x
	}
	ld.set("name", str("venue")).set("description", str("description")).set("url", str("url"))
	addr := newObj().set("@type", "PostalAddress")
	if v := str("address"); v != "" {
		addr.set("streetAddress", v)
	}
	if v := str("city"); v != "" {
		addr.set("addressLocality", v)
	}
	if v := str("stateprovince"); v != "" {
		addr.set("addressRegion", v)
	}
	if v := str("zip"); v != "" {
		addr.set("postalCode", v)
	}
	if v := str("country"); v != "" {
		addr.set("addressCountry", v)
	}
	ld.set("address", addr)
	if v := str("phone"); v != "" {
		ld.set("telephone", v)
	}
	if lat, ok := o.get("geo_lat"); ok {
		lng, _ := o.get("geo_lng")
		ld.set("geo", newObj().set("@type", "GeoCoordinates").set("latitude", lat).set("longitude", lng))
	}
	return ld
}

// personJSONLD is the schema.org Person of a rendered organizer.
func (s *Server) personJSONLD(o *obj) *obj {
	ld := newObj().set("@context", "http://schema.org").set("@type", "Person")
	for _, kv := range [][2]string{{"organizer", "name"}, {"description", "description"}, {"url", "url"}, {"phone", "telephone"}, {"email", "email"}, {"website", "sameAs"}} {
		if v, ok := o.get(kv[0]); ok {
			if sv, _ := v.(string); sv != "" {
				ld.set(kv[1], sv)
			}
		}
	}
	return ld
}
