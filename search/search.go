package search

import (
	"context"
	"errors"
	"math"
	"strconv"
)

// ErrUnavailable wraps engine failures the API reports as 503.
var ErrUnavailable = errors.New("search: engine unavailable")

// Opt is an explicit optional: a filter is applied only when Set.
type Opt[T any] struct {
	Value T
	Set   bool
}

// Some returns a set optional.
func Some[T any](v T) Opt[T] { return Opt[T]{Value: v, Set: true} }

// GeoPoint is a latitude/longitude pair in degrees.
type GeoPoint struct {
	Lat float64 `json:"lat"`
	Lng float64 `json:"lng"`
}

// GeoCircle is a point and a radius in kilometres.
type GeoCircle struct {
	Center   GeoPoint
	RadiusKm float64
}

// Text holds the searchable text of one document in one language, already
// resolved with the fallback to the default language field by field.
type Text struct {
	Title       string `json:"title"`
	Description string `json:"description"`
	Excerpt     string `json:"excerpt"`
}

// EventDocument is the flat document of one event. Every boolean and list
// is always present (false / empty), because a negative filter must not
// match documents that lack the field.
//
// A recurring event (a series) is indexed as one document per occurrence:
// each carries the series' ID and fields, the occurrence's own Start, End,
// StartLocal and EndLocal (and the fields an override of that occurrence
// changes), and its key in Occurrence. A single event is one document
// whose Occurrence is empty. A document is thus named by (ID, Occurrence)
// (DocumentKey).
type EventDocument struct {
	ID int64 `json:"id"`
	// Occurrence is the key of the occurrence ("20060102T150405", the
	// occurrence's original local start, which sorts as it does in time);
	// empty for a single event.
	Occurrence string `json:"occurrence,omitempty"`
	// Text is keyed by language code; every configured language is present.
	Text   map[string]Text `json:"text"`
	Status string          `json:"status"`
	Author int64           `json:"author"`
	// PublishDate is the post date (Unix seconds).
	PublishDate int64 `json:"publish_date"`
	// Start and End are the event's UTC instants (Unix seconds).
	Start int64 `json:"start"`
	End   int64 `json:"end"`
	// StartLocal and EndLocal are the wall-clock times in the site zone
	// written as if they were UTC (Unix seconds), for local-day rules.
	StartLocal       int64 `json:"start_local"`
	EndLocal         int64 `json:"end_local"`
	AllDay           bool  `json:"all_day"`
	Featured         bool  `json:"featured"`
	Ticketed         bool  `json:"ticketed"`
	Sticky           bool  `json:"sticky"`
	HideFromListings bool  `json:"hide_from_listings"`
	HasPassword      bool  `json:"has_password"`
	// EventStatus is the event's (or the occurrence's own) event status:
	// scheduled, canceled, postponed or moved_online. Empty (a document
	// stored before event statuses existed) reads as DefaultEventStatus
	// (EventDocument.Status).
	EventStatus string `json:"event_status"`
	// CategoryIDs holds the assigned categories and all their ancestors, so
	// a filter on a category also matches events in its children.
	CategoryIDs   []int64  `json:"category_ids"`
	CategorySlugs []string `json:"category_slugs"`
	TagIDs        []int64  `json:"tag_ids"`
	TagSlugs      []string `json:"tag_slugs"`
	VenueIDs      []int64  `json:"venue_ids"`
	OrganizerIDs  []int64  `json:"organizer_ids"`
	// Geo is the point of the first linked venue that has one.
	Geo      *GeoPoint `json:"geo,omitempty"`
	HasGeo   bool      `json:"has_geo"`
	ParentID int64     `json:"parent_id"`
}

// DefaultEventStatus is the event status of a document whose
// EventStatus is empty.
const DefaultEventStatus = "scheduled"

// EventStatusOf returns d's event status: EventStatus, or
// DefaultEventStatus when it is empty. Engines filter on it
// (EventQuery.EventStatuses).
func (d *EventDocument) EventStatusOf() string {
	if d.EventStatus == "" {
		return DefaultEventStatus
	}
	return d.EventStatus
}

// DocumentKey names one event document: "123" for a single event,
// "123-20270304T190000" for an occurrence of series 123. It is unique per
// document, made of digits, letters and '-' only (a valid Meilisearch
// document ID), and the engines store documents under it.
func DocumentKey(id int64, occurrence string) string {
	if occurrence == "" {
		return strconv.FormatInt(id, 10)
	}
	return strconv.FormatInt(id, 10) + "-" + occurrence
}

// Key returns DocumentKey of the document.
func (d EventDocument) Key() string { return DocumentKey(d.ID, d.Occurrence) }

// PlaceKind says which place index a document belongs to.
type PlaceKind string

// The place kinds.
const (
	Venues     PlaceKind = "venue"
	Organizers PlaceKind = "organizer"
)

// PlaceDocument is the flat document of one venue or organizer.
type PlaceDocument struct {
	ID          int64     `json:"id"`
	Kind        PlaceKind `json:"kind"`
	Status      string    `json:"status"`
	PublishDate int64     `json:"publish_date"`
	// Text is keyed by language (Title is the name), resolved with fallback.
	Text map[string]Text `json:"text"`
	// Fields holds the other searchable fields by name: address, city,
	// province, state, stateprovince, zip, phone (venues); phone, email,
	// website (organizers).
	Fields map[string]string `json:"fields"`
	// HasEvents: linked to at least one event whose status is not draft or
	// pending (trashed events count), as the original plugin counts them.
	HasEvents bool `json:"has_events"`
	// LastStart maps an event status to the latest start (Unix seconds) of
	// the linked events with that status; only_with_upcoming compares it
	// with "now" for the statuses the caller may see.
	LastStart map[string]int64 `json:"last_start"`
}

// EventSort orders event results.
type EventSort int

// The event orders.
//
// Every order ends with the occurrence key ascending (single events, whose
// key is empty, first), so that it is total over documents: two
// occurrences of one series have the same ID and publish date, and an
// override may move one to another's start.
const (
	// ByStart: start ascending, then ID ascending (the default).
	ByStart EventSort = iota
	// ByPublishDate: publish date ascending, then ID ascending (include).
	ByPublishDate
)

// EventQuery selects events. Unset optionals and empty lists do not filter;
// set filters combine with AND; the values of one list filter with OR.
type EventQuery struct {
	// Lang picks the Text used by Query.
	Lang string
	// Query is full-text search over title, description and excerpt by the
	// text-matching rules (text.go): every term of ParseQuery(Query) must
	// match a word of one of them.
	Query string
	// Statuses keeps events with one of these statuses.
	Statuses []string
	// Date bounds on Start and End (Unix seconds).
	StartGTE, StartGT, StartLT Opt[int64]
	EndLTE, EndLT, EndGT       Opt[int64]
	// IDs keeps only these events.
	IDs          []int64
	CategoryIDs  []int64
	TagIDs       []int64
	VenueIDs     []int64
	OrganizerIDs []int64
	Featured     Opt[bool]
	Ticketed     Opt[bool]
	HasGeo       Opt[bool]
	Near         Opt[GeoCircle]
	ParentID     Opt[int64]
	// EventStatuses keeps events with one of these event statuses
	// (EventDocument.EventStatus).
	EventStatuses []string
	// ExcludeHidden drops events hidden from listings.
	ExcludeHidden bool
	// ExcludeProtected drops password-protected events.
	ExcludeProtected bool
	Sort             EventSort
	// Relevance orders a text query best match first (Sort breaks ties);
	// without words in Query it changes nothing.
	Relevance bool
	// Facets asks for the number of matches (the whole result, not the
	// page) per value of each named facet (EventFacets). Matches are
	// documents: an occurrence counts as one.
	Facets []string
	// CollapseSeries lists each series once (the API's
	// hide_subsequent_recurrences): of the matching documents of one ID,
	// only the first in the query's order is kept, and Total counts the
	// documents kept; single events are unaffected. Facets still count
	// every matching document (occurrences): Meilisearch's distinct counts
	// facets over one document per series chosen by its internal order,
	// not the listed one, which an override of a venue or organizer would
	// make differ (see search/meili).
	CollapseSeries bool
	// Offset and Limit page the results; Limit 0 returns only the total.
	Offset, Limit int
}

// The event facets: the value of categories, tags, venue and organizer is
// an ID (an event counts once for each of its IDs; categories include the
// ancestors of the assigned ones, as CategoryIDs does); featured and
// ticketed count "true" and "false".
const (
	FacetCategories = "categories"
	FacetTags       = "tags"
	FacetVenue      = "venue"
	FacetOrganizer  = "organizer"
	FacetFeatured   = "featured"
	FacetTicketed   = "ticketed"
)

// EventFacets lists the facets an EventQuery may ask for.
var EventFacets = []string{FacetCategories, FacetTags, FacetVenue, FacetOrganizer, FacetFeatured, FacetTicketed}

// FacetValues returns the values an event counts for in a facet.
func FacetValues(d EventDocument, facet string) []string {
	ids := func(v []int64) []string {
		out := make([]string, 0, len(v))
		for _, id := range v {
			out = append(out, strconv.FormatInt(id, 10))
		}
		return out
	}
	switch facet {
	case FacetCategories:
		return ids(d.CategoryIDs)
	case FacetTags:
		return ids(d.TagIDs)
	case FacetVenue:
		return ids(d.VenueIDs)
	case FacetOrganizer:
		return ids(d.OrganizerIDs)
	case FacetFeatured:
		return []string{strconv.FormatBool(d.Featured)}
	case FacetTicketed:
		return []string{strconv.FormatBool(d.Ticketed)}
	}
	return nil
}

// PlaceQuery selects venues or organizers, ordered by publish date
// descending, then ID descending.
type PlaceQuery struct {
	Kind PlaceKind
	Lang string
	// Query: every term of ParseQuery(Query) must match a word of one
	// field (title, description, excerpt in Lang, or one of Fields), by the
	// text-matching rules (text.go).
	Query     string
	Statuses  []string
	IDs       []int64
	HasEvents Opt[bool]
	// UpcomingAfter keeps places with a linked event, of one of
	// UpcomingStatuses, starting at or after this instant.
	UpcomingAfter    Opt[int64]
	UpcomingStatuses []string
	Offset, Limit    int
}

// Result is one page of IDs, in order, and the exact number of matches.
type Result struct {
	IDs []int64
	// Occurrences holds, for event results, the occurrence key of each
	// entry of IDs ("" for a single event), parallel to IDs; place results
	// leave it nil. Engines may leave it nil when no entry of IDs is an
	// occurrence: read it with Occurrence.
	Occurrences []string
	// Total is the exact number of matching documents (occurrences count
	// one each; with CollapseSeries, the documents kept).
	Total int
	// Facets maps each requested facet to the number of matches per value
	// (values with no match are absent); nil when none was requested.
	Facets map[string]map[string]int
}

// Occurrence returns the occurrence key of the i-th entry of IDs ("" for a
// single event, or when Occurrences was left nil).
func (r Result) Occurrence(i int) string {
	if i < len(r.Occurrences) {
		return r.Occurrences[i]
	}
	return ""
}

// Engine is the search index contract.
type Engine interface {
	// Init creates the indexes if needed and reconciles their settings.
	Init(ctx context.Context) error
	// IndexEvents adds or replaces event documents; it returns once the
	// engine has applied them (searches see them). For every event ID
	// present in docs, the given documents replace all the documents of
	// that ID: occurrences not in docs are removed (a series replaced by
	// fewer occurrences, a series that became a single event and the
	// reverse). Within one call a later document of the same key wins.
	// So every document of an event must be in the same call: a caller
	// that splits its writes in batches keeps each event's documents
	// together (the sync worker does).
	IndexEvents(ctx context.Context, docs []EventDocument) error
	// IndexPlaces adds or replaces venue or organizer documents.
	IndexPlaces(ctx context.Context, docs []PlaceDocument) error
	// DeleteEvents removes every document (every occurrence) of the
	// events; missing IDs are not an error.
	DeleteEvents(ctx context.Context, ids []int64) error
	// DeletePlaces removes venues or organizers.
	DeletePlaces(ctx context.Context, kind PlaceKind, ids []int64) error
	// SearchEvents runs an event query.
	SearchEvents(ctx context.Context, q EventQuery) (Result, error)
	// SearchPlaces runs a venue or organizer query.
	SearchPlaces(ctx context.Context, q PlaceQuery) (Result, error)
	// CountEvents and CountPlaces return the number of indexed documents
	// (an occurrence is one event document).
	CountEvents(ctx context.Context) (int, error)
	CountPlaces(ctx context.Context, kind PlaceKind) (int, error)
	// Ping checks that the engine answers.
	Ping(ctx context.Context) error
	// Close releases the engine.
	Close() error
}

// EarthRadiusM is the earth radius of the contract's distance, in metres:
// Meilisearch's own (see DistanceM).
const EarthRadiusM = 6371e3

// MaxDistanceM is the largest distance DistanceM can return (half a great
// circle, rounded up): every point is within it of every other.
const MaxDistanceM = math.Pi*EarthRadiusM + 0.001

// radPerDeg is Rust's f64::to_radians factor, PI/180.0 rounded once in
// float64 arithmetic (the untyped constant expression would be exact).
var radPerDeg = func() float64 { pi := math.Pi; return pi / 180 }()

// DistanceM is the contract's distance between two points, in metres: the
// haversine distance exactly as Meilisearch computes it for _geoRadius, so
// that the Meilisearch engine can leave the whole circle to the server.
//
// Meilisearch's filter keeps a point when
// milli::distance_between_two_points(center, point) <= radius + f64::EPSILON,
// radius in metres as written in the filter (the GeoLowerThan arm of the
// filter's evaluation:
// https://github.com/meilisearch/meilisearch/blob/v1.18.0/crates/milli/src/search/facet/filter.rs#L670,
// unchanged in
// https://github.com/meilisearch/meilisearch/blob/v1.50.0/crates/milli/src/search/facet/filter/index_filter.rs#L567).
// distance_between_two_points
// (https://github.com/meilisearch/meilisearch/blob/v1.18.0/crates/milli/src/lib.rs#L325,
// v1.50.0 lib.rs#L386, geoutils 0.5.1 in both Cargo.lock files) is
// geoutils 0.5.1's Location::haversine_distance_to
// (https://github.com/srishanbhattarai/geoutils/blob/v0.5.1/src/formula.rs#L184):
// hav(θ) = (1 − cos θ)/2, h = hav(φ2 − φ1) + cos φ1 · cos φ2 · hav(λ2 − λ1),
// d = 2 · 6371e3 · asin(√h), rounded to the millimetre. This function does
// the same float64 operations in the same order (degrees to radians by
// Rust's to_radians factor, products kept from fusing). Only cos and asin
// may differ from Meilisearch's by a unit in the last place (Go's math
// package against the C library Meilisearch was built with), which moves h
// by a few 1e-16; see the Meilisearch engine's nearFilter for how it stays
// exact anyway.
func DistanceM(a, b GeoPoint) float64 {
	hav := func(theta float64) float64 { return (1 - math.Cos(theta)) / 2 }
	phi1, phi2 := a.Lat*radPerDeg, b.Lat*radPerDeg
	lambda1, lambda2 := a.Lng*radPerDeg, b.Lng*radPerDeg
	havDPhi := hav(phi2 - phi1)
	havDLambda := float64(float64(math.Cos(phi1)*math.Cos(phi2)) * hav(lambda2-lambda1))
	h := havDPhi + havDLambda
	return math.Round(2*EarthRadiusM*math.Asin(math.Sqrt(h))*1000) / 1000
}

// DistanceKm is DistanceM in kilometres, for display and test data; the
// circle rule itself is GeoCircle.Contains.
func DistanceKm(a, b GeoPoint) float64 { return DistanceM(a, b) / 1000 }

// RadiusM is the circle's radius in metres, the value both the rule
// (Contains) and a Meilisearch _geoRadius filter use.
func (c GeoCircle) RadiusM() float64 { return c.RadiusKm * 1000 }

// Contains is the contract's Near rule, Meilisearch's _geoRadius rule: p is
// inside when DistanceM(center, p) <= RadiusM() + 2^-52 (Rust's
// f64::EPSILON, added to the radius as Meilisearch does). A negative or NaN
// radius contains nothing.
func (c GeoCircle) Contains(p GeoPoint) bool {
	return DistanceM(c.Center, p) <= c.RadiusM()+0x1p-52
}
