package portable

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/calendar/eventcal/app/calendar"
	"github.com/calendar/eventcal/repository"
)

// LoadOptions are what a load writes through and the target's settings.
type LoadOptions struct {
	// Calendar writes the records (calendar.Service.Import) and Labels
	// the categories and tags (calendar.Labels.Load); both over the
	// target store.
	Calendar *calendar.Service
	Labels   *calendar.Labels
	// Languages are the target's LANGUAGES: the file's texts must use
	// no other. DefaultLanguage and Timezone are its DEFAULT_LANGUAGE
	// and TIMEZONE, compared with the header's (a difference is noted).
	Languages       []string
	DefaultLanguage string
	Timezone        string

	// batch is how many lines of one type pass 2 reads from the store at
	// once (0: defaultPage).
	batch int
}

// Tally counts what a load did with the lines of one type.
type Tally struct {
	// Created were not in the target; Replaced were there and differed
	// (now as the file has them); Unchanged were there as the file has
	// them and were left alone.
	Created, Replaced, Unchanged int64
}

// LoadReport is what a load found and did.
type LoadReport struct {
	Header Header
	// Counts are the lines of each type (the trailer's counts).
	Counts Counts
	// Types are the tallies by line type.
	Types map[string]*Tally
	// Notes are what the operator should know (a different time zone or
	// default language).
	Notes []string
}

// maxLine bounds one line of a file (a record is at most
// repository.MaxRecordBytes in the store).
const maxLine = 64 << 20

// maxProblems bounds the problems a refusal lists.
const maxProblems = 20

// lineReader reads a file's lines, counting them.
type lineReader struct {
	r    *bufio.Reader
	n    int
	buf  []byte
	last bool // the last line read ended without a line feed
}

// next returns the next line without its line feed, io.EOF at the end.
// A last line without a line feed is returned with last set.
func (lr *lineReader) next() ([]byte, error) {
	lr.buf = lr.buf[:0]
	for {
		chunk, err := lr.r.ReadSlice('\n')
		lr.buf = append(lr.buf, chunk...)
		if len(lr.buf) > maxLine {
			return nil, &LineError{Line: lr.n + 1, Err: fmt.Errorf("longer than %d bytes", maxLine)}
		}
		switch {
		case err == nil:
			lr.n++
			return lr.buf[:len(lr.buf)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if len(lr.buf) == 0 {
				return nil, io.EOF
			}
			lr.n++
			lr.last = true
			return lr.buf, nil
		default:
			return nil, err
		}
	}
}

// link is a reference from a line to an item that must exist in the file
// or the target.
type link struct {
	line int
	what string // "token 0123456789abcdef's user"
	// kind, owner and rel describe a record's link instead of what
	// (which a record's many links would each allocate).
	kind  repository.Kind
	owner int64
	rel   string
	id    int64
	want  string // a record kind, a taxonomy or "user"
	// storeOnly: the item must be in the target (a label's parent that
	// is not before it in the file).
	storeOnly bool
}

// describe names the link: "event 12's venue".
func (l link) describe() string {
	if l.what != "" {
		return l.what
	}
	return fmt.Sprintf("%s %d's %s", l.kind, l.owner, l.rel)
}

// plan is what pass 1 found.
type plan struct {
	header Header
	counts Counts
	seqs   map[string]int64

	records  map[int64]repository.Kind
	labels   map[int64]repository.LabelKind
	users    map[int64]string
	logins   map[string]int64
	tokens   map[string]int64
	webhooks map[int64]bool
	sources  map[int64]bool
	runs     map[int64]int64 // run ID -> source ID
	msgs     map[string]bool // webhook ID/message ID
	states   map[repository.ItemKey]repository.ItemState
	langs    map[string]int // language -> first line using it
	links    []link

	// cal checks the records as the target's calendar does.
	cal *calendar.Service
	// targetRuns are the target's runs (ID -> source ID).
	targetRuns map[int64]int64

	problems []string
	more     int
}

// problem records a refusal; pass 1 goes on to list up to maxProblems.
func (p *plan) problem(line int, format string, args ...any) {
	if len(p.problems) >= maxProblems {
		p.more++
		return
	}
	msg := fmt.Sprintf(format, args...)
	if line > 0 {
		msg = fmt.Sprintf("line %d: %s", line, msg)
	}
	p.problems = append(p.problems, msg)
}

// refusal is the error of the problems found, nil when none.
func (p *plan) refusal() error {
	if len(p.problems) == 0 {
		return nil
	}
	msg := strings.Join(p.problems, "\n  ")
	if p.more > 0 {
		msg += fmt.Sprintf("\n  (and %d more)", p.more)
	}
	return fmt.Errorf("%w: nothing was written:\n  %s", ErrRefused, msg)
}

// Load loads the export file into st: pass 1 reads the whole file and
// decides whether it can be loaded, writing nothing (a refusal is an
// error wrapping ErrNotExport, ErrNewerVersion, ErrTruncated, ErrRefused
// or a *LineError); pass 2 reads it again and writes it in file order.
// The file must not change between the passes. A store failure in pass
// 2 leaves what was written; loading the file again completes it.
func Load(ctx context.Context, st repository.Store, file io.ReadSeeker, opts LoadOptions) (*LoadReport, error) {
	if opts.Calendar == nil || opts.Labels == nil {
		return nil, errors.New("load: the calendar and labels services are required")
	}
	if opts.batch <= 0 {
		opts.batch = defaultPage
	}
	before, err := fileState(file)
	if err != nil {
		return nil, err
	}
	p, err := check(ctx, st, file, opts)
	if err != nil {
		return nil, err
	}
	if after, err := fileState(file); err != nil {
		return nil, err
	} else if after != before {
		return nil, fmt.Errorf("load: the file changed while it was checked (%s, then %s): nothing was written", before, after)
	}
	rep := &LoadReport{Header: p.header, Counts: p.counts, Types: map[string]*Tally{}}
	for _, t := range Types[:len(Types)-1] {
		rep.Types[t] = &Tally{}
	}
	if opts.Timezone != "" && p.header.Timezone != "" && opts.Timezone != p.header.Timezone {
		rep.Notes = append(rep.Notes, fmt.Sprintf("the export was taken with TIMEZONE %s, this service has %s: events without a zone of their own show in %s here",
			p.header.Timezone, opts.Timezone, opts.Timezone))
	}
	if opts.DefaultLanguage != "" && p.header.DefaultLanguage != "" && opts.DefaultLanguage != p.header.DefaultLanguage {
		rep.Notes = append(rep.Notes, fmt.Sprintf("the export was taken with DEFAULT_LANGUAGE %s, this service has %s",
			p.header.DefaultLanguage, opts.DefaultLanguage))
	}
	if _, err := file.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	w := &writer{st: st, opts: opts, loads: calendar.NewLoads(st), plan: p, rep: rep, delivered: map[int64]map[string]bool{}}
	if err := w.run(ctx, file); err != nil {
		return rep, err
	}
	return rep, nil
}

// fileState is the size and modification time of file when it is a
// file ("" otherwise): Load refuses a file that changes between its
// passes.
func fileState(file io.Reader) (string, error) {
	f, ok := file.(interface{ Stat() (os.FileInfo, error) })
	if !ok {
		return "", nil
	}
	fi, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("load: %w", err)
	}
	return fmt.Sprintf("%d bytes modified %s", fi.Size(), fi.ModTime().UTC().Format(time.RFC3339Nano)), nil
}

// check is pass 1.
func check(ctx context.Context, st repository.Store, file io.Reader, opts LoadOptions) (*plan, error) {
	lr := &lineReader{r: bufio.NewReaderSize(file, 1<<20)}
	p := &plan{counts: Counts{}, records: map[int64]repository.Kind{}, labels: map[int64]repository.LabelKind{},
		users: map[int64]string{}, logins: map[string]int64{}, tokens: map[string]int64{}, webhooks: map[int64]bool{},
		sources: map[int64]bool{}, runs: map[int64]int64{}, msgs: map[string]bool{},
		states: map[repository.ItemKey]repository.ItemState{}, langs: map[string]int{}, cal: opts.Calendar}
	head, err := lr.next()
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: the file is empty", ErrNotExport)
	}
	if err != nil {
		return nil, err
	}
	if p.header, err = parseHeader(head); err != nil {
		return nil, err
	}
	last := -1
	ended := false
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		line, err := lr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		n := lr.n
		if ended {
			return nil, &LineError{Line: n, Err: errors.New("a line after the trailer")}
		}
		if lr.last {
			return nil, fmt.Errorf("%w (line %d has no line feed: the file was cut short)", ErrTruncated, n)
		}
		typ, body, err := envelope(line)
		if err != nil {
			return nil, &LineError{Line: n, Err: err}
		}
		if o := typeOrder[typ]; o < last {
			return nil, &LineError{Line: n, Err: fmt.Errorf("a %s line after the %s lines (the order is %s)", typ, Types[last], strings.Join(Types, ", "))}
		} else {
			last = o
		}
		if typ == TypeSequences && p.seqs != nil {
			return nil, &LineError{Line: n, Err: errors.New("a second sequences line")}
		}
		if typ != TypeSequences && typ != TypeEnd && p.seqs == nil {
			return nil, &LineError{Line: n, Err: errors.New("the sequences line must come first, after the header")}
		}
		if typ == TypeEnd {
			var counts Counts
			if err := decodeStrict(body, &counts); err != nil {
				return nil, &LineError{Line: n, Err: fmt.Errorf("the trailer's counts: %v", err)}
			}
			if !counts.Equal(p.counts) {
				return nil, &LineError{Line: n, Err: fmt.Errorf("the trailer counts %s, the file holds %s", counts, p.counts)}
			}
			ended = true
			continue
		}
		if err := p.line(n, typ, body); err != nil {
			return nil, &LineError{Line: n, Err: err}
		}
		p.counts[typ]++
	}
	if !ended {
		return nil, ErrTruncated
	}
	p.checkLanguages(opts.Languages)
	p.checkSequences()
	if err := p.checkLinks(ctx, st); err != nil {
		return nil, err
	}
	if err := p.checkTarget(ctx, st); err != nil {
		return nil, err
	}
	return p, p.refusal()
}

// parseHeader reads line 1.
func parseHeader(line []byte) (Header, error) {
	var h Header
	var probe struct {
		Format  string `json:"format"`
		Version int    `json:"version"`
	}
	if err := json.Unmarshal(line, &probe); err != nil || probe.Format != FormatName {
		return h, fmt.Errorf("%w: line 1 is not a header naming the format %q", ErrNotExport, FormatName)
	}
	if probe.Version > Version {
		return h, fmt.Errorf("%w: the file is version %d, this eventcal reads up to version %d: load it with a newer eventcal", ErrNewerVersion, probe.Version, Version)
	}
	if probe.Version < 1 {
		return h, fmt.Errorf("%w: version %d is not a format version", ErrNotExport, probe.Version)
	}
	if err := decodeStrict(line, &h); err != nil {
		return h, &LineError{Line: 1, Err: fmt.Errorf("the header: %v", err)}
	}
	return h, nil
}

// line checks one item line of pass 1 and records what later checks need.
func (p *plan) line(n int, typ string, body []byte) error {
	switch typ {
	case TypeSequences:
		var seqs map[string]int64
		if err := decodeStrict(body, &seqs); err != nil {
			return err
		}
		if err := repository.CheckSequenceValues(seqs); err != nil {
			return err
		}
		p.seqs = seqs
	case TypeUser:
		var u repository.User
		if err := decodeStrict(body, &u); err != nil {
			return err
		}
		if err := p.newID("user", u.ID, p.users[u.ID] != ""); err != nil {
			return err
		}
		if msg := calendar.CheckLogin(u.Login); msg != "" {
			return fmt.Errorf("user %d: login %q: %s", u.ID, u.Login, msg)
		}
		if _, ok := repository.ParseRole(string(u.Role)); !ok || strings.ToLower(string(u.Role)) != string(u.Role) {
			return fmt.Errorf("user %d: %q is not a role", u.ID, u.Role)
		}
		if other, ok := p.logins[u.Login]; ok {
			return fmt.Errorf("user %d: login %q is user %d's too", u.ID, u.Login, other)
		}
		p.users[u.ID], p.logins[u.Login] = u.Login, u.ID
	case TypeToken:
		var t repository.Token
		if err := decodeStrict(body, &t); err != nil {
			return err
		}
		if len(t.Hash) != 64 || strings.Trim(t.Hash, "0123456789abcdef") != "" {
			return fmt.Errorf("token hash %q is not a hex SHA-256", t.Hash)
		}
		if _, ok := p.tokens[t.Hash]; ok {
			return fmt.Errorf("token %s twice", t.ID())
		}
		p.tokens[t.Hash] = t.UserID
		p.links = append(p.links, link{line: n, what: fmt.Sprintf("token %s's user", t.ID()), id: t.UserID, want: "user"})
	case TypeLabel:
		var t repository.Label
		if err := decodeStrict(body, &t); err != nil {
			return err
		}
		if _, ok := p.labels[t.ID]; ok {
			return fmt.Errorf("label %d twice", t.ID)
		}
		if err := calendar.CheckLoaded(&t); err != nil {
			return fmt.Errorf("%s %d: %v", t.Taxonomy, t.ID, err)
		}
		switch {
		case t.Parent == 0:
		case p.labels[t.Parent] == "":
			// A parent in the file comes before its children; one
			// not before it must be in the target.
			p.links = append(p.links, link{line: n, what: fmt.Sprintf("category %d's parent (not before it in the file)", t.ID),
				id: t.Parent, want: string(repository.LabelCategory), storeOnly: true})
		case p.labels[t.Parent] != repository.LabelCategory:
			return fmt.Errorf("category %d's parent %d is not a category", t.ID, t.Parent)
		}
		p.labels[t.ID] = t.Taxonomy
		for _, tx := range []repository.Text{t.Name, t.Description, t.Slug} {
			p.useLangs(n, tx)
		}
	case TypeRecord:
		var r repository.Record
		if err := decodeStrict(body, &r); err != nil {
			return err
		}
		return p.record(n, &r)
	case TypeItemState:
		var s repository.ItemState
		if err := decodeStrict(body, &s); err != nil {
			return err
		}
		switch {
		case s.Kind == repository.MarkPost && p.records[s.ID] != "":
		case s.Kind == repository.MarkTerm && p.labels[s.ID] != "":
		default:
			return fmt.Errorf("the item state of %s names no record or label of the file", s.ItemKey)
		}
		if _, ok := p.states[s.ItemKey]; ok {
			return fmt.Errorf("the item state of %s twice", s.ItemKey)
		}
		p.states[s.ItemKey] = s
	case TypeWebhook:
		var w Webhook
		if err := decodeStrict(body, &w); err != nil {
			return err
		}
		if err := p.newID("webhook", w.ID, p.webhooks[w.ID]); err != nil {
			return err
		}
		if !strings.HasPrefix(w.URL, "http://") && !strings.HasPrefix(w.URL, "https://") {
			return fmt.Errorf("webhook %d: url %q is not http or https", w.ID, w.URL)
		}
		if !strings.HasPrefix(w.Secret, "whsec_") {
			return fmt.Errorf("webhook %d: its secret is not a signing secret (whsec_...)", w.ID)
		}
		p.webhooks[w.ID] = true
	case TypeDelivery:
		var d Delivery
		if err := decodeStrict(body, &d); err != nil {
			return err
		}
		if d.ID == "" || d.Status != repository.DeliveryPending {
			return fmt.Errorf("delivery %q: a pending delivery with an ID (status %q)", d.ID, d.Status)
		}
		if !p.webhooks[d.WebhookID] {
			return fmt.Errorf("delivery %s is for webhook %d, which is not in the file", d.ID, d.WebhookID)
		}
		key := fmt.Sprint(d.WebhookID, "/", d.ID)
		if p.msgs[key] {
			return fmt.Errorf("delivery %s of webhook %d twice", d.ID, d.WebhookID)
		}
		p.msgs[key] = true
	case TypeSource:
		var s Source
		if err := decodeStrict(body, &s); err != nil {
			return err
		}
		if err := p.newID("source", s.ID, p.sources[s.ID]); err != nil {
			return err
		}
		p.sources[s.ID] = true
		for _, c := range s.Categories {
			p.links = append(p.links, link{line: n, what: fmt.Sprintf("source %d's category", s.ID), id: c, want: string(repository.LabelCategory)})
		}
		for _, t := range s.Tags {
			p.links = append(p.links, link{line: n, what: fmt.Sprintf("source %d's tag", s.ID), id: t, want: string(repository.LabelTag)})
		}
		if s.Author != 0 {
			p.links = append(p.links, link{line: n, what: fmt.Sprintf("source %d's author", s.ID), id: s.Author, want: "user"})
		}
	case TypeSourceRun:
		var r repository.SourceRun
		if err := decodeStrict(body, &r); err != nil {
			return err
		}
		if err := p.newID("source run", r.ID, p.runs[r.ID] != 0); err != nil {
			return err
		}
		if !p.sources[r.SourceID] {
			return fmt.Errorf("run %d is of source %d, which is not in the file", r.ID, r.SourceID)
		}
		p.runs[r.ID] = r.SourceID
	}
	return nil
}

// newID checks an item's ID: from 1 to repository.MaxExplicitID, once.
func (p *plan) newID(what string, id int64, seen bool) error {
	if id < 1 || id > repository.MaxExplicitID {
		return fmt.Errorf("%s ID %d is not from 1 to %d", what, id, repository.MaxExplicitID)
	}
	if seen {
		return fmt.Errorf("%s %d twice", what, id)
	}
	return nil
}

// recordStatus reports whether r's status is one the service writes: an
// image's is "inherit" (images are WordPress attachments, which the API
// and the importer register so) or a post status, any other record's a
// post status (repository.Statuses).
func recordStatus(r *repository.Record) bool {
	if r.Kind == repository.KindImage && r.Status == "inherit" {
		return true
	}
	return repository.IsStatus(r.Status)
}

// record checks a record line.
func (p *plan) record(n int, r *repository.Record) error {
	if _, ok := p.records[r.ID]; ok {
		return fmt.Errorf("record %d twice", r.ID)
	}
	if r.ID > repository.MaxExplicitID {
		return fmt.Errorf("record ID %d is over %d", r.ID, repository.MaxExplicitID)
	}
	if !recordStatus(r) {
		return fmt.Errorf("%s %d: %q is not a status", r.Kind, r.ID, r.Status)
	}
	if err := p.cal.CheckImported(r); err != nil {
		return fmt.Errorf("%s %d: %v", r.Kind, r.ID, err)
	}
	p.records[r.ID] = r.Kind
	for _, tx := range []repository.Text{r.Title, r.Content, r.Excerpt, r.Slug} {
		p.useLangs(n, tx)
	}
	add := func(what string, ids []int64, want string) {
		for _, id := range ids {
			p.links = append(p.links, link{line: n, kind: r.Kind, owner: r.ID, rel: what, id: id, want: want})
		}
	}
	if r.ImageID != 0 {
		add("image", []int64{r.ImageID}, string(repository.KindImage))
	}
	if e := r.Event; e != nil {
		add("venue", e.Venues, string(repository.KindVenue))
		add("organizer", e.Organizers, string(repository.KindOrganizer))
		add("category", e.Categories, string(repository.LabelCategory))
		add("tag", e.Tags, string(repository.LabelTag))
		if e.Parent != 0 {
			add("parent", []int64{e.Parent}, string(repository.KindEvent))
		}
		for _, o := range e.Overrides {
			for _, tx := range []repository.Text{o.Title, o.Content, o.Excerpt} {
				p.useLangs(n, tx)
			}
			if o.Venues != nil {
				add("override "+o.Key+" venue", *o.Venues, string(repository.KindVenue))
			}
			if o.Organizers != nil {
				add("override "+o.Key+" organizer", *o.Organizers, string(repository.KindOrganizer))
			}
		}
	}
	return nil
}

// useLangs records the languages a text uses.
func (p *plan) useLangs(n int, t repository.Text) {
	for lang := range t {
		if _, ok := p.langs[lang]; !ok {
			p.langs[lang] = n
		}
	}
}

// checkLanguages refuses texts in languages the target does not have.
func (p *plan) checkLanguages(target []string) {
	var missing []string
	for lang := range p.langs {
		if !slices.Contains(target, lang) {
			missing = append(missing, lang)
		}
	}
	if len(missing) == 0 {
		return
	}
	slices.Sort(missing)
	var where []string
	for _, l := range missing {
		where = append(where, fmt.Sprintf("%s (first on line %d)", l, p.langs[l]))
	}
	p.problem(0, "the file has texts in %s, which this service's LANGUAGES (%s) lack: add them to LANGUAGES",
		strings.Join(where, ", "), strings.Join(target, ","))
}

// checkSequences refuses sequences behind the file's own IDs.
func (p *plan) checkSequences() {
	maxOf := func(ids []int64) int64 {
		if len(ids) == 0 {
			return 0
		}
		return slices.Max(ids)
	}
	for _, c := range []struct {
		name string
		max  int64
	}{
		{repository.SeqRecords, maxOf(slices.Collect(maps.Keys(p.records)))},
		{repository.SeqLabels, maxOf(slices.Collect(maps.Keys(p.labels)))},
		{repository.SeqUsers, maxOf(slices.Collect(maps.Keys(p.users)))},
		{repository.SeqWebhooks, maxOf(slices.Collect(maps.Keys(p.webhooks)))},
		{repository.SeqSources, maxOf(slices.Collect(maps.Keys(p.sources)))},
		{repository.SeqSourceRuns, maxOf(slices.Collect(maps.Keys(p.runs)))},
	} {
		if p.seqs[c.name] < c.max {
			p.problem(0, "the sequence %s is %d, below the file's own ID %d", c.name, p.seqs[c.name], c.max)
		}
	}
}

// checkLinks refuses links to items neither the file nor the target holds
// (or of another kind).
func (p *plan) checkLinks(ctx context.Context, st repository.Store) error {
	var recIDs, labelIDs, userIDs []int64
	for _, l := range p.links {
		switch l.want {
		case "user":
			if p.users[l.id] == "" {
				userIDs = append(userIDs, l.id)
			}
		case string(repository.LabelCategory), string(repository.LabelTag):
			if p.labels[l.id] == "" || l.storeOnly {
				labelIDs = append(labelIDs, l.id)
			}
		default:
			if p.records[l.id] == "" {
				recIDs = append(recIDs, l.id)
			}
		}
	}
	recs, err := recordKinds(ctx, st, recIDs)
	if err != nil {
		return err
	}
	labels, err := labelKinds(ctx, st, labelIDs)
	if err != nil {
		return err
	}
	users := map[int64]bool{}
	for _, id := range uniq(userIDs) {
		_, err := st.GetUser(ctx, id)
		switch {
		case err == nil:
			users[id] = true
		case !errors.Is(err, repository.ErrNotFound):
			return fmt.Errorf("load: %w", err)
		}
	}
	for _, l := range p.links {
		var got string
		switch l.want {
		case "user":
			if p.users[l.id] != "" || users[l.id] {
				continue
			}
		case string(repository.LabelCategory), string(repository.LabelTag):
			got = string(p.labels[l.id])
			if got == "" || l.storeOnly {
				got = string(labels[l.id])
			}
		default:
			got = string(p.records[l.id])
			if got == "" {
				got = string(recs[l.id])
			}
		}
		switch {
		case got == l.want:
		case got == "" && l.storeOnly:
			p.problem(l.line, "%s is %d, which is not in this store", l.describe(), l.id)
		case got == "":
			p.problem(l.line, "%s is %d, which is neither in the file nor in this store (a %s)", l.describe(), l.id, l.want)
		default:
			p.problem(l.line, "%s is %d, which is a %s, not a %s", l.describe(), l.id, got, l.want)
		}
	}
	return nil
}

// checkTarget refuses IDs the target holds as another kind of item: a
// record of another kind, a label of the other taxonomy, a user of
// another login (or a login of another user), a token of another user, a
// run of another source.
func (p *plan) checkTarget(ctx context.Context, st repository.Store) error {
	recs, err := recordKinds(ctx, st, slices.Collect(maps.Keys(p.records)))
	if err != nil {
		return err
	}
	for _, id := range slices.Sorted(maps.Keys(recs)) {
		if recs[id] != p.records[id] {
			p.problem(0, "record %d is a %s in the file and a %s in this store", id, p.records[id], recs[id])
		}
	}
	labels, err := labelKinds(ctx, st, slices.Collect(maps.Keys(p.labels)))
	if err != nil {
		return err
	}
	for _, id := range slices.Sorted(maps.Keys(labels)) {
		if labels[id] != p.labels[id] {
			p.problem(0, "label %d is a %s in the file and a %s in this store", id, p.labels[id], labels[id])
		}
	}
	for _, id := range slices.Sorted(maps.Keys(p.users)) {
		login := p.users[id]
		u, err := st.GetUser(ctx, id)
		switch {
		case err == nil && u.Login != login:
			p.problem(0, "user %d is %q in the file and %q in this store", id, login, u.Login)
		case err != nil && !errors.Is(err, repository.ErrNotFound):
			return fmt.Errorf("load: %w", err)
		}
		u, err = st.GetUserByLogin(ctx, login)
		switch {
		case err == nil && u.ID != id:
			p.problem(0, "login %q is user %d in the file and user %d in this store", login, id, u.ID)
		case err != nil && !errors.Is(err, repository.ErrNotFound):
			return fmt.Errorf("load: %w", err)
		}
	}
	for _, hash := range slices.Sorted(maps.Keys(p.tokens)) {
		t, err := st.TokenByHash(ctx, hash)
		switch {
		case err == nil && t.UserID != p.tokens[hash]:
			p.problem(0, "token %s is user %d's in the file and user %d's in this store", t.ID(), p.tokens[hash], t.UserID)
		case err != nil && !errors.Is(err, repository.ErrNotFound):
			return fmt.Errorf("load: %w", err)
		}
	}
	p.targetRuns = map[int64]int64{}
	if len(p.runs) > 0 {
		srcs, err := st.ListSources(ctx)
		if err != nil {
			return fmt.Errorf("load: %w", err)
		}
		for _, s := range srcs {
			runs, err := st.ListSourceRuns(ctx, s.ID, 0)
			if err != nil {
				return fmt.Errorf("load: %w", err)
			}
			for _, r := range runs {
				p.targetRuns[r.ID] = r.SourceID
			}
		}
		for _, id := range slices.Sorted(maps.Keys(p.runs)) {
			if src, ok := p.targetRuns[id]; ok && src != p.runs[id] {
				p.problem(0, "source run %d is source %d's in the file and source %d's in this store", id, p.runs[id], src)
			}
		}
	}
	return nil
}

// recordKinds returns the kinds of the records among ids the store holds.
func recordKinds(ctx context.Context, st repository.Store, ids []int64) (map[int64]repository.Kind, error) {
	out := map[int64]repository.Kind{}
	ids = uniq(ids)
	for start := 0; start < len(ids); start += defaultPage {
		got, err := st.GetRecords(ctx, ids[start:min(start+defaultPage, len(ids))])
		if err != nil {
			return nil, fmt.Errorf("load: %w", err)
		}
		for id, r := range got {
			out[id] = r.Kind
		}
	}
	return out, nil
}

// labelKinds returns the taxonomies of the labels among ids the store
// holds.
func labelKinds(ctx context.Context, st repository.Store, ids []int64) (map[int64]repository.LabelKind, error) {
	out := map[int64]repository.LabelKind{}
	ids = uniq(ids)
	for start := 0; start < len(ids); start += defaultPage {
		got, err := st.GetLabels(ctx, ids[start:min(start+defaultPage, len(ids))])
		if err != nil {
			return nil, fmt.Errorf("load: %w", err)
		}
		for id, t := range got {
			out[id] = t.Taxonomy
		}
	}
	return out, nil
}

// uniq returns ids sorted without repeats.
func uniq(ids []int64) []int64 {
	s := slices.Clone(ids)
	slices.Sort(s)
	return slices.Compact(s)
}
