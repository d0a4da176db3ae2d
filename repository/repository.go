// Package repository defines the calendar's domain types and the store
// contract that every storage engine implements.
//
// Two engines implement Store: repository/sqlite (the embedded default, one
// SQLite file under DATA_DIR) and repository/mongo (MongoDB). Both are checked
// by the shared conformance suite in repository/storetest.
//
// Design notes shared by the engines:
//
//   - Events, venues, organizers and images are "records" and share one ID
//     sequence (as WordPress posts do); categories and tags are "terms" and
//     share another. IDs are never reused.
//   - Text fields are stored per language (Text). Slugs are per language too and
//     unique per record kind (or label kind) and language; the engine makes a
//     requested slug unique by appending -2, -3, ... (also under concurrency).
//   - Updates are read-modify-write with a revision check: UpdateRecord reads the
//     record, applies the caller's function and writes it back only if nobody
//     wrote in between, retrying otherwise. No concurrent update is lost.
//   - Every write records an IndexMark ("this item needs indexing") in the same
//     transaction (SQLite) or before the write (MongoDB), so a crash at any
//     point is repaired by the sync worker, which lists and clears the marks.
package repository

import (
	"context"
	"errors"
	"strings"
	"time"
	"unicode/utf8"
)

// Errors returned by every engine. Callers test them with errors.Is.
var (
	// ErrNotFound means no record has the requested ID, slug or key.
	ErrNotFound = errors.New("repository: not found")
	// ErrDuplicate means a unique key (a user login) is already taken.
	ErrDuplicate = errors.New("repository: duplicate key")
	// ErrIDRange means an ID outside the range a store keeps: an
	// explicit ID above MaxExplicitID, or a sequence that reached MaxID.
	ErrIDRange = errors.New("repository: ID out of range")
)

// The ID range every engine keeps. IDs stay within what a JSON client
// that reads numbers as IEEE doubles (JavaScript) reads exactly, and a
// record created with an explicit ID (an import keeping its source's IDs)
// can never move a sequence so far that the sequence runs out: after the
// largest explicit ID, 2^52 IDs remain for the store's own creates.
const (
	// MaxID is the largest ID a store hands out or keeps (2^53 − 1).
	// A sequence that reached it refuses further draws with ErrIDRange;
	// it never wraps around or overflows.
	MaxID int64 = 1<<53 - 1
	// MaxExplicitID is the largest ID a caller may give a new record
	// (2^52 − 1); a larger one is refused with ErrIDRange and nothing is
	// written.
	MaxExplicitID int64 = 1<<52 - 1
)

// Kind names the kind of a record.
type Kind string

// The record kinds.
const (
	KindEvent     Kind = "event"
	KindVenue     Kind = "venue"
	KindOrganizer Kind = "organizer"
	KindImage     Kind = "image"
)

// LabelKind names the kind of a label.
type LabelKind string

// The label kinds.
const (
	LabelCategory LabelKind = "category"
	LabelTag      LabelKind = "tag"
)

// Post statuses, with WordPress's meaning.
const (
	StatusPublish = "publish"
	StatusFuture  = "future"
	StatusDraft   = "draft"
	StatusPending = "pending"
	StatusPrivate = "private"
	StatusTrash   = "trash"
)

// Statuses lists every registered record status.
var Statuses = []string{StatusPublish, StatusFuture, StatusDraft, StatusPending, StatusPrivate, StatusTrash}

// IsStatus reports whether s is a registered record status.
func IsStatus(s string) bool {
	for _, v := range Statuses {
		if v == s {
			return true
		}
	}
	return false
}

// Text holds one text field in several languages, keyed by language code.
type Text map[string]string

// Get returns the text in lang, falling back to the default language def
// and, where that has no text either, to the record's first language: the
// first of order (the configured languages) the text has, else the first
// language code in alphabetical order (docs/decisions.md, "Languages": a
// record written only in French still has its French title in an English
// list).
func (t Text) Get(lang, def string, order ...string) string {
	if v := t[lang]; v != "" {
		return v
	}
	if v := t[def]; v != "" {
		return v
	}
	return t[t.First(order...)]
}

// First returns the first language of order that t has text in, else the
// alphabetically first language it has text in, else "".
func (t Text) First(order ...string) string {
	for _, l := range order {
		if t[l] != "" {
			return l
		}
	}
	first := ""
	for l, v := range t {
		if v != "" && (first == "" || l < first) {
			first = l
		}
	}
	return first
}

// Has reports whether the text has a non-empty value in lang.
func (t Text) Has(lang string) bool { return t[lang] != "" }

// Set stores v as the lang translation; an empty v removes that translation.
func (t *Text) Set(lang, v string) {
	if *t == nil {
		*t = Text{}
	}
	if v == "" {
		delete(*t, lang)
		return
	}
	(*t)[lang] = v
}

// Clone returns a copy of t.
func (t Text) Clone() Text {
	if t == nil {
		return nil
	}
	c := make(Text, len(t))
	for k, v := range t {
		c[k] = v
	}
	return c
}

// Record is an event, venue, organizer or registered image. Fields shared by
// every kind sit at the top level; kind-specific fields sit in the one
// matching sub-struct (Event, Venue, Organizer or Image), the others are nil.
type Record struct {
	ID       int64  `json:"id" bson:"_id"`
	Kind     Kind   `json:"kind" bson:"kind"`
	Author   int64  `json:"author" bson:"author"`
	Status   string `json:"status" bson:"status"`
	Password string `json:"password,omitempty" bson:"password,omitempty"`
	// Date is the publish date (UTC); Modified the last modification (UTC).
	Date     time.Time `json:"date" bson:"date"`
	Modified time.Time `json:"modified" bson:"modified"`
	// Title is the event title, venue name or organizer name.
	Title   Text `json:"title,omitempty" bson:"title,omitempty"`
	Content Text `json:"content,omitempty" bson:"content,omitempty"`
	Excerpt Text `json:"excerpt,omitempty" bson:"excerpt,omitempty"`
	// Slug holds the slug per language; the engine keeps each unique per
	// kind and language.
	Slug Text `json:"slug,omitempty" bson:"slug,omitempty"`
	// ImageID is the featured image (a KindImage record), 0 for none.
	ImageID int64 `json:"image_id,omitempty" bson:"image_id,omitempty"`
	// Revision is incremented by every write; engines use it for the
	// compare-and-swap of UpdateRecord. Callers never set it.
	Revision int64 `json:"revision" bson:"revision"`
	// Origin is set on imported records (origin.go); nil otherwise.
	Origin *Origin `json:"origin,omitempty" bson:"origin,omitempty"`
	// Source is set on events imported from a calendar source
	// (sources.go); nil for events made here.
	Source *SourceLink `json:"source,omitempty" bson:"source,omitempty"`

	Event     *EventFields     `json:"event,omitempty" bson:"event,omitempty"`
	Venue     *VenueFields     `json:"venue,omitempty" bson:"venue,omitempty"`
	Organizer *OrganizerFields `json:"organizer,omitempty" bson:"organizer,omitempty"`
	Image     *ImageFields     `json:"image,omitempty" bson:"image,omitempty"`
}

// EventFields are the fields only events have.
type EventFields struct {
	// Timezone is the event's IANA zone or a UTC±N offset; "" means the site zone.
	Timezone string `json:"timezone,omitempty" bson:"timezone,omitempty"`
	AllDay   bool   `json:"all_day" bson:"all_day"`
	// StartLocal and EndLocal are wall-clock "2006-01-02 15:04:05" in the
	// event's zone; StartUTC and EndUTC are the same instants.
	StartLocal string    `json:"start_local" bson:"start_local"`
	EndLocal   string    `json:"end_local" bson:"end_local"`
	StartUTC   time.Time `json:"start_utc" bson:"start_utc"`
	EndUTC     time.Time `json:"end_utc" bson:"end_utc"`
	// Cost is the cost as written: one element for a string, several for a list.
	Cost []string `json:"cost,omitempty" bson:"cost,omitempty"`
	// CurrencySymbol, CurrencyCode (ISO 4217, upper case) and
	// CurrencyPosition ("prefix" or "suffix") are the event's own
	// currency; "" leaves the site's setting in effect.
	CurrencySymbol   string `json:"currency_symbol,omitempty" bson:"currency_symbol,omitempty"`
	CurrencyCode     string `json:"currency_code,omitempty" bson:"currency_code,omitempty"`
	CurrencyPosition string `json:"currency_position,omitempty" bson:"currency_position,omitempty"`
	// Website is nil when never set (responses then fall back to the permalink).
	Website          *string `json:"website,omitempty" bson:"website,omitempty"`
	ShowMap          bool    `json:"show_map" bson:"show_map"`
	ShowMapLink      bool    `json:"show_map_link" bson:"show_map_link"`
	HideFromListings bool    `json:"hide_from_listings" bson:"hide_from_listings"`
	Sticky           bool    `json:"sticky" bson:"sticky"`
	Featured         bool    `json:"featured" bson:"featured"`
	Ticketed         bool    `json:"ticketed" bson:"ticketed"`
	// EventStatus says whether the event takes place as planned: ""
	// (scheduled, EventScheduled), EventCanceled, EventPostponed or
	// EventMovedOnline. EventStatusReason is the editor's plain-text
	// explanation ("" for none).
	EventStatus       string `json:"event_status,omitempty" bson:"event_status,omitempty"`
	EventStatusReason string `json:"event_status_reason,omitempty" bson:"event_status_reason,omitempty"`
	// Linked records, in the order the client gave them.
	Categories []int64 `json:"categories" bson:"categories"`
	Tags       []int64 `json:"tags" bson:"tags"`
	Venues     []int64 `json:"venues" bson:"venues"`
	Organizers []int64 `json:"organizers" bson:"organizers"`
	// Parent is the parent event (recurring series), 0 for none.
	Parent int64 `json:"parent" bson:"parent"`
	// Recurrence makes the event a series (nil: a single event). Its own
	// start and end are the first occurrence; see package
	// app/calendar/recurrence for the expansion into occurrences.
	Recurrence *Recurrence `json:"recurrence,omitempty" bson:"recurrence,omitempty"`
	// Overrides are the changes to single occurrences of the series, at
	// most one per occurrence key. A cancelled occurrence is an exclusion
	// instead (Recurrence.Exclusions).
	Overrides []OccurrenceOverride `json:"overrides,omitempty" bson:"overrides,omitempty"`
	// Documents is how many search-index documents the event made when
	// it was last written through the API: 1 for a single event, its
	// occurrences up to the horizon for a series. 0 (records written
	// otherwise or before it existed) counts as 1. The stores sum it per
	// author (Store.AccountDocuments) for MAX_ACCOUNT_DOCUMENTS.
	Documents int `json:"documents,omitempty" bson:"documents,omitempty"`
}

// Recurrence is a series' rule set, as the client wrote it (RFC 5545).
// Rules are RRULE values without the "RRULE:" prefix
// ("FREQ=WEEKLY;BYDAY=TU,TH"); Exclusions (EXDATE) and Additions (RDATE)
// are occurrence start times "2006-01-02 15:04:05" in the event's zone.
type Recurrence struct {
	Rules      []string `json:"rules" bson:"rules"`
	Exclusions []string `json:"exclusions" bson:"exclusions"`
	Additions  []string `json:"additions" bson:"additions"`
}

// Clone returns a deep copy of r (nil for nil).
func (r *Recurrence) Clone() *Recurrence {
	if r == nil {
		return nil
	}
	return &Recurrence{
		Rules:      append([]string{}, r.Rules...),
		Exclusions: append([]string{}, r.Exclusions...),
		Additions:  append([]string{}, r.Additions...),
	}
}

// OccurrenceOverride changes one occurrence of a series, named by its key
// (the occurrence's original local start, "20060102T150405"). Nil fields
// keep the series' value; a text field replaces the languages it has.
type OccurrenceOverride struct {
	Key     string `json:"key" bson:"key"`
	Title   Text   `json:"title,omitempty" bson:"title,omitempty"`
	Content Text   `json:"content,omitempty" bson:"content,omitempty"`
	Excerpt Text   `json:"excerpt,omitempty" bson:"excerpt,omitempty"`
	// StartLocal and EndLocal move the occurrence ("2006-01-02 15:04:05"
	// in the event's zone); the key stays the original start.
	StartLocal *string `json:"start_local,omitempty" bson:"start_local,omitempty"`
	EndLocal   *string `json:"end_local,omitempty" bson:"end_local,omitempty"`
	// Status is the occurrence's record status (nil: the series' status).
	Status     *string   `json:"status,omitempty" bson:"status,omitempty"`
	Venues     *[]int64  `json:"venues,omitempty" bson:"venues,omitempty"`
	Organizers *[]int64  `json:"organizers,omitempty" bson:"organizers,omitempty"`
	Cost       *[]string `json:"cost,omitempty" bson:"cost,omitempty"`
	Website    *string   `json:"website,omitempty" bson:"website,omitempty"`
	Featured   *bool     `json:"featured,omitempty" bson:"featured,omitempty"`
	// EventStatus and EventStatusReason are the occurrence's own event
	// status and reason (nil: the series'); a cancelled occurrence stays
	// listed with EventStatus EventCanceled.
	EventStatus       *string `json:"event_status,omitempty" bson:"event_status,omitempty"`
	EventStatusReason *string `json:"event_status_reason,omitempty" bson:"event_status_reason,omitempty"`
	// Cancelled is kept false by the service: an occurrence removed from
	// the series is written as an exclusion, and a cancelled one keeps
	// its date with EventStatus. Expansions skip an override that has it.
	Cancelled bool `json:"cancelled" bson:"cancelled"`
}

// The event statuses (EventFields.EventStatus). EventScheduled is stored
// as "".
const (
	EventScheduled   = "scheduled"
	EventCanceled    = "canceled"
	EventPostponed   = "postponed"
	EventMovedOnline = "moved_online"
)

// EventStatuses lists every event status, the default first.
var EventStatuses = []string{EventScheduled, EventCanceled, EventPostponed, EventMovedOnline}

// StatusOf returns the event status s names ("" is EventScheduled), and
// whether it is one of EventStatuses.
func StatusOf(s string) (string, bool) {
	if s == "" {
		return EventScheduled, true
	}
	for _, v := range EventStatuses {
		if s == v {
			return v, true
		}
	}
	return s, false
}

// Status returns the event's status: one of EventStatuses, EventScheduled
// when none was set.
func (e *EventFields) Status() string {
	s, _ := StatusOf(e.EventStatus)
	return s
}

// Override returns the override of the occurrence key, or nil.
func (e *EventFields) Override(key string) *OccurrenceOverride {
	for i := range e.Overrides {
		if e.Overrides[i].Key == key {
			return &e.Overrides[i]
		}
	}
	return nil
}

// OverrideTextBytes returns the bytes of text the overrides hold together:
// their titles, descriptions and excerpts in every language. It is what
// the service bounds per series (MAX_SERIES_OVERRIDE_TEXT): each override's
// text is indexed with its occurrence and kept in the series' record.
func (e *EventFields) OverrideTextBytes() int {
	n := 0
	for i := range e.Overrides {
		for _, t := range []Text{e.Overrides[i].Title, e.Overrides[i].Content, e.Overrides[i].Excerpt} {
			for _, v := range t {
				n += len(v)
			}
		}
	}
	return n
}

// VenueFields are the fields only venues have. Address fields are shared by
// all languages.
type VenueFields struct {
	Address       string   `json:"address,omitempty" bson:"address,omitempty"`
	City          string   `json:"city,omitempty" bson:"city,omitempty"`
	Country       string   `json:"country,omitempty" bson:"country,omitempty"`
	Province      string   `json:"province,omitempty" bson:"province,omitempty"`
	State         string   `json:"state,omitempty" bson:"state,omitempty"`
	StateProvince string   `json:"stateprovince,omitempty" bson:"stateprovince,omitempty"`
	Zip           string   `json:"zip,omitempty" bson:"zip,omitempty"`
	Phone         string   `json:"phone,omitempty" bson:"phone,omitempty"`
	Website       string   `json:"website,omitempty" bson:"website,omitempty"`
	ShowMap       bool     `json:"show_map" bson:"show_map"`
	ShowMapLink   bool     `json:"show_map_link" bson:"show_map_link"`
	GeoLat        *float64 `json:"geo_lat,omitempty" bson:"geo_lat,omitempty"`
	GeoLng        *float64 `json:"geo_lng,omitempty" bson:"geo_lng,omitempty"`
}

// OrganizerFields are the fields only organizers have.
type OrganizerFields struct {
	Phone   string `json:"phone,omitempty" bson:"phone,omitempty"`
	Website string `json:"website,omitempty" bson:"website,omitempty"`
	Email   string `json:"email,omitempty" bson:"email,omitempty"`
}

// ImageFields describe a registered image. The service never fetches the
// URL, so only what the URL itself tells is known.
type ImageFields struct {
	URL       string `json:"url" bson:"url"`
	Extension string `json:"extension,omitempty" bson:"extension,omitempty"`
	// Width and Height (pixels), Filesize (bytes) and Sizes (the smaller
	// copies) are known only where an importer got them from its source;
	// 0 and nil for unknown.
	Width    int64       `json:"width,omitempty" bson:"width,omitempty"`
	Height   int64       `json:"height,omitempty" bson:"height,omitempty"`
	Filesize int64       `json:"filesize,omitempty" bson:"filesize,omitempty"`
	Sizes    []ImageSize `json:"sizes,omitempty" bson:"sizes,omitempty"`
}

// ImageSize is one smaller copy of an image, as WordPress makes them
// ("thumbnail", "medium", ...), in the source's order.
type ImageSize struct {
	Name     string `json:"name" bson:"name"`
	Width    int64  `json:"width" bson:"width"`
	Height   int64  `json:"height" bson:"height"`
	MimeType string `json:"mime_type,omitempty" bson:"mime_type,omitempty"`
	URL      string `json:"url" bson:"url"`
}

// Label is an event category or an event tag.
type Label struct {
	ID          int64     `json:"id" bson:"_id"`
	Taxonomy    LabelKind `json:"taxonomy" bson:"taxonomy"`
	Name        Text      `json:"name,omitempty" bson:"name,omitempty"`
	Description Text      `json:"description,omitempty" bson:"description,omitempty"`
	Slug        Text      `json:"slug,omitempty" bson:"slug,omitempty"`
	// Parent is the parent category, 0 for none (always 0 for tags).
	Parent   int64 `json:"parent" bson:"parent"`
	Revision int64 `json:"revision" bson:"revision"`
	// Origin is set on imported labels (origin.go); nil otherwise.
	Origin *Origin `json:"origin,omitempty" bson:"origin,omitempty"`
	// NameKeys is engine-internal: the MongoDB engine stores the folded
	// "<lang>:<name>" of every translation here for its name index. It is
	// empty in every label an engine returns; callers never set it.
	NameKeys []string `json:"-" bson:"name_keys,omitempty"`
}

// Role is a user's role, with WordPress's meaning.
type Role string

// The roles, from least to most capable.
const (
	RoleContributor Role = "contributor"
	RoleAuthor      Role = "author"
	RoleEditor      Role = "editor"
	RoleAdmin       Role = "admin"
)

// Roles lists every role, least capable first.
var Roles = []Role{RoleContributor, RoleAuthor, RoleEditor, RoleAdmin}

// ParseRole returns the role named s.
func ParseRole(s string) (Role, bool) {
	for _, r := range Roles {
		if string(r) == strings.ToLower(strings.TrimSpace(s)) {
			return r, true
		}
	}
	return "", false
}

// User is an account that may authenticate with tokens.
type User struct {
	ID      int64     `json:"id" bson:"_id"`
	Login   string    `json:"login" bson:"login"`
	Role    Role      `json:"role" bson:"role"`
	Created time.Time `json:"created" bson:"created"`
	// Disabled users cannot authenticate (their tokens are refused).
	Disabled bool `json:"disabled" bson:"disabled"`
	// Email is the user's e-mail address ("" when unknown); users
	// imported from WordPress keep theirs. It is never shown by the API.
	Email string `json:"email,omitempty" bson:"email,omitempty"`
	// Origin is set on users imported from WordPress (eventcal import
	// --users): the site and the user's ID there, which map the source's
	// authors to users here. Hash covers login, e-mail and role.
	Origin *Origin `json:"origin,omitempty" bson:"origin,omitempty"`
}

// Token is an API token; only the SHA-256 hash of the secret is stored.
type Token struct {
	Hash    string    `json:"hash" bson:"_id"`
	UserID  int64     `json:"user_id" bson:"user_id"`
	Created time.Time `json:"created" bson:"created"`
	// Name says what the token is for ("ci", "laptop"); may be empty.
	Name string `json:"name" bson:"name"`
	// LastUsed is the last successful authentication (zero: never), kept
	// to the minute (see TokenTouchInterval).
	LastUsed time.Time `json:"last_used" bson:"last_used"`
	// Expires is when the token stops working (zero: never).
	Expires time.Time `json:"expires" bson:"expires"`
}

// MarkKind says what an IndexMark refers to.
type MarkKind string

// The kinds of IndexMark.
const (
	MarkPost MarkKind = "post"
	MarkTerm MarkKind = "term"
)

// IndexMark records that a record or label changed (was created, updated or
// deleted) and needs (re)indexing. Seq grows with every write of the same
// item, so ClearMarks only clears marks that no later write has renewed.
type IndexMark struct {
	Kind MarkKind `json:"kind" bson:"kind"`
	ID   int64    `json:"id" bson:"id"`
	Seq  int64    `json:"seq" bson:"seq"`
	// At is when the mark was (last) recorded.
	At time.Time `json:"at" bson:"at"`
	// Attempts, LastError and NextAttempt record the sync worker's failed
	// attempts to index the item as of this Seq (FailMark): how many
	// there were, the last one's error (short, fit to show an operator)
	// and when the next attempt is due. They are zero for a mark that
	// never failed; a newer write to the item resets them (its content
	// may index fine).
	Attempts    int       `json:"attempts,omitempty" bson:"attempts,omitempty"`
	LastError   string    `json:"last_error,omitempty" bson:"error,omitempty"`
	NextAttempt time.Time `json:"next_attempt,omitzero" bson:"next,omitempty"`
}

// MaxMarkErrorBytes bounds IndexMark.LastError: FailMark keeps at most
// this many bytes of it (cut at a character boundary).
const MaxMarkErrorBytes = 300

// TruncateMarkError cuts s to at most MaxMarkErrorBytes bytes, at a
// UTF-8 character boundary, marking a cut with "…".
func TruncateMarkError(s string) string {
	if len(s) <= MaxMarkErrorBytes {
		return s
	}
	cut := MaxMarkErrorBytes - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// RecordQuery selects records. Zero-valued fields do not filter; set fields
// combine with AND. Results are ordered by ID ascending.
type RecordQuery struct {
	Kind Kind
	// Statuses keeps records whose status is one of these.
	Statuses []string
	// ExcludeStatuses drops records whose status is one of these.
	ExcludeStatuses []string
	// IDs keeps records with one of these IDs.
	IDs []int64
	// Events linking any of these venues / organizers / categories / tags.
	VenueIDs     []int64
	OrganizerIDs []int64
	CategoryIDs  []int64
	TagIDs       []int64
	// Title keeps records whose title in TitleLang equals Title, ignoring case
	// (used for the venue and organizer duplicate detection).
	Title     string
	TitleLang string
	// ImageURL keeps images registered with exactly this URL.
	ImageURL string
	// Parent keeps events whose parent is this event.
	Parent int64
	// AfterID keeps records with a larger ID (for iterating in pages).
	AfterID int64
	// Limit caps the number of results; 0 means no cap.
	Limit int
}

// LabelQuery selects labels of one label kind, ordered by ID ascending.
type LabelQuery struct {
	Taxonomy LabelKind
	IDs      []int64
	// Name keeps labels whose name in NameLang equals Name, ignoring case.
	Name     string
	NameLang string
	// Slug keeps labels whose slug in SlugLang equals Slug.
	Slug     string
	SlugLang string
	// Parent keeps labels with this parent when HasParent is set.
	Parent    int64
	HasParent bool
}

// Store is the storage contract. Every call takes the request context.
// Errors other than ErrNotFound and ErrDuplicate mean the store failed.
// It is the union of the contracts of each concern, which a part of the
// program that needs only one can ask for instead.
type Store interface {
	RecordStore
	LabelStore
	AccountStore
	Locker
	MarkStore
	JobStateStore

	// WebhookStore holds the webhook endpoints, the item states their
	// messages reported and the delivery queue (webhooks.go).
	WebhookStore
	// EventLinks aggregates event links for the sync worker (aggregates.go).
	EventLinks
	// SourceStore holds the calendar sources and their runs, and finds
	// the events each imported (sources.go).
	SourceStore
	// PortableStore reads and raises the ID sequences for a portable
	// export and load (portable.go).
	PortableStore

	// Ping checks that the store is reachable.
	Ping(ctx context.Context) error
	// Close releases the store's resources.
	Close(ctx context.Context) error
}

// RecordStore stores the records: events, venues, organizers and images.
type RecordStore interface {
	// CreateRecord assigns p.ID from the record sequence (when 0), makes every
	// slug unique for p.Kind and its language, sets Revision, stores p and
	// records an index mark. p is updated in place. An explicit p.ID (an
	// import keeping its source's IDs, a load) must not be held by a
	// stored record (ErrDuplicate otherwise, nothing written), is at most
	// MaxExplicitID (ErrIDRange otherwise) and moves the sequence past it,
	// so later records never draw it. With an explicit ID and a Revision
	// above 0 the record keeps that revision (a load keeps the revision
	// the webhook item states refer to); otherwise it gets revision 1. A
	// caller that creates a record it read elsewhere and means it to start
	// afresh must zero Revision.
	CreateRecord(ctx context.Context, p *Record) error
	// GetRecord returns the record with this ID, of any kind, or ErrNotFound.
	GetRecord(ctx context.Context, id int64) (*Record, error)
	// GetRecords returns the records that exist among ids, keyed by ID.
	GetRecords(ctx context.Context, ids []int64) (map[int64]*Record, error)
	// GetRecordBySlug returns the record of this kind whose slug in lang is slug.
	GetRecordBySlug(ctx context.Context, kind Kind, lang, slug string) (*Record, error)
	// UpdateRecord reads the record, calls fn on it and stores the result if no
	// other write happened in between, retrying otherwise. Slugs changed by
	// fn are made unique again. fn may be called more than once and must not
	// change ID or Kind. An error from fn aborts the update and is returned.
	UpdateRecord(ctx context.Context, id int64, fn func(p *Record) error) (*Record, error)
	// DeleteRecord removes the record permanently (and its slugs) and records
	// an index mark. It returns ErrNotFound when there is no such record.
	DeleteRecord(ctx context.Context, id int64) error
	// FindRecords returns the records matching q, by ID ascending.
	FindRecords(ctx context.Context, q RecordQuery) ([]*Record, error)
	// CountRecords returns how many records match q (ignoring AfterID/Limit).
	CountRecords(ctx context.Context, q RecordQuery) (int, error)
	// AccountDocuments returns the sum of EventFields.Documents (0 counts
	// as 1) over the events of every status whose author is author: the
	// search-index documents the account's events make. Its cost does not
	// grow with the store, only (MongoDB) with the account's events.
	AccountDocuments(ctx context.Context, author int64) (int, error)
	// UnlinkRecord removes venue or organizer id from every event that links it
	// and records index marks for those events. It returns the events changed.
	UnlinkRecord(ctx context.Context, id int64) ([]int64, error)
}

// LabelStore stores the labels: categories and tags.
type LabelStore interface {
	// CreateLabel assigns t.ID from the label sequence (when 0), makes every
	// slug unique for its label kind and language, stores t and records an
	// index mark. An explicit t.ID, and the Revision kept with it,
	// behave as in CreateRecord.
	CreateLabel(ctx context.Context, t *Label) error
	// GetLabel returns the label with this ID, of either label kind, or ErrNotFound.
	GetLabel(ctx context.Context, id int64) (*Label, error)
	// GetLabels returns the labels that exist among ids, keyed by ID.
	GetLabels(ctx context.Context, ids []int64) (map[int64]*Label, error)
	// FindLabels returns the labels matching q, by ID ascending.
	FindLabels(ctx context.Context, q LabelQuery) ([]*Label, error)
	// UpdateLabel is UpdateRecord for labels.
	UpdateLabel(ctx context.Context, id int64, fn func(t *Label) error) (*Label, error)
	// DeleteLabel removes the label permanently, removes it from every event
	// (recording marks for them) and records a mark for the label. Child
	// categories move up to the deleted term's parent, as in WordPress.
	DeleteLabel(ctx context.Context, id int64) error
	// LabelCounts returns, for each label of the label kind used by at least one
	// published event, how many published events use it.
	LabelCounts(ctx context.Context, tax LabelKind) (map[int64]int, error)
}

// AccountStore stores the user accounts and their API tokens.
type AccountStore interface {
	// CreateUser assigns u.ID (when 0) and stores u; a taken login, or an
	// explicit u.ID a stored user holds, is ErrDuplicate. An explicit ID
	// is at most MaxExplicitID (ErrIDRange) and moves the user sequence
	// past it.
	CreateUser(ctx context.Context, u *User) error
	// GetUser returns the user with this ID or ErrNotFound.
	GetUser(ctx context.Context, id int64) (*User, error)
	// GetUserByLogin returns the user with this login or ErrNotFound.
	GetUserByLogin(ctx context.Context, login string) (*User, error)
	// CreateToken stores a token (its hash) for an existing user: an
	// unknown user is ErrNotFound, a hash already stored ErrDuplicate
	// (nothing written either way).
	CreateToken(ctx context.Context, t *Token) error
	// UserByTokenHash returns the user owning the token with this hash.
	UserByTokenHash(ctx context.Context, hash string) (*User, error)
	// ListUsers returns every user, by ID ascending.
	ListUsers(ctx context.Context) ([]*User, error)
	// UpdateUser stores the Role, Disabled flag, Email and Origin of u for
	// the existing user u.ID (ErrNotFound when there is none); its login
	// and creation time are kept.
	UpdateUser(ctx context.Context, u *User) error
	// TokenByHash returns the token with this hash or ErrNotFound.
	TokenByHash(ctx context.Context, hash string) (*Token, error)
	// ListTokens returns the tokens of the user userID (of every user when
	// 0), oldest first.
	ListTokens(ctx context.Context, userID int64) ([]*Token, error)
	// RevokeToken deletes the token whose public ID (Token.ID) is id, or
	// returns ErrNotFound.
	RevokeToken(ctx context.Context, id string) error
	// TouchToken records at as the last use of the token with this hash.
	TouchToken(ctx context.Context, hash string, at time.Time) error
}

// Locker serialises work across the processes sharing a store.
type Locker interface {
	// Exclusive runs fn while holding the lock named key: no two calls of
	// Exclusive with one key run fn at once, in this process or (for
	// engines shared by several processes) in any other. It serialises a
	// look-up-then-create such as label names and venue duplicate detection.
	// fn must be short (MongoDB takes over a lock held past its lease).
	Exclusive(ctx context.Context, key string, fn func(ctx context.Context) error) error
}

// MarkStore holds the index marks: the items whose search-index entries
// must be brought up to date.
type MarkStore interface {
	// PendingMarks returns up to limit index marks, oldest first, those
	// waiting for a retry after a failure included.
	PendingMarks(ctx context.Context, limit int) ([]IndexMark, error)
	// DueMarks returns up to limit index marks due at now, in the order of
	// PendingMarks: every mark that never failed, and the failed ones
	// whose NextAttempt is not after now. The sync worker takes its
	// batches from it, so a mark waiting for a retry holds no other back.
	DueMarks(ctx context.Context, now time.Time, limit int) ([]IndexMark, error)
	// FailMark records a failed attempt to index m's item: it sets the
	// mark's Attempts, LastError (cut by TruncateMarkError) and
	// NextAttempt to m's, unless the item was written again since m was
	// read (its Seq changed: the new write starts without failures). A
	// mark already cleared is left cleared.
	FailMark(ctx context.Context, m IndexMark) error
	// FailingMarks returns up to limit marks with failed attempts (those
	// with Attempts > 0), soonest next attempt first, and how many there
	// are in all.
	FailingMarks(ctx context.Context, limit int) ([]IndexMark, int, error)
	// ClearMarks removes the given marks, except those whose Seq changed
	// since they were read (the item was written again meanwhile).
	ClearMarks(ctx context.Context, marks []IndexMark) error
	// MarkForIndexing records marks without changing the items (used to
	// request a reindex of items that depend on a changed item).
	MarkForIndexing(ctx context.Context, kind MarkKind, ids []int64) error
}

// JobStateStore holds the small persisted state of the periodic jobs.
type JobStateStore interface {
	// GetJobState returns the value SetJobState last stored under key,
	// with found false (and no error) when none was. It is the small
	// persisted state of the service's periodic jobs, such as when the
	// sync schedule last rolled the recurrence horizon. Keys and values
	// are short strings; a value reads back exactly as it was stored.
	GetJobState(ctx context.Context, key string) (value string, found bool, err error)
	// SetJobState stores value under key, replacing any earlier value
	// (an upsert). It records no index mark.
	SetJobState(ctx context.Context, key, value string) error
}

// OccurrenceStatus is the status an occurrence of a series whose status is
// series has, given the occurrence's override (nil: none). An occurrence
// is never more visible than its series: while the series is not
// published, every occurrence has the series' status, whatever its
// override says; once the series is published, an override's status (a
// draft or private occurrence, say) applies.
func OccurrenceStatus(series string, ov *OccurrenceOverride) string {
	if series != StatusPublish || ov == nil || ov.Status == nil || *ov.Status == "" {
		return series
	}
	return *ov.Status
}
