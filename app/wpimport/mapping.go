package wpimport

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/calendar/eventcal/app/htmlpolicy"
	"github.com/calendar/eventcal/app/input"
	"github.com/calendar/eventcal/app/input/values"
	"github.com/calendar/eventcal/config/currency"
	"github.com/calendar/eventcal/config/limits"
	"github.com/calendar/eventcal/repository"
)

// wpLayout is how the source writes dates ("Y-m-d H:i:s", no zone).
const wpLayout = "2006-01-02 15:04:05"

// fieldError names the field of a record that could not be imported.
type fieldError struct {
	field, problem string
}

func (e *fieldError) Error() string { return e.field + ": " + e.problem }

func fieldErr(field, format string, a ...any) error {
	return &fieldError{field: field, problem: fmt.Sprintf(format, a...)}
}

// shownLen bounds a source value quoted in a message.
const shownLen = 80

// shown quotes a source value for a message: Go-quoted (control and
// format characters escaped) and cut to shownLen characters.
func shown(s string) string {
	if utf8.RuneCountInString(s) > shownLen {
		s = string([]rune(s)[:shownLen]) + "…"
	}
	return strconv.QuoteToGraphic(s)
}

// mapper turns source records into store records.
type mapper struct {
	site string // Origin.Site
	lang string // the language the text is stored in
	// images collects the featured images the posts link to, by ID.
	images map[int64]*tecImage
	// zone is the site's time zone, for the local dates of drafts
	// (their UTC dates are "0000-00-00 00:00:00").
	zone *time.Location
	// changed is told about every value stored other than the source
	// has it (nil: nobody listens).
	changed func(c Change)
	// geo maps a venue's coordinates (ReadPublic; the import keeps none).
	geo bool
}

// note tells m.changed about a value stored differently.
func (m *mapper) note(kind string, id int64, field, from, to string) {
	if m.changed != nil && from != to {
		m.changed(Change{Kind: kind, ID: id, Field: field, From: from, To: to})
	}
}

// zeroDate is how WordPress writes an unset date (the UTC dates of drafts).
const zeroDate = "0000-00-00 00:00:00"

// postDate reads a post's UTC date, or for a draft (zero UTC date) its
// local date in the site's zone.
func (m *mapper) postDate(field, utcValue, local string) (time.Time, error) {
	if strings.TrimSpace(utcValue) != zeroDate {
		return parseUTC(field, utcValue)
	}
	local = strings.TrimSpace(local)
	if local == "" || local == zeroDate {
		return time.Time{}, nil
	}
	zone := m.zone
	if zone == nil {
		zone = time.UTC
	}
	t, err := time.ParseInLocation(wpLayout, local, zone)
	if err != nil {
		return time.Time{}, fieldErr(strings.TrimSuffix(field, "_utc"), "%s is not a date of the form YYYY-MM-DD HH:MM:SS", shown(local))
	}
	return t.UTC(), nil
}

// decodeText turns the source's entity-encoded text (titles and term
// names: "FX &#8220;Quoted&#8221; &#038; Title") into the text it stands
// for ("FX “Quoted” & Title"). The entities are decoded into text only:
// the result then goes through plainText, as a title sent to the API does,
// so "&lt;script&gt;" never becomes a live <script>.
func decodeText(s string) string { return strings.TrimSpace(html.UnescapeString(s)) }

// plainText is the API's rule for a plain text field written by a caller
// without unfiltered_html (htmlpolicy.Plain: no markup at all), with the
// surrounding white space dropped as the API drops it.
func plainText(s string) string { return strings.TrimSpace(htmlpolicy.Plain(s)) }

// richText is the API's rule for a description or excerpt written by a
// caller without unfiltered_html (htmlpolicy.Rich: what wp_kses_post
// allows an author; no script, event handler or javascript: URL).
func richText(s string) string { return htmlpolicy.Rich(s) }

// decodeSlug decodes the source's percent-encoded non-Latin slugs
// ("fx-%e6%9d%b1%e4%ba%ac-hall" is "fx-東京-hall") and drops the
// "__trashed" suffix WordPress adds while a post is in the trash (it
// restores the slug when the post leaves the trash; this service keeps
// a trashed item's slug as it was).
func decodeSlug(s, status string) string {
	if d, err := url.PathUnescape(s); err == nil && utf8.ValidString(d) {
		s = d
	}
	if status == repository.StatusTrash {
		s = strings.TrimSuffix(s, "__trashed")
	}
	return strings.TrimSpace(s)
}

// wordPressSlug reports whether a decoded source slug is one WordPress's
// sanitize_title can produce: a-z, 0-9, "_" and "-", and outside ASCII
// only letters, marks, numbers, punctuation and symbols ("fx-東京-hall",
// "fx-online-🎧"; no white space, control, format or unassigned
// character). Such a slug is kept as the source has it, so the
// record's address stays what it was; any other ("../../admin", "a/b/c",
// "..", upper case, white space, control or format characters) is
// sanitised as the API sanitises a slug it is sent.
func wordPressSlug(s string) bool {
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_':
		case r < utf8.RuneSelf || r == utf8.RuneError:
			return false
		case unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S):
		default:
			return false
		}
	}
	return s != ""
}

// slugFor returns the slug a record is stored with: the source's (decoded)
// when WordPress could have made it, else the API's normalisation of it
// (repository.NormalizeSlug), else one made from the title as the API
// makes it, else the kind. A slug stored other than the source has it is
// noted (the run summary lists it).
func (m *mapper) slugFor(kind string, id int64, src, title string) string {
	if src == "" || wordPressSlug(src) {
		if src == "" {
			src = repository.Slugify(title)
		}
		if src == "" {
			src = kind
		}
		return src
	}
	slug := repository.NormalizeSlug(src)
	if slug == "" {
		slug = repository.Slugify(title)
	}
	if slug == "" {
		slug = kind
	}
	m.note(kind, id, "slug", src, slug)
	return slug
}

// checkLen fails a text field longer than the API accepts.
func checkLen(field, s string, max int) error {
	if n := utf8.RuneCountInString(s); n > max {
		return fieldErr(field, "%d characters; this service accepts at most %d", n, max)
	}
	return nil
}

// parseUTC reads a source date in UTC; empty is the zero time.
func parseUTC(field, s string) (time.Time, error) {
	if strings.TrimSpace(s) == "" {
		return time.Time{}, nil
	}
	t, err := time.ParseInLocation(wpLayout, strings.TrimSpace(s), time.UTC)
	if err != nil {
		return time.Time{}, fieldErr(field, "%s is not a date of the form YYYY-MM-DD HH:MM:SS", shown(s))
	}
	return t, nil
}

// utcOffsetZone matches WordPress's manual offsets: UTC+2, UTC-5:30, UTC+5.5.
var utcOffsetZone = regexp.MustCompile(`^UTC([+-])(\d{1,2})(?:[:.](\d{1,2}))?$`)

// checkZone accepts an IANA name, UTC, or a manual UTC±N offset (as the
// API does), else fails the field.
func checkZone(tz string) error {
	if tz == "" || tz == "UTC" || utcOffsetZone.MatchString(tz) {
		return nil
	}
	if _, err := time.LoadLocation(tz); err != nil || strings.EqualFold(tz, "local") {
		return fieldErr("timezone", "%s is not a time zone this service knows (an IANA name, UTC or UTC±N)", shown(tz))
	}
	return nil
}

// status checks a source status.
func checkStatus(s string) error {
	if !repository.IsStatus(s) {
		return fieldErr("status", "%s is not a post status (publish, future, draft, pending, private, trash)", shown(s))
	}
	return nil
}

// origin stamps a record with its source identity and content hash. The
// hash covers the record exactly as it would be stored (its Origin and
// Revision left out), so the same source content gives the same hash and
// any change of a stored field at the source changes it.
func (m *mapper) origin(id int64, modified time.Time, v any) (*repository.Origin, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(b)
	return &repository.Origin{Site: m.site, ID: id, Modified: modified, Hash: hex.EncodeToString(sum[:16])}, nil
}

// checkID refuses an ID outside the range the store keeps.
func checkID(id int64) error {
	switch {
	case id <= 0:
		return fieldErr("id", "missing or not a positive number")
	case id > repository.MaxExplicitID:
		return fieldErr("id", "%d is above %d, the largest ID this service keeps from a source", id, repository.MaxExplicitID)
	}
	return nil
}

// term maps a category or tag. The name and description go through the
// API's HTML policy (plainText, richText); the slug through slugFor.
func (m *mapper) term(tax repository.LabelKind, raw json.RawMessage) (*repository.Label, error) {
	var src tecTerm
	if err := json.Unmarshal(raw, &src); err != nil {
		return nil, decodeErr(err)
	}
	if err := checkID(src.ID); err != nil {
		return nil, err
	}
	decoded := decodeText(src.Name)
	name := plainText(decoded)
	m.note(string(tax), src.ID, "name", decoded, name)
	if name == "" {
		return nil, fieldErr("name", "empty once markup is removed")
	}
	if err := checkLen("name", name, limits.MaxTermName); err != nil {
		return nil, err
	}
	slug := m.slugFor(string(tax), src.ID, decodeSlug(src.Slug, ""), name)
	if err := checkLen("slug", slug, limits.MaxSlug); err != nil {
		return nil, err
	}
	if err := checkLen("description", src.Description, limits.MaxDescription); err != nil {
		return nil, err
	}
	t := &repository.Label{ID: src.ID, Taxonomy: tax}
	t.Name.Set(m.lang, name)
	t.Slug.Set(m.lang, slug)
	t.Description.Set(m.lang, richText(src.Description))
	if tax == repository.LabelCategory {
		if src.Parent < 0 || src.Parent == src.ID {
			return nil, fieldErr("parent", "%d is not a parent category", src.Parent)
		}
		t.Parent = src.Parent
	}
	return t, nil
}

// postBase maps what every post kind shares. name is the title field.
func (m *mapper) postBase(kind repository.Kind, src *tecPost, name, nameField string) (*repository.Record, error) {
	if err := checkID(src.ID); err != nil {
		return nil, err
	}
	if err := checkStatus(src.Status); err != nil {
		return nil, err
	}
	decoded := decodeText(name)
	title := plainText(decoded)
	m.note(string(kind), src.ID, nameField, decoded, title)
	if title == "" {
		if decoded != "" {
			return nil, fieldErr(nameField, "empty once markup is removed")
		}
		return nil, fieldErr(nameField, "empty")
	}
	if err := checkLen(nameField, title, limits.MaxTitle); err != nil {
		return nil, err
	}
	if err := checkLen("description", src.Description, limits.MaxDescription); err != nil {
		return nil, err
	}
	date, err := m.postDate("date_utc", src.DateUTC, src.Date)
	if err != nil {
		return nil, err
	}
	modified, err := m.postDate("modified_utc", src.ModifiedUTC, src.Modified)
	if err != nil {
		return nil, err
	}
	// Author is the source's user ID until the run maps it to a user
	// here (mapAuthors).
	p := &repository.Record{ID: src.ID, Kind: kind, Author: int64(max(jsonInt(src.Author), 0)), Status: src.Status, Date: date, Modified: modified}
	p.Title.Set(m.lang, title)
	p.Content.Set(m.lang, richText(src.Description))
	// Drafts have no slug at the source yet; every item has one here.
	slug := m.slugFor(string(kind), src.ID, decodeSlug(src.Slug, src.Status), title)
	if err := checkLen("slug", slug, limits.MaxSlug); err != nil {
		return nil, err
	}
	p.Slug.Set(m.lang, slug)
	img, err := decodeImage(src.Image)
	if err != nil {
		return nil, fieldErr("image", "%v", err)
	}
	if img != nil {
		// The image must be one the API would register: a post linking
		// to a refused one is refused, as the API refuses the write.
		if err := checkImage(img); err != nil {
			return nil, err
		}
		p.ImageID = img.ID
		if m.images != nil {
			m.images[img.ID] = img
		}
	}
	return p, nil
}

// event maps an event. Links are kept as the source gives them; the run
// drops those to records it does not import.
func (m *mapper) event(raw json.RawMessage) (*repository.Record, error) {
	var src tecEvent
	if err := json.Unmarshal(raw, &src); err != nil {
		return nil, decodeErr(err)
	}
	p, err := m.postBase(repository.KindEvent, &src.tecPost, src.Title, "title")
	if err != nil {
		return nil, err
	}
	if err := checkLen("excerpt", src.Excerpt, limits.MaxExcerpt); err != nil {
		return nil, err
	}
	p.Excerpt.Set(m.lang, richText(src.Excerpt))
	if err := checkZone(src.Timezone); err != nil {
		return nil, err
	}
	e := &repository.EventFields{
		Timezone: src.Timezone, AllDay: src.AllDay,
		ShowMap: src.ShowMap, ShowMapLink: src.ShowMapLink, HideFromListings: src.HideFromListings,
		Sticky: src.Sticky, Featured: src.Featured,
		Categories: []int64{}, Tags: []int64{}, Venues: []int64{}, Organizers: []int64{},
	}
	for _, d := range []struct {
		field, v string
		dst      *string
	}{{"start_date", src.StartDate, &e.StartLocal}, {"end_date", src.EndDate, &e.EndLocal}} {
		t, err := time.Parse(wpLayout, strings.TrimSpace(d.v))
		if err != nil {
			return nil, fieldErr(d.field, "%s is not a date of the form YYYY-MM-DD HH:MM:SS", shown(d.v))
		}
		*d.dst = t.Format(wpLayout)
	}
	if e.StartUTC, err = parseUTC("utc_start_date", src.UTCStartDate); err != nil {
		return nil, err
	}
	if e.EndUTC, err = parseUTC("utc_end_date", src.UTCEndDate); err != nil {
		return nil, err
	}
	if e.StartUTC.IsZero() || e.EndUTC.IsZero() {
		return nil, fieldErr("utc_start_date", "missing")
	}
	if e.EndUTC.Before(e.StartUTC) {
		return nil, fieldErr("end_date", "%s is before the start %s", src.UTCEndDate, src.UTCStartDate)
	}
	var cur sourceCurrency
	e.Cost, cur = sourceCost(src.Cost, src.CostDetails.CurrencySymbol, src.CostDetails.CurrencyPosition)
	if cur.symbol != "" && plainText(cur.symbol) == cur.symbol {
		e.CurrencySymbol, e.CurrencyPosition = cur.symbol, cur.position
	}
	if code, msg := currency.CheckCode(strings.TrimSpace(src.CostDetails.CurrencyCode)); msg == "" {
		e.CurrencyCode = code
	}
	for i, c := range e.Cost {
		if err := checkLen("cost", c, limits.MaxShortText); err != nil {
			return nil, err
		}
		e.Cost[i] = plainText(c)
		m.note(KindEvent, src.ID, "cost", c, e.Cost[i])
	}
	// An unset website comes back as the event's permalink; here unset
	// stays unset (responses then show this service's permalink).
	if w := strings.TrimSpace(src.Website); w != "" && w != src.URL {
		if err := checkContact("website", src.Website, values.WebURL, "an http or https URL"); err != nil {
			return nil, err
		}
		e.Website = &w
	}
	for _, c := range src.Categories {
		if c.ID > 0 {
			e.Categories = append(e.Categories, c.ID)
		}
	}
	for _, t := range src.Tags {
		if t.ID > 0 {
			e.Tags = append(e.Tags, t.ID)
		}
	}
	if e.Venues, err = decodeLinks(src.Venue); err != nil {
		return nil, fieldErr("venue", "%v", err)
	}
	if e.Organizers, err = decodeLinks(src.Organizer); err != nil {
		return nil, fieldErr("organizer", "%v", err)
	}
	if e.Venues == nil {
		e.Venues = []int64{}
	}
	if e.Organizers == nil {
		e.Organizers = []int64{}
	}
	p.Event = e
	return p, nil
}

// venue maps a venue.
func (m *mapper) venue(raw json.RawMessage) (*repository.Record, error) {
	var src tecVenue
	if err := json.Unmarshal(raw, &src); err != nil {
		return nil, decodeErr(err)
	}
	p, err := m.postBase(repository.KindVenue, &src.tecPost, src.Venue, "venue")
	if err != nil {
		return nil, err
	}
	if err := checkContact("phone", src.Phone, nil, ""); err != nil {
		return nil, err
	}
	v := &repository.VenueFields{
		ShowMap: src.ShowMap == nil || *src.ShowMap, ShowMapLink: src.ShowMapLink == nil || *src.ShowMapLink,
	}
	for _, f := range []struct {
		name, v string
		dst     *string
	}{{"address", src.Address, &v.Address}, {"city", src.City, &v.City}, {"country", src.Country, &v.Country},
		{"province", src.Province, &v.Province}, {"state", src.State, &v.State}, {"stateprovince", src.StateProvince, &v.StateProvince},
		{"zip", src.Zip, &v.Zip}, {"phone", src.Phone, &v.Phone}} {
		if err := checkLen(f.name, f.v, limits.MaxShortText); err != nil {
			return nil, err
		}
		*f.dst = plainText(f.v)
		m.note(KindVenue, src.ID, f.name, strings.TrimSpace(f.v), *f.dst)
	}
	if w := strings.TrimSpace(src.Website); w != "" {
		if err := checkContact("website", src.Website, values.WebURL, "an http or https URL"); err != nil {
			return nil, err
		}
		v.Website = w
	}
	if m.geo && src.GeoLat.set && src.GeoLng.set && src.GeoLat.v >= -90 && src.GeoLat.v <= 90 && src.GeoLng.v >= -180 && src.GeoLng.v <= 180 {
		lat, lng := src.GeoLat.v, src.GeoLng.v
		v.GeoLat, v.GeoLng = &lat, &lng
	}
	p.Venue = v
	return p, nil
}

// organizer maps an organizer.
func (m *mapper) organizer(raw json.RawMessage) (*repository.Record, error) {
	var src tecOrganizer
	if err := json.Unmarshal(raw, &src); err != nil {
		return nil, decodeErr(err)
	}
	p, err := m.postBase(repository.KindOrganizer, &src.tecPost, src.Organizer, "organizer")
	if err != nil {
		return nil, err
	}
	if err := checkContact("phone", src.Phone, nil, ""); err != nil {
		return nil, err
	}
	if err := checkContact("email", src.Email, input.PlainEmail, "one e-mail address such as name@example.org"); err != nil {
		return nil, err
	}
	o := &repository.OrganizerFields{}
	for _, f := range []struct {
		name, v string
		dst     *string
	}{{"phone", src.Phone, &o.Phone}, {"email", strings.TrimSpace(src.Email), &o.Email}} {
		if err := checkLen(f.name, f.v, limits.MaxShortText); err != nil {
			return nil, err
		}
		*f.dst = plainText(f.v)
		m.note(KindOrganizer, src.ID, f.name, strings.TrimSpace(f.v), *f.dst)
	}
	if w := strings.TrimSpace(src.Website); w != "" {
		if err := checkContact("website", src.Website, values.WebURL, "an http or https URL"); err != nil {
			return nil, err
		}
		o.Website = w
	}
	p.Organizer = o
	return p, nil
}

// image maps a featured image object to a registered image as the API
// registers an image URL (the URL is kept, never fetched): the extension
// from the URL's path (else the source's, when it is a plain word), the
// title from the URL's last segment as written (percent-encoding kept),
// the slug made from it.
func (m *mapper) image(img *tecImage) (*repository.Record, error) {
	if err := checkImage(img); err != nil {
		return nil, err
	}
	ext, _ := values.ImageURLExtension(img.URL)
	if e := strings.ToLower(img.Extension); ext == "" && e != "" && len(e) <= 8 && !strings.ContainsFunc(e, func(r rune) bool {
		return (r < 'a' || r > 'z') && (r < '0' || r > '9')
	}) {
		ext = e
	}
	name := img.URL[strings.LastIndex(img.URL, "/")+1:]
	if i := strings.IndexAny(name, "?#"); i >= 0 {
		name = name[:i]
	}
	name = strings.TrimSuffix(name, "."+ext)
	if name == "" {
		name = "image"
	}
	p := &repository.Record{ID: img.ID, Kind: repository.KindImage, Status: "inherit",
		Image: &repository.ImageFields{URL: img.URL, Extension: ext,
			Width: imageDim(img.Width, maxImagePixels), Height: imageDim(img.Height, maxImagePixels),
			Filesize: imageDim(img.Filesize, maxImageBytes), Sizes: imageSizes(img.Sizes)}}
	p.Title.Set(m.lang, name)
	slug := repository.Slugify(name)
	if slug == "" {
		slug = "image"
	}
	p.Slug.Set(m.lang, slug)
	return p, nil
}

// Bounds of what an image's size may say; a value past them is dropped.
const (
	maxImagePixels = 1 << 20
	maxImageBytes  = 1 << 40
	// maxImageSizes bounds the smaller copies kept per image.
	maxImageSizes = 20
)

// imageDim is a width, height or file size within bounds, else 0
// (unknown).
func imageDim(n looseInt, limit int64) int64 {
	if n <= 0 || int64(n) > limit {
		return 0
	}
	return int64(n)
}

// imageSizes reads the source's smaller copies of an image, an object by
// size name of {width, height, mime-type, url}, in the source's order.
// A copy with an odd name, size or URL is left out; so is everything
// past maxImageSizes.
func imageSizes(raw json.RawMessage) []repository.ImageSize {
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	var out []repository.ImageSize
	for dec.More() && len(out) < maxImageSizes {
		tok, err := dec.Token()
		if err != nil {
			return out
		}
		name, _ := tok.(string)
		var z struct {
			Width    looseInt `json:"width"`
			Height   looseInt `json:"height"`
			MimeType string   `json:"mime-type"`
			URL      string   `json:"url"`
		}
		if err := dec.Decode(&z); err != nil {
			return out
		}
		w, h := imageDim(z.Width, maxImagePixels), imageDim(z.Height, maxImagePixels)
		okName := name != "" && len(name) <= 64 && !strings.ContainsFunc(name, func(r rune) bool {
			return (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (r < '0' || r > '9') && r != '-' && r != '_'
		})
		okMime := z.MimeType == "" || (len(z.MimeType) <= 64 && strings.HasPrefix(z.MimeType, "image/") && !strings.ContainsFunc(z.MimeType, unicode.IsSpace))
		if !okName || !okMime || w == 0 || h == 0 || len(z.URL) > limits.MaxURL || !values.WebURL(z.URL) {
			continue
		}
		out = append(out, repository.ImageSize{Name: name, Width: w, Height: h, MimeType: z.MimeType, URL: z.URL})
	}
	return out
}

// checkImage accepts an image the API would register: an ID in range and
// an http(s) URL of an image file (values.WebURL, values.ImageURLExtension)
// within the API's length limit; its extension, when given, one of an
// image file.
func checkImage(img *tecImage) error {
	if err := checkID(img.ID); err != nil {
		return fieldErr("image", "the image's ID: %v", err.(*fieldError).problem)
	}
	if err := checkLen("image", img.URL, limits.MaxURL); err != nil {
		return err
	}
	if !values.WebURL(img.URL) {
		return fieldErr("image", "%s is not an http or https URL this service stores (no white space, control characters, quotes, < > ` or \\)", shown(img.URL))
	}
	if _, ok := values.ImageURLExtension(img.URL); !ok {
		return fieldErr("image", "%s is not the URL of an image file", shown(img.URL))
	}
	return nil
}

// checkContact applies the API's contact-field rules to a value: empty
// passes; a control character or line separator (input.LineBreaking) is
// refused, as the API refuses it with 400; and valid (nil: any text) must
// accept the rest. Over-long values are refused too.
func checkContact(field, raw string, valid func(string) bool, want string) error {
	s := strings.TrimSpace(raw)
	switch {
	case raw == "":
		return nil
	case input.LineBreaking(raw):
		return fieldErr(field, "%s holds a line break, tab or other control character, which the API refuses", shown(raw))
	case valid != nil && !valid(s):
		return fieldErr(field, "%s is not %s, which the API refuses", shown(s), want)
	}
	max := limits.MaxShortText
	if field == "website" {
		max = limits.MaxURL
	}
	return checkLen(field, s, max)
}

// sourceCurrency is the currency an event's cost was shown with at the
// source: its symbol and where it stood ("prefix" or "suffix").
type sourceCurrency struct{ symbol, position string }

// sourceCost recovers an event's cost and the currency the source showed
// it with, from the source's formatted cost and its cost_details, so that
// the cost reads here exactly as the source displayed it:
//
//   - A symbol of the event's own (currency_symbol "€", written in its
//     cost): the formatted cost is the text ("€12"), and the symbol and
//     position are the event's.
//   - No symbol of its own: the source added the site's symbol to bare
//     amounts ("10" shows "$10", "5 - 15" "$5 – $15"). That symbol is
//     carried as the event's own and the amounts are kept as the source
//     wrote them, decimal commas included ("$12,50" is "12,50" with "$"
//     before it; "$5 – $15" is "5 - 15", the source's own range joint
//     undone).
//   - Anything else (words, "Free", a range from Free) stays as shown.
//
// A cost of "0" comes back as "" and cannot be told from no cost.
func sourceCost(formatted, symbol, position string) ([]string, sourceCurrency) {
	formatted = strings.TrimSpace(formatted)
	if formatted == "" {
		return nil, sourceCurrency{}
	}
	if symbol = strings.TrimSpace(symbol); symbol != "" {
		if currency.CheckSymbol(symbol) != "" {
			return []string{formatted}, sourceCurrency{}
		}
		pos := currency.Prefix
		if position == "postfix" || position == currency.Suffix {
			pos = currency.Suffix
		}
		return []string{formatted}, sourceCurrency{symbol, pos}
	}
	i := strings.IndexAny(formatted, "0123456789")
	if i < 0 {
		return []string{formatted}, sourceCurrency{}
	}
	j := strings.LastIndexAny(formatted, "0123456789")
	var cur sourceCurrency
	switch pre, post := strings.TrimSpace(formatted[:i]), strings.TrimSpace(formatted[j+1:]); {
	case pre != "" && currency.SymbolLike(pre):
		cur = sourceCurrency{pre, currency.Prefix}
	case pre == "" && post != "" && currency.SymbolLike(post):
		cur = sourceCurrency{post, currency.Suffix}
	default:
		return []string{formatted}, sourceCurrency{}
	}
	// The source joins a range with " – " of its own: the written range
	// had a hyphen.
	amounts := strings.TrimSpace(strings.ReplaceAll(strings.ReplaceAll(formatted, cur.symbol, ""), " – ", " - "))
	if strings.EqualFold(amounts, "free") || !currency.BareAmounts(amounts) {
		return []string{formatted}, sourceCurrency{}
	}
	return []string{amounts}, cur
}

// decodeErr names the field of a JSON type error.
func decodeErr(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fieldErr(te.Field, "has type %s, want %s", te.Value, te.Type)
	}
	return fieldErr("record", "not a JSON object: %v", err)
}
