package sources

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/calendar/eventcal/app/access"
	"github.com/calendar/eventcal/app/apierr"
	"github.com/calendar/eventcal/app/htmlpolicy"
	"github.com/calendar/eventcal/app/sources/feed"
	"github.com/calendar/eventcal/app/sources/fetch"
	"github.com/calendar/eventcal/repository"
)

// Limits of the sources service.
const (
	// MaxSources bounds the registered sources.
	MaxSources = 500
	// MaxSourceName bounds a source's name, in characters.
	MaxSourceName = 200
	// MaxSourceLabels bounds the categories, and the tags, of a source.
	MaxSourceLabels = 50
	// DefaultRunList and MaxRunList are the page sizes of a source's
	// runs (GET /sources/{id}/runs, "source runs").
	DefaultRunList = 50
	MaxRunList     = 200
)

// The source statuses and formats a source takes.
var (
	// SourceFormats are the formats of Source.Format.
	SourceFormats = []string{repository.SourceAuto, repository.SourceICS, repository.SourceTEC}
	// SourceStatuses are the statuses imported events may get.
	SourceStatuses = []string{repository.StatusDraft, repository.StatusPending, repository.StatusPublish, repository.StatusPrivate}
	// OnRemovedValues are the values of Source.OnRemoved.
	OnRemovedValues = []string{repository.OnRemovedTrash, repository.OnRemovedKeep}
)

// SourcesDeps are what the sources service uses.
type SourcesDeps struct {
	// Store holds the sources, their runs and the labels a source names.
	Store repository.Store
	// DefaultLanguage is the language a category or tag named by its
	// slug or name is looked up in.
	DefaultLanguage string
	// AllowPrivate accepts source URLs on private addresses
	// (SOURCES_ALLOW_PRIVATE).
	AllowPrivate bool
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Sources registers, changes, removes and lists calendar sources and
// lists their runs, for editors and administrators (contributors and
// authors are refused with 403, anonymous callers with 401). It is the
// one way sources are written: the API's /sources routes and the
// "eventcal source" commands both call it.
//
// Each command checks all of its input (every problem named in one 400
// rest_invalid_param, data.params.<field>), the caller and the records it
// names, and only then writes, once: a refused command leaves the store
// as it was. A source never creates labels: its categories and tags name
// existing ones (by ID, slug or name), resolved to IDs when it is saved.
// Changing a source's url or format forgets what the last run read (its
// ETag, Last-Modified, content hash and detected format), so the next run
// reads the feed in full. The runs themselves are the runner's (run*.go).
type Sources struct {
	store        repository.Store
	sources      repository.SourceStore
	lang         string
	allowPrivate bool
	now          func() time.Time
}

// NewSources returns the service; Store must be set.
func NewSources(d SourcesDeps) *Sources {
	s := &Sources{store: d.Store, lang: d.DefaultLanguage, allowPrivate: d.AllowPrivate, now: d.Now}
	if d.Store != nil {
		s.sources = d.Store
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s
}

// SourceInput is a new source or a (partial) change of one: a nil field
// is left as it is (on create: the defaults).
type SourceInput struct {
	// URL is the feed's address (http or https; required on create).
	URL *string
	// Format is "auto" (default), "ics" or "tec".
	Format *string
	// Name is plain text; default: the URL's host.
	Name *string
	// Schedule is feed.ParseSchedule's; "" (default) runs on demand only.
	Schedule *string
	// Status is what imported events get: draft (default), pending,
	// publish or private.
	Status *string
	// Categories and Tags name existing labels by ID, slug or name.
	Categories *[]string
	Tags       *[]string
	// OnRemoved is "trash" (default) or "keep".
	OnRemoved *string
}

// ErrNoSourceStore is returned by every command of a nil service, or of
// one without a store.
var ErrNoSourceStore = errors.New("sources: no store keeps the sources")

// errNoSource is the 404 of a source route naming no source.
func errNoSource() error { return apierr.New(404, "source_not_found", "No source has this ID.") }

// CanManage reports whether by may manage sources: editors and admins.
func CanManage(by *repository.User) bool { return access.CanEditOthers(by) }

// requireManager refuses a caller who may not manage sources.
func requireManager(by *repository.User) error {
	if !CanManage(by) {
		return access.Forbidden(by)
	}
	return nil
}

// ready reports a service without a source store (or a nil service).
func (s *Sources) ready() error {
	if s == nil || s.sources == nil {
		return ErrNoSourceStore
	}
	return nil
}

// checked is a SourceInput read and checked: the values to store.
type checked struct {
	url, format, name, schedule, status, onRemoved *string
	categories, tags                               *[]int64
}

// check reads and checks every field of in, naming each problem in one
// 400, and resolves the labels it names (a store failure is returned as
// it is).
func (s *Sources) check(ctx context.Context, by *repository.User, in *SourceInput, create bool) (*checked, error) {
	var p apierr.Params
	if create && (in.URL == nil || strings.TrimSpace(*in.URL) == "") {
		p.Missing("url")
		return nil, p.Err()
	}
	out := &checked{}
	if in.URL != nil {
		u := strings.TrimSpace(*in.URL)
		if err := fetch.CheckURL(u, s.allowPrivate); err != nil {
			p.InvalidValue("url", err.Error(), *in.URL)
		} else {
			out.url = &u
		}
	}
	oneOf := func(name string, v *string, allowed []string) *string {
		if v == nil {
			return nil
		}
		x := strings.ToLower(strings.TrimSpace(*v))
		if !slices.Contains(allowed, x) {
			p.InvalidValue(name, "Must be one of "+strings.Join(allowed, ", ")+".", *v)
			return nil
		}
		return &x
	}
	out.format = oneOf("format", in.Format, SourceFormats)
	out.onRemoved = oneOf("on_removed", in.OnRemoved, OnRemovedValues)
	if st := oneOf("status", in.Status, SourceStatuses); st != nil {
		switch {
		case *st == repository.StatusPublish && !access.CanPublish(by),
			*st == repository.StatusPrivate && !access.CanEditOthers(by):
			p.InvalidValue("status", "Your role may not publish; use draft or pending.", *in.Status)
		default:
			out.status = st
		}
	}
	if in.Name != nil {
		n := strings.TrimSpace(htmlpolicy.Plain(*in.Name))
		if utf8.RuneCountInString(n) > MaxSourceName {
			p.InvalidValue("name", "Must be at most "+strconv.Itoa(MaxSourceName)+" characters long.", *in.Name)
		} else {
			out.name = &n
		}
	}
	if in.Schedule != nil {
		sc := strings.TrimSpace(*in.Schedule)
		if _, err := feed.ParseSchedule(sc); err != nil {
			p.InvalidValue("schedule", err.Error(), *in.Schedule)
		} else {
			sc = strings.Join(strings.Fields(sc), " ")
			out.schedule = &sc
		}
	}
	for _, l := range []struct {
		name string
		kind repository.LabelKind
		in   *[]string
		out  **[]int64
	}{{"categories", repository.LabelCategory, in.Categories, &out.categories}, {"tags", repository.LabelTag, in.Tags, &out.tags}} {
		if l.in == nil {
			continue
		}
		raw := make([]any, len(*l.in))
		for i, x := range *l.in {
			raw[i] = x
		}
		if len(*l.in) > MaxSourceLabels {
			p.InvalidValue(l.name, "Must name at most "+strconv.Itoa(MaxSourceLabels)+" labels.", raw)
			continue
		}
		ids, unknown, err := s.resolveLabels(ctx, l.kind, *l.in)
		if err != nil {
			return nil, err
		}
		if len(unknown) > 0 {
			what := "category"
			if l.kind == repository.LabelTag {
				what = "tag"
			}
			p.InvalidValue(l.name, fmt.Sprintf("No %s has the ID, slug or name %s; a source names existing %s only (create them first).",
				what, quoteAll(unknown), l.name), raw)
			continue
		}
		*l.out = &ids
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// quoteAll writes names as "a", "b".
func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

// resolveLabels finds the labels of kind that refs name (an ID, else a
// slug, else a name, in the default language), without repeats, and the
// refs that name none.
func (s *Sources) resolveLabels(ctx context.Context, kind repository.LabelKind, refs []string) (ids []int64, unknown []string, err error) {
	ids = []int64{}
	for _, raw := range refs {
		ref := strings.TrimSpace(raw)
		var found *repository.Label
		if id, perr := strconv.ParseInt(ref, 10, 64); perr == nil && id > 0 {
			l, gerr := s.store.GetLabel(ctx, id)
			switch {
			case errors.Is(gerr, repository.ErrNotFound):
			case gerr != nil:
				return nil, nil, gerr
			case l.Taxonomy == kind:
				found = l
			}
		} else if ref != "" {
			for _, q := range []repository.LabelQuery{{Taxonomy: kind, Slug: ref, SlugLang: s.lang}, {Taxonomy: kind, Name: ref, NameLang: s.lang}} {
				ls, ferr := s.store.FindLabels(ctx, q)
				if ferr != nil {
					return nil, nil, ferr
				}
				if len(ls) > 0 {
					found = ls[0]
					break
				}
			}
		}
		switch {
		case found == nil:
			unknown = append(unknown, raw)
		case !slices.Contains(ids, found.ID):
			ids = append(ids, found.ID)
		}
	}
	return ids, unknown, nil
}

// apply copies the checked fields onto src; a new url or format forgets
// what the last run read.
func (c *checked) apply(src *repository.Source) {
	if c.url != nil && *c.url != src.URL || c.format != nil && *c.format != src.Format {
		src.ETag, src.LastModified, src.ContentHash, src.DetectedFormat = "", "", "", ""
	}
	set := func(dst *string, v *string) {
		if v != nil {
			*dst = *v
		}
	}
	set(&src.URL, c.url)
	set(&src.Format, c.format)
	set(&src.Name, c.name)
	set(&src.Schedule, c.schedule)
	set(&src.Status, c.status)
	set(&src.OnRemoved, c.onRemoved)
	if c.categories != nil {
		src.Categories = *c.categories
	}
	if c.tags != nil {
		src.Tags = *c.tags
	}
	if src.Name == "" {
		src.Name = hostOf(src.URL)
	}
}

// hostOf is the host of a URL ("" when it has none).
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// Get returns the source id for by. It refuses a caller who may not
// manage sources, then a source that is not there (404 source_not_found).
func (s *Sources) Get(ctx context.Context, by *repository.User, id int64) (*repository.Source, error) {
	if err := requireManager(by); err != nil {
		return nil, err
	}
	if err := s.ready(); err != nil {
		return nil, err
	}
	src, err := s.sources.GetSource(ctx, id)
	if errors.Is(err, repository.ErrNotFound) {
		return nil, errNoSource()
	}
	return src, err
}

// List returns every source, by ID, for by.
func (s *Sources) List(ctx context.Context, by *repository.User) ([]*repository.Source, error) {
	if err := requireManager(by); err != nil {
		return nil, err
	}
	if err := s.ready(); err != nil {
		return nil, err
	}
	return s.sources.ListSources(ctx)
}

// Create registers a source, by by (its author). It refuses, in order: a
// caller who may not manage sources, the fields (400 naming each), a
// registry already holding MaxSources sources (400 source_limit).
func (s *Sources) Create(ctx context.Context, by *repository.User, in *SourceInput) (*repository.Source, error) {
	if err := requireManager(by); err != nil {
		return nil, err
	}
	if err := s.ready(); err != nil {
		return nil, err
	}
	c, err := s.check(ctx, by, in, true)
	if err != nil {
		return nil, err
	}
	all, err := s.sources.ListSources(ctx)
	if err != nil {
		return nil, err
	}
	if len(all) >= MaxSources {
		return nil, apierr.New(400, "source_limit", "At most "+strconv.Itoa(MaxSources)+" sources can be registered.")
	}
	now := s.now().UTC()
	src := &repository.Source{Format: repository.SourceAuto, Status: repository.StatusDraft, OnRemoved: repository.OnRemovedTrash,
		Categories: []int64{}, Tags: []int64{}, Created: now, Updated: now}
	if by != nil {
		src.Author = by.ID
	}
	c.apply(src)
	if err := s.sources.CreateSource(ctx, src); err != nil {
		return nil, err
	}
	return src, nil
}

// Update changes the source id with the fields in sets, by by. It
// refuses, in order: a caller who may not manage sources, a source that
// is not there (404), the fields (400 naming each).
func (s *Sources) Update(ctx context.Context, by *repository.User, id int64, in *SourceInput) (*repository.Source, error) {
	cur, err := s.Get(ctx, by, id)
	if err != nil {
		return nil, err
	}
	c, err := s.check(ctx, by, in, false)
	if err != nil {
		return nil, err
	}
	src, err := s.sources.UpdateSource(ctx, cur.ID, func(src *repository.Source) error {
		c.apply(src)
		src.Updated = s.now().UTC()
		return nil
	})
	if errors.Is(err, repository.ErrNotFound) {
		return nil, errNoSource()
	}
	return src, err
}

// Delete removes the source id and its runs, by by, and returns it as it
// was. The events it imported stay (with their link to it). It refuses a
// caller who may not manage sources, then a source that is not there
// (404).
func (s *Sources) Delete(ctx context.Context, by *repository.User, id int64) (*repository.Source, error) {
	src, err := s.Get(ctx, by, id)
	if err != nil {
		return nil, err
	}
	if err := s.sources.DeleteSource(ctx, src.ID); err != nil && !errors.Is(err, repository.ErrNotFound) {
		return nil, err
	}
	return src, nil
}

// Runs returns up to limit runs of the source id, newest first (limit is
// brought within 1 and MaxRunList), for by. It refuses a caller who may
// not manage sources, then a source that is not there (404).
func (s *Sources) Runs(ctx context.Context, by *repository.User, id int64, limit int) ([]*repository.SourceRun, error) {
	src, err := s.Get(ctx, by, id)
	if err != nil {
		return nil, err
	}
	return s.sources.ListSourceRuns(ctx, src.ID, min(max(limit, 1), MaxRunList))
}

// LastRun returns the newest run of src (nil when it never ran).
func (s *Sources) LastRun(ctx context.Context, src *repository.Source) (*repository.SourceRun, error) {
	if err := s.ready(); err != nil {
		return nil, err
	}
	runs, err := s.sources.ListSourceRuns(ctx, src.ID, 1)
	if err != nil || len(runs) == 0 {
		return nil, err
	}
	return runs[0], nil
}

// AllowPrivate reports whether source URLs may name private addresses
// (SOURCES_ALLOW_PRIVATE); false for a nil service.
func (s *Sources) AllowPrivate() bool { return s != nil && s.allowPrivate }
