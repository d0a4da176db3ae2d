// Package portable writes and reads the portable export: everything a
// calendar service keeps, in one file that either store (the embedded
// SQLite store or MongoDB) exports and loads ("eventcal export --out
// FILE", "eventcal load FILE"). It is how a calendar moves from the
// embedded store to MongoDB and back.
//
// # The format (version 1)
//
// JSON Lines: UTF-8 text, one JSON object a line, and a line feed ("\n")
// ends every line, the last one included. Line 1 is the header:
//
//	{"format":"eventcal-export","version":1,"created":"2026-11-27T10:00:00Z",
//	 "eventcal":"0.30.0","store":"sqlite","languages":["en","fr"],
//	 "default_language":"en","timezone":"Europe/Paris"}
//
// format is always "eventcal-export"; version is the format's version (a
// reader refuses a version newer than it knows, naming both); created is
// when the export was taken (UTC); eventcal the version of the program
// that wrote it; store the engine it was taken from ("sqlite" or
// "mongodb"); languages, default_language and timezone the exporting
// service's LANGUAGES, DEFAULT_LANGUAGE and TIMEZONE.
//
// Every other line is {"type":T,T:{...}}: the item under a key named as
// its type. The types come in this order (a line of a type before one
// of an earlier type is refused):
//
//   - sequences: exactly one line, {"type":"sequences","sequences":{"records":812,
//     "labels":40,"users":3,"webhooks":1,"sources":1,"source_runs":7}}: the
//     largest value each ID sequence handed out or was moved past, IDs of
//     deleted items included. A load moves the target's sequences at
//     least that far, so an ID deleted before the export is never handed
//     out again.
//   - user: an account: id, login, role, created, disabled, email, origin.
//     There are no passwords: the service authenticates with tokens.
//   - token: an API token: hash (the hex SHA-256 of the secret; the
//     secret itself is never stored, so never exported), user_id, name,
//     created, last_used, expires (zero times are "0001-01-01T00:00:00Z").
//   - label: a category or tag: id, taxonomy, name, description and slug
//     per language, parent, revision, origin. Categories come parents
//     before children, then the tags.
//   - record: an image, venue, organizer or event (in that order of
//     kinds; a series' children after the events without a parent), in
//     every status, with its ID, slugs, texts per language, dates,
//     revision, origin, source link, links, recurrence and occurrence
//     overrides: the JSON of the store's record.
//   - item_state: what the webhook messages last reported of an exported
//     item (kind "post" or "term", id, resource, revision, status). A
//     load records them with the items it creates, so loading sends no
//     webhook message for what it writes.
//   - webhook: an endpoint: id, url, description, events, secret (its
//     signing secret, in clear: the file is itself a secret), active,
//     disabled_reason, failing_since, created, updated, revision.
//   - delivery: a message still pending for an endpoint: id, webhook_id,
//     item, type, payload (base64), created, status, attempts,
//     next_attempt, log. The log of delivered and failed messages is not
//     carried.
//   - source: a calendar source, with its validators and revision (not
//     the claim of a run in progress).
//   - source_run: a run of a source, with its counts and problems.
//   - end: the trailer, {"type":"end","counts":{"user":3,"token":4,...}}:
//     how many lines of each type the file holds. A file without it
//     (cut short) is refused.
//
// Times are RFC 3339 in UTC. A reader refuses an unknown type, an
// unknown field, and a line that is not one JSON object, naming the
// line's number.
//
// # Loading
//
// Load reads the file twice. The first pass decides everything and
// writes nothing: the header, every line strictly decoded, every record
// as the calendar checks an imported one, every link (venues,
// organizers, categories, tags, featured image, parent event, label
// parent, token user, source labels and author, run source, delivery
// endpoint, item state) naming an item in the file or in the target
// store, no ID the target holds as an item of another kind (or a user of
// another login), the target's LANGUAGES covering every language the
// file's texts use, and the trailer's counts. The second pass writes in
// file order through the calendar's services (records by
// calendar.Service.Import, labels by calendar.Labels.Load, the rest by
// calendar.Loads): an item the target lacks is created with its ID and
// revision, one it holds and that differs is replaced, one it holds as
// it is (times compared to the second) is left alone; so loading a file
// twice changes nothing the second time. The sequences are raised before
// any item is written, and the item states of the items a batch creates
// are recorded before them, so a service running on the target neither
// draws a file's ID nor sends a webhook message for a created item. A
// replaced item keeps the target's item state: its endpoints hear of the
// change. Every write records its index mark, so the search index
// follows as it does for any write. A store failure in the second pass
// leaves what was written; loading the file again completes it.
package portable

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/calendar/eventcal/repository"
)

// FormatName is the header's "format".
const FormatName = "eventcal-export"

// Version is the format version this package writes, and the newest it
// reads.
const Version = 1

// The line types, in the order a file holds them.
const (
	TypeSequences = "sequences"
	TypeUser      = "user"
	TypeToken     = "token"
	TypeLabel     = "label"
	TypeRecord    = "record"
	TypeItemState = "item_state"
	TypeWebhook   = "webhook"
	TypeDelivery  = "delivery"
	TypeSource    = "source"
	TypeSourceRun = "source_run"
	TypeEnd       = "end"
)

// Types lists the line types in file order (the trailer last).
var Types = []string{TypeSequences, TypeUser, TypeToken, TypeLabel, TypeRecord, TypeItemState,
	TypeWebhook, TypeDelivery, TypeSource, TypeSourceRun, TypeEnd}

// typeOrder is each type's place in Types.
var typeOrder = func() map[string]int {
	m := make(map[string]int, len(Types))
	for i, t := range Types {
		m[t] = i
	}
	return m
}()

// Header is the file's first line.
type Header struct {
	Format          string    `json:"format"`
	Version         int       `json:"version"`
	Created         time.Time `json:"created"`
	Eventcal        string    `json:"eventcal"`
	Store           string    `json:"store"`
	Languages       []string  `json:"languages"`
	DefaultLanguage string    `json:"default_language"`
	Timezone        string    `json:"timezone"`
}

// Webhook is a webhook line: the endpoint with its signing secret and
// revision, which repository.Webhook keeps out of JSON.
type Webhook struct {
	repository.Webhook
	Secret   string `json:"secret"`
	Revision int64  `json:"revision"`
}

// Delivery is a delivery line: a pending message with its payload.
type Delivery struct {
	repository.Delivery
	Payload []byte `json:"payload"`
}

// Source is a source line: the source with its revision.
type Source struct {
	repository.Source
	Revision int64 `json:"revision"`
}

// Counts are the lines of each type a file holds (the trailer's
// counts), by type name.
type Counts map[string]int64

// String lists the counts in file order ("user 3, token 4, ...").
func (c Counts) String() string {
	var parts []string
	for _, t := range Types {
		if n, ok := c[t]; ok {
			parts = append(parts, fmt.Sprintf("%s %d", t, n))
		}
	}
	return strings.Join(parts, ", ")
}

// Equal reports whether c and o hold the same counts (a type missing
// counts 0).
func (c Counts) Equal(o Counts) bool {
	keys := append(slices.Collect(maps.Keys(c)), slices.Collect(maps.Keys(o))...)
	for _, k := range keys {
		if c[k] != o[k] {
			return false
		}
	}
	return true
}

// LineError is a refusal of a file's line: its number (from 1) and why.
type LineError struct {
	Line int
	Err  error
}

// Error implements error.
func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }

// Unwrap returns the reason.
func (e *LineError) Unwrap() error { return e.Err }

// Errors of Load that callers test with errors.Is.
var (
	// ErrNotExport means the file is not an export: no header naming
	// the format.
	ErrNotExport = errors.New("not an eventcal export")
	// ErrNewerVersion means the file's format version is newer than
	// this program reads.
	ErrNewerVersion = errors.New("the export was written in a newer format version")
	// ErrTruncated means the file ends before its trailer (cut short).
	ErrTruncated = errors.New("the export is incomplete: it ends before its trailer")
	// ErrRefused means the file is well formed but cannot be loaded into
	// this store (a link, an ID, a language); the error says what.
	ErrRefused = errors.New("refused")
)

// decodeStrict decodes one JSON value from raw into v, refusing unknown
// fields and anything after the value.
func decodeStrict(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("more than one JSON value")
	}
	if _, err := dec.Token(); err == nil {
		return errors.New("more than one JSON value")
	}
	return nil
}

// envelope splits a line into its type and the item's JSON, refusing an
// unknown type and any key besides "type" and the type's.
func envelope(line []byte) (string, json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := decodeStrict(line, &m); err != nil {
		return "", nil, fmt.Errorf("not a JSON object: %v", err)
	}
	rawType, ok := m["type"]
	if !ok {
		return "", nil, errors.New(`no "type"`)
	}
	var typ string
	if err := json.Unmarshal(rawType, &typ); err != nil {
		return "", nil, fmt.Errorf(`"type" is not a string: %s`, rawType)
	}
	if _, ok := typeOrder[typ]; !ok {
		return "", nil, fmt.Errorf("unknown type %q (known: %s)", typ, strings.Join(Types, ", "))
	}
	key := typ
	if typ == TypeEnd {
		key = "counts"
	}
	body, ok := m[key]
	if !ok {
		return "", nil, fmt.Errorf("a %s line has no %q", typ, key)
	}
	for k := range m {
		if k != "type" && k != key {
			return "", nil, fmt.Errorf("unknown field %q in a %s line", k, typ)
		}
	}
	return typ, body, nil
}
