// Package limits declares, once, every bound the service puts on its input:
// HTTP connections and bodies, the length of each kind of text field, the
// number of linked items per event, list paging, dates and indexed words.
// The HTTP layer (app), the interface document and the index document
// builder (sync/indexing) read them from here; docs/operators.md, "Limits", states
// the same numbers.
//
// Text lengths are counted in characters (Unicode code points), as
// WordPress's maxLength schema keyword and its varchar columns count them.
// The field lengths follow WordPress's columns where those are small
// (post_name and term names are varchar(200), post_password varchar(255))
// and are chosen well below the longtext columns (post_title,
// post_content) where WordPress's own bound is the 4 GB column size.
package limits

import "time"

// HTTP server bounds. A connection holds at most ReadBufferBytes for its
// headers plus BodyPrefetchBytes of its body before the handler runs:
// bodies are streamed (never preallocated from Content-Length) and read by
// the handler up to MaxBodyBytes, and only after the caller is
// authenticated. An anonymous write announcing more than BodyPrefetchBytes
// is answered from its headers alone. How long a client may take to send
// its headers (HEADER_TIMEOUT), how many connections the process and one
// address may hold (MAX_CONNECTIONS, MAX_CONNECTIONS_PER_ADDRESS) and how
// many bytes of bodies may be held at once (BODY_MEMORY_MIB,
// BODY_MEMORY_PER_CALLER_MIB) are settings (config package).
const (
	// MaxBodyBytes is the largest request body accepted (413 above it). The
	// largest legitimate body is an event with a MaxDescription description.
	MaxBodyBytes = 1 << 20
	// BodyPrefetchBytes is how much of a body fasthttp reads with the
	// headers, before any handler runs (its fixed read-ahead).
	BodyPrefetchBytes = 8 << 10
	// DefaultMaxConnections is the default of MAX_CONNECTIONS, the number
	// of connections held open at once.
	DefaultMaxConnections = 4096
	// ReadBufferBytes bounds the request line and headers (431 above it).
	ReadBufferBytes = 8 << 10
	// ReadTimeout bounds the time to read one request's body, counted from
	// the end of its headers (the headers have HEADER_TIMEOUT): a client
	// that sends slowly is cut off after it.
	ReadTimeout = 15 * time.Second
	// WriteTimeout bounds the time to write one response.
	WriteTimeout = 30 * time.Second
	// IdleTimeout closes a keep-alive connection that sends nothing.
	IdleTimeout = 60 * time.Second
)

// Text field lengths, in characters.
const (
	// MaxTitle bounds event titles and venue and organizer names.
	MaxTitle = 1000
	// MaxTermName bounds category and tag names (WordPress: varchar(200)).
	MaxTermName = 200
	// MaxSlug bounds slugs as sent (WordPress's post_name: varchar(200)).
	MaxSlug = 200
	// MaxDescription bounds event, venue, organizer and term descriptions.
	MaxDescription = 200_000
	// MaxExcerpt bounds excerpts.
	MaxExcerpt = 20_000
	// MaxShortText bounds the other one-line fields: address, city,
	// country, province, state, zip, phone, e-mail, each cost item.
	MaxShortText = 1000
	// MaxURL bounds website and image URLs.
	MaxURL = 2000
	// MaxPassword bounds event passwords (WordPress: varchar(255)).
	MaxPassword = 255
	// MaxQueryText bounds free-text list parameters (search, slug).
	MaxQueryText = 1000
)

// Item counts.
const (
	// MaxTermsPerField bounds the categories, and the tags, of one event.
	MaxTermsPerField = 100
	// MaxLinksPerEvent bounds the venues, and the organizers, of one event.
	MaxLinksPerEvent = 10
	// MaxCostItems bounds the prices of one event's cost.
	MaxCostItems = 20
	// MaxListItems bounds every other list parameter (include, exclude,
	// categories, tags, venue, organizer, status filters).
	MaxListItems = 100
)

// List paging.
const (
	// MaxPerPage is the largest page size; larger per_page values are
	// clamped to it.
	MaxPerPage = 50
	// MaxOffset bounds the number of items a list may skip ((page-1) *
	// per_page, or offset). Pages past it are past the end of any list the
	// service holds: events answer 404, terms an empty page.
	MaxOffset = 1 << 30
)

// MaxRadiusKm caps geoloc_radius: half the Earth's circumference already
// covers every point, and larger values are clamped to it.
const MaxRadiusKm = 20_040.0

// Dates: both stores hold four-digit years (SQLite's date functions and
// the RFC 3339 text the stores write); anything else is 400.
const (
	MinYear = 1000
	MaxYear = 9999
)

// MaxWordBytes bounds one word as the search engines see it: the document
// builder cuts longer words to this many bytes before indexing, so a
// multi-megabyte "word" can never reach an engine's term dictionary.
const MaxWordBytes = 64

// Offset returns (page-1)*perPage for page >= 1 and perPage >= 1, saturated
// at the last whole page at or below MaxOffset, so that no page number
// overflows and the result stays a multiple of perPage (or is MaxOffset,
// for a page size over MaxOffset).
func Offset(page, perPage int64) int {
	if page <= 1 || perPage < 1 {
		return 0
	}
	if perPage > MaxOffset {
		return MaxOffset
	}
	if last := MaxOffset / perPage; page-1 >= last {
		return int(last * perPage)
	}
	return int((page - 1) * perPage)
}
