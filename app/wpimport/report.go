package wpimport

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// The kinds of record an import writes, in the order it writes them.
const (
	KindCategory  = "category"
	KindTag       = "tag"
	KindImage     = "image"
	KindVenue     = "venue"
	KindOrganizer = "organizer"
	KindEvent     = "event"
)

// kinds is the write order: terms (parents before children), then the
// images, venues and organizers that events link to, then events.
var kinds = []string{KindCategory, KindTag, KindImage, KindVenue, KindOrganizer, KindEvent}

// Failure is a record that could not be imported, with the field at fault.
type Failure struct {
	Kind   string
	ID     int64
	Field  string
	Reason string
}

func (f Failure) String() string {
	if f.Field == "" {
		return fmt.Sprintf("%s %d: %s", f.Kind, f.ID, f.Reason)
	}
	return fmt.Sprintf("%s %d: %s: %s", f.Kind, f.ID, f.Field, f.Reason)
}

// Change is a value stored other than the source has it: a slug that
// WordPress could not have made, sanitised as the API sanitises a slug;
// markup removed from a plain text field by the API's HTML policy.
type Change struct {
	Kind  string
	ID    int64
	Field string
	// From is the source's value (decoded), To the value stored.
	From, To string
}

func (c Change) String() string {
	return fmt.Sprintf("%s %d: %s %s stored as %s", c.Kind, c.ID, c.Field, shown(c.From), shown(c.To))
}

// KindReport counts what happened to the records of one kind.
type KindReport struct {
	Kind string
	// Created, Updated and Unchanged count records (in a dry run: what
	// would happen).
	Created, Updated, Unchanged int
	// Failed are the records that could not be imported.
	Failed []Failure
	// Disappeared are records imported earlier from this source that it
	// no longer has; Deleted counts those removed (--prune).
	Disappeared []int64
	Deleted     int
}

// Changes counts the records created, updated and deleted.
func (kr *KindReport) Changes() int { return kr.Created + kr.Updated + kr.Deleted }

// Collision is a record of the store that holds an ID the import needs
// and is not an earlier import of the same source record.
type Collision struct {
	Kind string // the source record's kind
	ID   int64
	// Here describes the record the store holds under the ID.
	Here string
}

func (c Collision) String() string {
	return fmt.Sprintf("%s %d: the store holds %s", c.Kind, c.ID, c.Here)
}

// CollisionError stops an import before it writes anything: the store
// holds other records under IDs of the source.
type CollisionError struct {
	Collisions []Collision
}

func (e *CollisionError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d source IDs are taken by other records in this store; nothing was written:", len(e.Collisions))
	for i, c := range e.Collisions {
		if i == 20 {
			fmt.Fprintf(&b, "\n  ... and %d more", len(e.Collisions)-20)
			break
		}
		b.WriteString("\n  " + c.String())
	}
	return b.String()
}

// Report is the outcome of an import.
type Report struct {
	Source string
	DryRun bool
	// Kinds holds one report per kind, in write order.
	Kinds []*KindReport
	// Protected are the password-protected events the source did not
	// open: its lists show them without description, excerpt,
	// categories, tags, venue and organizers, and only its edit context
	// (an administrator or editor) names the password that opens them;
	// these were imported as listed.
	Protected []int64
	// Users is what the run did with the source's users (nil without
	// Options.Users).
	Users *UserReport
	// Stopped is set when the run did not reach its end (Run's error
	// says why): its counts are what it did before, and it never says
	// "Nothing changed".
	Stopped bool
	// Warnings are things the operator should know that did not fail a
	// record (a link to a record the source did not give, a slug taken).
	Warnings []string
	// Collisions are set when the import stopped for them.
	Collisions []Collision
	// Sanitized lists the values stored other than the source has them
	// (see Change).
	Sanitized []Change
	// Cap is the cap that stopped the run, nil when none did.
	Cap *CapError
	// Requests counts the requests sent to the source (retries included).
	Requests int
	// BytesRead counts the response bytes read from the source.
	BytesRead int64
	// HeldPeak is the most bytes the run held in memory at once by its
	// own count (records mapped and waiting to be written, the ID sets
	// and the report's lines); Caps.HeldBytes bounds it.
	HeldPeak int64
	// dropped counts warnings and changes beyond maxLines, not kept.
	dropped int
}

// maxLines bounds the warnings and the changes a report keeps; the rest
// are counted.
const maxLines = 1000

// kind returns the report of one kind.
func (r *Report) kind(k string) *KindReport {
	for _, kr := range r.Kinds {
		if kr.Kind == k {
			return kr
		}
	}
	kr := &KindReport{Kind: k}
	r.Kinds = append(r.Kinds, kr)
	return kr
}

// Kind returns the report of one kind (Kind* constants), nil if unknown.
func (r *Report) Kind(k string) *KindReport {
	for _, kr := range r.Kinds {
		if kr.Kind == k {
			return kr
		}
	}
	return nil
}

// Failed reports whether any record failed.
func (r *Report) Failed() bool {
	for _, kr := range r.Kinds {
		if len(kr.Failed) > 0 {
			return true
		}
	}
	return false
}

// Changes counts the records created, updated and deleted.
func (r *Report) Changes() int {
	n := 0
	for _, kr := range r.Kinds {
		n += kr.Changes()
	}
	if r.Users != nil {
		n += r.Users.Created + r.Users.Updated + r.Users.NewlyLinked
	}
	return n
}

// warnf records a warning (the first maxLines; the others are counted).
func (r *Report) warnf(format string, a ...any) {
	if len(r.Warnings) >= maxLines {
		r.dropped++
		return
	}
	r.Warnings = append(r.Warnings, fmt.Sprintf(format, a...))
}

// sanitized records a change (the first maxLines; the others are counted).
func (r *Report) sanitized(c Change) {
	if len(r.Sanitized) >= maxLines {
		r.dropped++
		return
	}
	r.Sanitized = append(r.Sanitized, c)
}

// Print writes the summary: one line per kind, then the failures,
// password-protected events, disappeared records and warnings.
func (r *Report) Print(w io.Writer) {
	verb := ""
	if r.DryRun {
		verb = " (dry run: nothing written; counts say what an import would do)"
	}
	fmt.Fprintf(w, "Import from %s%s\n", r.Source, verb)
	fmt.Fprintf(w, "  %-10s %8s %8s %10s %7s %12s\n", "kind", "created", "updated", "unchanged", "failed", "disappeared")
	for _, kr := range r.Kinds {
		dis := fmt.Sprint(len(kr.Disappeared))
		if kr.Deleted > 0 {
			dis += fmt.Sprintf(" (%d deleted)", kr.Deleted)
		}
		fmt.Fprintf(w, "  %-10s %8d %8d %10d %7d %12s\n", kr.Kind, kr.Created, kr.Updated, kr.Unchanged, len(kr.Failed), dis)
	}
	if r.Changes() == 0 && !r.Failed() && len(r.Collisions) == 0 && r.Cap == nil && !r.Stopped {
		fmt.Fprintln(w, "Nothing changed: the store already matches the source.")
	}
	for _, kr := range r.Kinds {
		for _, f := range kr.Failed {
			fmt.Fprintf(w, "failed: %s\n", f)
		}
	}
	if u := r.Users; u != nil {
		fmt.Fprintf(w, "users: %d created, %d updated, %d unchanged (no passwords: 'eventcal token create --login NAME' gives each a credential)\n", u.Created, u.Updated, u.Unchanged)
		if len(u.Linked) > 0 {
			fmt.Fprintf(w, "users who were here already (their records are theirs; not changed): %s\n", strings.Join(u.Linked, ", "))
		}
		if len(u.Skipped) > 0 {
			fmt.Fprintf(w, "users not imported (no role here: administrator, editor, author and contributor are): %s\n", strings.Join(u.Skipped, ", "))
		}
	}
	if len(r.Protected) > 0 {
		ids := slices.Clone(r.Protected)
		slices.Sort(ids)
		fmt.Fprintf(w, "password-protected events the source did not open (imported without description, excerpt, terms, venue, organizers and password: import as an administrator, or set them here): %s\n", joinIDs(ids))
	}
	for _, kr := range r.Kinds {
		if len(kr.Disappeared) > 0 && kr.Deleted == 0 {
			fmt.Fprintf(w, "gone from the source (kept; --prune deletes them): %s %s\n", kr.Kind, joinIDs(kr.Disappeared))
		}
	}
	for _, c := range r.Sanitized {
		fmt.Fprintf(w, "sanitized: %s\n", c)
	}
	for _, wn := range r.Warnings {
		fmt.Fprintf(w, "warning: %s\n", wn)
	}
	if r.dropped > 0 {
		fmt.Fprintf(w, "... and %d more warnings and sanitised values, not listed\n", r.dropped)
	}
	for _, c := range r.Collisions {
		fmt.Fprintf(w, "collision: %s\n", c)
	}
	if r.Cap != nil {
		fmt.Fprintf(w, "stopped: %s\n", r.Cap)
	}
	fmt.Fprintf(w, "%d requests to the source, %d bytes read.\n", r.Requests, r.BytesRead)
}

func joinIDs(ids []int64) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprint(id)
	}
	return strings.Join(s, ", ")
}
