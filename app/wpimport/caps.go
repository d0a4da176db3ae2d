package wpimport

import (
	"fmt"
)

// Caps bound one run, so that a source that never stops (pages that never
// end, an ID list that never ends, bodies that never end, a million
// categories) stops the run at a known point. A run that reaches a cap
// stops before it writes anything and returns a *CapError naming the cap
// (the CLI exits with status 3). A zero field takes its default.
type Caps struct {
	// Pages bounds the pages read from one list: each TEC list, and
	// WordPress's wp/v2/tribe_events route (default DefaultMaxPages).
	Pages int
	// Requests bounds the requests of the run, retries included
	// (default DefaultMaxRequests).
	Requests int
	// Bytes bounds the response bytes read in the run (default
	// DefaultMaxBytes).
	Bytes int64
	// HeldBytes bounds what the run holds in memory until it writes: the
	// records as they will be stored, the ID sets, the report's lines
	// (default Bytes/4). The source's bodies are not held: each page is
	// mapped as it arrives and dropped, so besides HeldBytes a run holds
	// one response (at most 64 MiB) and its decoded copy at a time.
	HeldBytes int64
	// NewTerms bounds the categories and tags the run creates (default
	// DefaultMaxNewTerms).
	NewTerms int
	// Probes bounds the records of one kind read one by one because no
	// list showed them (hidden events, records gone from the source;
	// default DefaultMaxProbes).
	Probes int
	// Response bounds one response body (ReadPublic only; 0: 64 MiB).
	Response int64
	// Events bounds the events read (ReadPublic only; 0: no bound
	// besides the other caps); a list that holds more stops the read
	// (*CapError, Cap CapEvents).
	Events int
}

// Default caps. A site of 100,000 events, 20,000 terms and 10,000 hidden
// events imports within all of them.
const (
	// DefaultMaxPages is Caps.Pages's default: 500,000 records of a TEC
	// list (50 a page), 1,000,000 IDs of WordPress's route.
	DefaultMaxPages = 10_000
	// DefaultMaxRequests is Caps.Requests's default.
	DefaultMaxRequests = 200_000
	// DefaultMaxBytes is Caps.Bytes's default (2 GiB).
	DefaultMaxBytes = 2 << 30
	// DefaultMaxNewTerms is Caps.NewTerms's default.
	DefaultMaxNewTerms = 20_000
	// DefaultMaxProbes is Caps.Probes's default.
	DefaultMaxProbes = 20_000
	// heldFraction: HeldBytes defaults to Bytes/heldFraction, so that
	// what a run holds, with the garbage collector's headroom (about
	// twice the live heap) and one response being decoded, stays below
	// the bytes cap.
	heldFraction = 4
)

// runDefaults are Run's caps; HeldBytes, which follows Bytes, is set by
// withDefaults.
var runDefaults = Caps{Pages: DefaultMaxPages, Requests: DefaultMaxRequests, Bytes: DefaultMaxBytes,
	NewTerms: DefaultMaxNewTerms, Probes: DefaultMaxProbes}

// withDefaults fills the zero fields with Run's defaults.
func (c Caps) withDefaults() Caps {
	c = c.Or(runDefaults)
	if c.HeldBytes <= 0 {
		c.HeldBytes = c.Bytes / heldFraction
	}
	return c
}

// Or returns c with each field that is zero (or less) taken from d.
func (c Caps) Or(d Caps) Caps {
	c.Pages = orPositive(c.Pages, d.Pages)
	c.Requests = orPositive(c.Requests, d.Requests)
	c.Bytes = orPositive(c.Bytes, d.Bytes)
	c.HeldBytes = orPositive(c.HeldBytes, d.HeldBytes)
	c.NewTerms = orPositive(c.NewTerms, d.NewTerms)
	c.Probes = orPositive(c.Probes, d.Probes)
	c.Response = orPositive(c.Response, d.Response)
	c.Events = orPositive(c.Events, d.Events)
	return c
}

// orPositive is v when above zero, else d.
func orPositive[T int | int64](v, d T) T {
	if v > 0 {
		return v
	}
	return d
}

// The names of the caps, as CapError.Cap gives them; the CLI's flag that
// raises each is --max-<name>.
const (
	// CapPages is Caps.Pages.
	CapPages = "pages"
	// CapRequests is Caps.Requests.
	CapRequests = "requests"
	// CapBytes is Caps.Bytes.
	CapBytes = "bytes"
	// CapHeldBytes is Caps.HeldBytes.
	CapHeldBytes = "held-bytes"
	// CapNewTerms is Caps.NewTerms.
	CapNewTerms = "new-terms"
	// CapProbes is Caps.Probes.
	CapProbes = "probes"
)

// CapError stops a run that reached one of its caps; nothing was written.
type CapError struct {
	// Cap is the cap's name (Cap* constants).
	Cap string
	// Limit is the cap's value.
	Limit int64
	// Where says what reached it ("list events").
	Where string
}

func (e *CapError) Error() string {
	return fmt.Sprintf("%s reached the cap of %d %s (Caps; eventcal import --max-%s); nothing was written", e.Where, e.Limit, e.Cap, e.Cap)
}

// Per-entry costs counted in the held bytes: an ID in a set (map entry),
// and a record's fixed part beside its encoded size.
const (
	heldPerID     = 48
	heldPerRecord = 256
)

// hold counts n more bytes held, and stops the run past Caps.HeldBytes.
func (r *importRun) hold(n int64) error {
	r.held += n
	r.rep.HeldPeak = max(r.rep.HeldPeak, r.held)
	if r.held > r.caps.HeldBytes {
		return &CapError{Cap: CapHeldBytes, Limit: r.caps.HeldBytes, Where: "the records read so far"}
	}
	return nil
}
