package portable

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/repository/sqlite"
)

// ExportOptions are the service's settings an export names in its
// header, and where the embedded store's snapshot goes.
type ExportOptions struct {
	// Languages, DefaultLanguage and Timezone are the service's
	// LANGUAGES, DEFAULT_LANGUAGE and TIMEZONE.
	Languages       []string
	DefaultLanguage string
	Timezone        string
	// TempDir is the directory of the embedded store's snapshot (beside
	// the store: DATA_DIR, the same file system); "" is os.TempDir.
	TempDir string
	// Now is the clock of the header's "created" (nil: time.Now).
	Now func() time.Time

	// pageSize is how many records one read returns (0: defaultPage).
	pageSize int
	// afterType, when set, is called after the lines of each type are
	// written (tests use it to write meanwhile).
	afterType func(typ string)
}

// defaultPage is how many records or labels one read of the store returns.
const defaultPage = 500

// maxDeliveries bounds the deliveries read of one endpoint.
const maxDeliveries = 1 << 30

// ExportResult is what an export wrote.
type ExportResult struct {
	Header Header
	// Counts are the lines of each type (the trailer's counts).
	Counts Counts
}

// Export writes everything st keeps to w in the portable format. From
// the embedded store (*sqlite.Store) it reads a snapshot: an online
// backup into a temporary file in opts.TempDir (mode 0600, removed
// afterwards), so the export is the store at one point in time while
// writers go on. From MongoDB it reads page by page: a write during the
// export may be in it or not, and one that changes several items may be
// there in part (stop the writers, or export from a restored mongodump).
func Export(ctx context.Context, st repository.Store, w io.Writer, opts ExportOptions) (*ExportResult, error) {
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	h := Header{Format: FormatName, Version: Version, Created: now().UTC().Truncate(time.Second), Eventcal: config.Version,
		Store: "mongodb", Languages: slices.Clone(opts.Languages), DefaultLanguage: opts.DefaultLanguage, Timezone: opts.Timezone}
	if h.Languages == nil {
		h.Languages = []string{}
	}
	src := st
	if s, ok := st.(*sqlite.Store); ok {
		h.Store = "sqlite"
		snap, cleanup, err := snapshot(ctx, s, opts.TempDir)
		if err != nil {
			return nil, err
		}
		defer cleanup()
		src = snap
	}
	x := &exporter{src: src, opts: opts, counts: Counts{}, bw: bufio.NewWriterSize(w, 256<<10)}
	x.enc = json.NewEncoder(&x.buf)
	x.enc.SetEscapeHTML(false)
	if x.opts.pageSize <= 0 {
		x.opts.pageSize = defaultPage
	}
	if err := x.run(ctx, h); err != nil {
		return nil, err
	}
	return &ExportResult{Header: h, Counts: x.counts}, nil
}

// snapshot backs s up into a temporary file in dir and opens it; cleanup
// closes and removes it.
func snapshot(ctx context.Context, s *sqlite.Store, dir string) (*sqlite.Store, func(), error) {
	if dir == "" {
		dir = os.TempDir()
	}
	f, err := os.CreateTemp(dir, ".eventcal-export-*.db")
	if err != nil {
		return nil, nil, fmt.Errorf("export: snapshot: %w", err)
	}
	tmp := f.Name()
	remove := func() {
		for _, suffix := range []string{"", "-journal", "-wal", "-shm"} {
			_ = os.Remove(tmp + suffix)
		}
	}
	if err := errors.Join(f.Chmod(0o600), f.Close()); err != nil {
		remove()
		return nil, nil, fmt.Errorf("export: snapshot: %w", err)
	}
	if _, err := s.Backup(ctx, tmp); err != nil {
		remove()
		return nil, nil, fmt.Errorf("export: snapshot: %w", err)
	}
	snap, err := sqlite.Open(ctx, tmp)
	if err != nil {
		remove()
		return nil, nil, fmt.Errorf("export: open the snapshot: %w", err)
	}
	return snap, func() {
		_ = snap.Close(context.WithoutCancel(ctx))
		remove()
	}, nil
}

// exporter writes one export.
type exporter struct {
	src    repository.Store
	opts   ExportOptions
	bw     *bufio.Writer
	buf    bytes.Buffer
	enc    *json.Encoder
	counts Counts
	// keys are the exported records and labels, for their item states.
	keys []repository.ItemKey
}

// line writes one line: {"type":typ,typ:v}.
func (x *exporter) line(typ string, v any) error {
	x.buf.Reset()
	fmt.Fprintf(&x.buf, `{"type":%q,%q:`, typ, typ)
	if err := x.enc.Encode(v); err != nil {
		return fmt.Errorf("export: encode a %s: %w", typ, err)
	}
	b := bytes.TrimSuffix(x.buf.Bytes(), []byte("\n"))
	b = append(b, "}\n"...)
	if _, err := x.bw.Write(b); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	x.counts[typ]++
	return nil
}

// done ends the lines of a type.
func (x *exporter) done(typ string) {
	if x.opts.afterType != nil {
		x.opts.afterType(typ)
	}
}

// run writes the header, every type in order and the trailer.
func (x *exporter) run(ctx context.Context, h Header) error {
	head, err := json.Marshal(h)
	if err != nil {
		return err
	}
	if _, err := x.bw.Write(append(head, '\n')); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	steps := []struct {
		typ string
		fn  func(ctx context.Context) error
	}{
		{TypeSequences, x.sequences}, {TypeUser, x.users}, {TypeToken, x.tokens}, {TypeLabel, x.labels},
		{TypeRecord, x.records}, {TypeItemState, x.itemStates}, {TypeWebhook, x.webhooks},
		{TypeSource, x.sources},
	}
	for _, s := range steps {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := s.fn(ctx); err != nil {
			return err
		}
		x.done(s.typ)
	}
	counts := Counts{}
	for k, v := range x.counts {
		counts[k] = v
	}
	for _, t := range Types[:len(Types)-1] {
		if _, ok := counts[t]; !ok {
			counts[t] = 0
			x.counts[t] = 0
		}
	}
	b, err := json.Marshal(struct {
		Type   string `json:"type"`
		Counts Counts `json:"counts"`
	}{TypeEnd, counts})
	if err != nil {
		return err
	}
	if _, err := x.bw.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	return x.bw.Flush()
}

func (x *exporter) sequences(ctx context.Context) error {
	seqs, err := x.src.Sequences(ctx)
	if err != nil {
		return fmt.Errorf("export: sequences: %w", err)
	}
	return x.line(TypeSequences, seqs)
}

func (x *exporter) users(ctx context.Context) error {
	users, err := x.src.ListUsers(ctx)
	if err != nil {
		return fmt.Errorf("export: users: %w", err)
	}
	for _, u := range users {
		if err := x.line(TypeUser, u); err != nil {
			return err
		}
	}
	return nil
}

func (x *exporter) tokens(ctx context.Context) error {
	tokens, err := x.src.ListTokens(ctx, 0)
	if err != nil {
		return fmt.Errorf("export: tokens: %w", err)
	}
	for _, t := range tokens {
		if err := x.line(TypeToken, t); err != nil {
			return err
		}
	}
	return nil
}

// labels writes the categories, parents before children, then the tags.
func (x *exporter) labels(ctx context.Context) error {
	cats, err := x.src.FindLabels(ctx, repository.LabelQuery{Taxonomy: repository.LabelCategory})
	if err != nil {
		return fmt.Errorf("export: categories: %w", err)
	}
	tags, err := x.src.FindLabels(ctx, repository.LabelQuery{Taxonomy: repository.LabelTag})
	if err != nil {
		return fmt.Errorf("export: tags: %w", err)
	}
	for _, t := range append(parentsFirst(cats), tags...) {
		if err := x.line(TypeLabel, t); err != nil {
			return err
		}
		x.keys = append(x.keys, repository.ItemKey{Kind: repository.MarkTerm, ID: t.ID})
	}
	return nil
}

// parentsFirst orders categories so that each comes after its parent
// (by ID among those whose parent is placed); a parent that is not among
// them counts as placed.
func parentsFirst(cats []*repository.Label) []*repository.Label {
	byID := make(map[int64]bool, len(cats))
	for _, c := range cats {
		byID[c.ID] = true
	}
	placed := make(map[int64]bool, len(cats))
	out := make([]*repository.Label, 0, len(cats))
	rest := cats
	for len(rest) > 0 {
		var next []*repository.Label
		for _, c := range rest {
			if c.Parent == 0 || !byID[c.Parent] || placed[c.Parent] {
				out = append(out, c)
				placed[c.ID] = true
			} else {
				next = append(next, c)
			}
		}
		if len(next) == len(rest) { // a cycle: the store never makes one
			out = append(out, next...)
			break
		}
		rest = next
	}
	return out
}

// records writes the images, venues, organizers and events, page by
// page; the events with a parent after the others.
func (x *exporter) records(ctx context.Context) error {
	var children []int64
	for _, kind := range []repository.Kind{repository.KindImage, repository.KindVenue, repository.KindOrganizer, repository.KindEvent} {
		var after int64
		for {
			page, err := x.src.FindRecords(ctx, repository.RecordQuery{Kind: kind, AfterID: after, Limit: x.opts.pageSize})
			if err != nil {
				return fmt.Errorf("export: %ss: %w", kind, err)
			}
			for _, p := range page {
				if p.Event != nil && p.Event.Parent != 0 {
					children = append(children, p.ID)
					continue
				}
				if err := x.record(p); err != nil {
					return err
				}
			}
			if len(page) < x.opts.pageSize {
				break
			}
			after = page[len(page)-1].ID
		}
	}
	for start := 0; start < len(children); start += x.opts.pageSize {
		ids := children[start:min(start+x.opts.pageSize, len(children))]
		got, err := x.src.GetRecords(ctx, ids)
		if err != nil {
			return fmt.Errorf("export: events: %w", err)
		}
		for _, id := range ids {
			if p := got[id]; p != nil { // gone meanwhile (MongoDB)
				if err := x.record(p); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (x *exporter) record(p *repository.Record) error {
	x.keys = append(x.keys, repository.ItemKey{Kind: repository.MarkPost, ID: p.ID})
	return x.line(TypeRecord, p)
}

// itemStates writes the webhook item states of the exported items.
func (x *exporter) itemStates(ctx context.Context) error {
	for start := 0; start < len(x.keys); start += x.opts.pageSize {
		keys := x.keys[start:min(start+x.opts.pageSize, len(x.keys))]
		states, err := x.src.ItemStates(ctx, keys)
		if err != nil {
			return fmt.Errorf("export: item states: %w", err)
		}
		for _, k := range keys {
			if st, ok := states[k]; ok {
				if err := x.line(TypeItemState, st); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// webhooks writes the endpoints, each followed by nothing: the pending
// deliveries of every endpoint come after all of them.
func (x *exporter) webhooks(ctx context.Context) error {
	hooks, err := x.src.ListWebhooks(ctx)
	if err != nil {
		return fmt.Errorf("export: webhooks: %w", err)
	}
	for _, w := range hooks {
		if err := x.line(TypeWebhook, Webhook{Webhook: *w, Secret: w.Secret, Revision: w.Revision}); err != nil {
			return err
		}
	}
	x.done(TypeWebhook)
	for _, w := range hooks {
		ds, err := x.src.ListDeliveries(ctx, w.ID, maxDeliveries)
		if err != nil {
			return fmt.Errorf("export: deliveries of webhook %d: %w", w.ID, err)
		}
		slices.Reverse(ds) // oldest first
		for _, d := range ds {
			if d.Status != repository.DeliveryPending {
				continue
			}
			if err := x.line(TypeDelivery, Delivery{Delivery: *d, Payload: d.Payload}); err != nil {
				return err
			}
		}
	}
	return nil
}

// sources writes the sources, then their runs (oldest first).
func (x *exporter) sources(ctx context.Context) error {
	srcs, err := x.src.ListSources(ctx)
	if err != nil {
		return fmt.Errorf("export: sources: %w", err)
	}
	for _, s := range srcs {
		if err := x.line(TypeSource, Source{Source: *s, Revision: s.Revision}); err != nil {
			return err
		}
	}
	x.done(TypeSource)
	for _, s := range srcs {
		runs, err := x.src.ListSourceRuns(ctx, s.ID, 0)
		if err != nil {
			return fmt.Errorf("export: runs of source %d: %w", s.ID, err)
		}
		slices.Reverse(runs)
		for _, r := range runs {
			if err := x.line(TypeSourceRun, r); err != nil {
				return err
			}
		}
	}
	return nil
}
