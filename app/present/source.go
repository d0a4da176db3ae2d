package present

import (
	"bytes"
	"strconv"

	"github.com/calendar/eventcal/repository"
)

// Source is a calendar source as the API shows it. Its fields, in this
// order: id, name, url, format, detected_format (null until a run of an
// "auto" source found out), schedule ("" for a source run on demand
// only), status, categories and tags (label IDs), on_removed, author,
// created, updated, last_run (the newest run, null when it never ran),
// and next_run when the scheduler can tell (omitted otherwise). The
// validators and the run claim are never shown.
type Source struct {
	ID             int64
	Name           string
	URL            string
	Format         string
	DetectedFormat string // "" is written null
	Schedule       string
	Status         string
	Categories     []int64
	Tags           []int64
	OnRemoved      string
	Author         int64
	Created        string
	Updated        string
	LastRun        *SourceRun // nil is written null
	NextRun        string     // omitted when empty
}

func (s *Source) writeJSON(buf *bytes.Buffer) error {
	w := openObj(buf)
	w.int("id", s.ID)
	w.str("name", s.Name)
	w.str("url", s.URL)
	w.str("format", s.Format)
	w.strOrNull("detected_format", s.DetectedFormat)
	w.str("schedule", s.Schedule)
	w.str("status", s.Status)
	w.ints("categories", s.Categories)
	w.ints("tags", s.Tags)
	w.str("on_removed", s.OnRemoved)
	w.int("author", s.Author)
	w.str("created", s.Created)
	w.str("updated", s.Updated)
	if s.LastRun == nil {
		w.raw("last_run", "null")
	} else {
		w.typed("last_run", s.LastRun)
	}
	w.strSet("next_run", s.NextRun)
	return w.close()
}

// MarshalJSON writes the source.
func (s *Source) MarshalJSON() ([]byte, error) { return marshal(s) }

// NewSource renders a source with its newest run (nil: it never ran).
func NewSource(src *repository.Source, last *repository.SourceRun) *Source {
	o := &Source{ID: src.ID, Name: src.Name, URL: src.URL, Format: src.Format, DetectedFormat: src.DetectedFormat,
		Schedule: src.Schedule, Status: src.Status, Categories: src.Categories, Tags: src.Tags, OnRemoved: src.OnRemoved,
		Author: src.Author, Created: src.Created.UTC().Format(TimeRFC3339), Updated: src.Updated.UTC().Format(TimeRFC3339)}
	if last != nil {
		o.LastRun = NewSourceRun(last)
	}
	return o
}

// SourceRun is one run of a source as the API shows it. Its fields, in
// this order: id, source_id, status (running, succeeded, failed),
// trigger (api, cli, schedule), started, finished (null while running),
// the counts created, updated, unchanged, removed and failed, error (why
// a failed run failed, else null) and problems (the events it could not
// import, each {uid, problem}; [] when none).
type SourceRun struct {
	ID        int64
	SourceID  int64
	Status    string
	Trigger   string
	Started   string
	Finished  string // "" is written null
	Created   int
	Updated   int
	Unchanged int
	Removed   int
	Failed    int
	Error     string // "" is written null
	Problems  []repository.RunProblem
}

func (r *SourceRun) writeJSON(buf *bytes.Buffer) error {
	w := openObj(buf)
	w.int("id", r.ID)
	w.int("source_id", r.SourceID)
	w.str("status", r.Status)
	w.str("trigger", r.Trigger)
	w.str("started", r.Started)
	w.strOrNull("finished", r.Finished)
	w.int("created", int64(r.Created))
	w.int("updated", int64(r.Updated))
	w.int("unchanged", int64(r.Unchanged))
	w.int("removed", int64(r.Removed))
	w.int("failed", int64(r.Failed))
	w.strOrNull("error", r.Error)
	w.key("problems")
	buf.WriteByte('[')
	for i, p := range r.Problems {
		if i > 0 {
			buf.WriteByte(',')
		}
		pw := openObj(buf)
		pw.str("uid", p.UID)
		pw.str("problem", p.Problem)
		_ = pw.close()
	}
	buf.WriteByte(']')
	return w.close()
}

// MarshalJSON writes the run.
func (r *SourceRun) MarshalJSON() ([]byte, error) { return marshal(r) }

// NewSourceRun renders a run.
func NewSourceRun(r *repository.SourceRun) *SourceRun {
	return &SourceRun{ID: r.ID, SourceID: r.SourceID, Status: r.Status, Trigger: r.Trigger,
		Started: r.Started.UTC().Format(TimeRFC3339), Finished: optionalTime(r.Finished),
		Created: r.Created, Updated: r.Updated, Unchanged: r.Unchanged, Removed: r.Removed, Failed: r.Failed,
		Error: r.Error, Problems: r.Problems}
}

// SourceLink is the source field of an event on the API's own root:
// which source imported it and its UID there (null for an event made
// here).
type SourceLink struct {
	ID  int64
	UID string
}

func (l *SourceLink) writeJSON(buf *bytes.Buffer) error {
	if l == nil {
		buf.WriteString("null")
		return nil
	}
	w := openObj(buf)
	w.int("id", l.ID)
	w.str("uid", l.UID)
	return w.close()
}

// MarshalJSON writes the link (null when nil).
func (l *SourceLink) MarshalJSON() ([]byte, error) { return marshal(l) }

// newSourceLink is the source field of a record (nil: made here).
func newSourceLink(p *repository.Record) *SourceLink {
	if p.Source == nil {
		return nil
	}
	return &SourceLink{ID: p.Source.SourceID, UID: p.Source.UID}
}

// strOrNull writes a string field, null when empty.
func (w *objWriter) strOrNull(k, v string) {
	if v == "" {
		w.raw(k, "null")
		return
	}
	w.str(k, v)
}

// ints writes a list of integers ([] for nil).
func (w *objWriter) ints(k string, v []int64) {
	w.key(k)
	w.buf.WriteByte('[')
	var scratch [24]byte
	for i, n := range v {
		if i > 0 {
			w.buf.WriteByte(',')
		}
		w.buf.Write(strconv.AppendInt(scratch[:0], n, 10))
	}
	w.buf.WriteByte(']')
}
