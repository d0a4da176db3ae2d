// Package meili is the Meilisearch implementation of search.Engine, used
// when MEILI_URL is set.
//
// The engine keeps four indexes, <prefix>events (published events),
// <prefix>events_hidden (events of every other status, hidden.go),
// <prefix>venues and <prefix>organizers, whose settings are declared in code (settingsFor) and
// reconciled at Init. Documents are flattened at this edge (documents.go),
// filters are built by a few typed helpers with a single quoting function
// (filter.go), and every write is a Meilisearch task that the engine awaits
// and whose final status it checks: the client reports a failed task as a
// task, not as an error.
//
// Totals are exact: searches use the page/hitsPerPage form, whose totalHits
// is exhaustive, never the offset/limit form, whose estimatedTotalHits is
// an estimate (see pageWindow).
//
// One rule of the contract is decided in Go on data Meilisearch returns
// (exact.go): whether a point within millimetres of the edge of a Near
// circle is inside (search.GeoCircle.Contains is Meilisearch's own rule,
// but Go's cos and asin may differ in the last place from those of the C
// library Meilisearch runs with). "All the words in one field" for place
// text queries is one federated multi-search (exact.go, searchOneField).
//
// Languages, place fields and event statuses each get their own attributes;
// a document bringing one the settings lack extends them before it is
// indexed, so no text is ever silently unsearchable. An event document
// holds each distinct text once: the base text (the default language's)
// and the languages the event has a text of its own in, named in a
// filterable list; a text search in another language than the default is
// then two searches of one index whose hits are merged (documents.go,
// pair.go).
//
// A write of many requests (a long series) lets the caller's yield
// function run other writes between two of its requests
// (search.WithYield): the sync worker indexes small edits there, so they
// never wait behind the rest of a large event's queued work.
package meili

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/meilisearch/meilisearch-go"

	"github.com/calendar/eventcal/search"
)

// Options configures an Engine. The zero value is usable.
type Options struct {
	// IndexPrefix starts every index UID (default "calendar_"). Meilisearch
	// accepts letters, digits, '-' and '_' in index UIDs.
	IndexPrefix string
	// TaskTimeout bounds the wait for one task (default 2 minutes); an
	// engine that has not finished a task by then counts as unavailable.
	TaskTimeout time.Duration
	// TaskPollInterval is the delay between two task status checks
	// (default 50ms).
	TaskPollInterval time.Duration
	// BatchSize is the number of documents or IDs per write request
	// (default 1000).
	BatchSize int
	// MaxRequestBytes bounds the JSON body of one document addition
	// (MEILI_MAX_REQUEST_BYTES, default DefaultMaxRequestBytes): additions
	// are cut by size as well as by BatchSize (payload.go). It must stay
	// below the server's payload limit (100 MB by default).
	MaxRequestBytes int
	// Languages are the content languages (config LANGUAGES); their text
	// attributes are declared searchable at Init. A document in another
	// language extends the settings before it is indexed.
	Languages []string
	// DefaultLanguage is the content language whose text an event
	// document stores as its base text (config DEFAULT_LANGUAGE; empty:
	// the first of Languages the event has). See documents.go.
	DefaultLanguage string
	// Logger receives the engine's notices, such as a settings repair at
	// Init (default slog.Default()).
	Logger *slog.Logger
}

// The defaults of Options.
const (
	DefaultIndexPrefix      = "calendar_"
	DefaultTaskTimeout      = 2 * time.Minute
	DefaultTaskPollInterval = 50 * time.Millisecond
	DefaultBatchSize        = 1000
)

func (o Options) withDefaults() (Options, error) {
	if o.IndexPrefix == "" {
		o.IndexPrefix = DefaultIndexPrefix
	}
	for _, r := range o.IndexPrefix {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return o, fmt.Errorf("meili: index prefix %q: only letters, digits, '-' and '_' are allowed", o.IndexPrefix)
		}
	}
	if o.TaskTimeout <= 0 {
		o.TaskTimeout = DefaultTaskTimeout
	}
	if o.TaskPollInterval <= 0 {
		o.TaskPollInterval = DefaultTaskPollInterval
	}
	if o.BatchSize <= 0 {
		o.BatchSize = DefaultBatchSize
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.MaxRequestBytes <= 0 {
		o.MaxRequestBytes = DefaultMaxRequestBytes
	}
	return o, nil
}

// Engine is the Meilisearch search engine. It is safe for concurrent use.
//
// Its methods are the search.Engine and search.Rebuilder contracts; the
// steps they share are declared on one type per concern, each holding the
// engine's state (core): settingsStore (settings.go), documentWriter and
// queryRunner (meili.go, exact.go, pair.go, collapse.go), taskWaiter
// (tasks.go), schemeStore (scheme.go) and eventLayout (hidden.go).
type Engine struct {
	*core
}

// core is the state of an engine, shared by its parts, which it embeds
// (each holding the core back).
type core struct {
	taskWaiter
	documentWriter
	settingsStore
	queryRunner
	schemeStore
	eventLayout

	client meilisearch.ServiceManager
	opts   Options
	// owner is false for engines made by WithPrefix, which share the
	// client of the engine they were made from.
	owner bool

	mu    sync.RWMutex
	vocab vocabulary
	// learnMu serialises vocabulary growth (settings updates).
	learnMu sync.Mutex

	// rebuildMu guards rebuilding: whether a rebuild is open (rebuild.go).
	rebuildMu  sync.Mutex
	rebuilding bool

	// outdated is set when the live indexes were written under an older
	// attribute scheme (scheme.go).
	outdated outdatedFlag
	// liveScheme is the attribute scheme recorded for the live indexes
	// (0: none), as found by the last Init or set by a rebuild's swap.
	liveScheme atomic.Int64
	// gen is the last write generation (hidden.go).
	gen atomic.Int64
}

var (
	_ search.Engine    = (*Engine)(nil)
	_ search.Rebuilder = (*Engine)(nil)
)

// newEngine returns the engine working on c, with c's parts pointing back
// at it.
func newEngine(c *core) *Engine {
	c.taskWaiter = taskWaiter{c}
	c.documentWriter = documentWriter{c}
	c.settingsStore = settingsStore{c}
	c.queryRunner = queryRunner{c}
	c.schemeStore = schemeStore{c}
	c.eventLayout = eventLayout{c}
	return &Engine{core: c}
}

// Open connects to the Meilisearch server at url (with apiKey when not
// empty) and checks that it answers and is at least MinVersion; an
// unreachable server is an error wrapping search.ErrUnavailable, an older
// one an *UnsupportedVersionError. Call Init before indexing or searching.
func Open(ctx context.Context, url, apiKey string, opts Options) (*Engine, error) {
	if url == "" {
		return nil, errors.New("meili: empty server URL")
	}
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	// No client-side retries: the caller decides. The sync worker retries
	// its batch later, and an API request answers 503 at once instead of
	// stalling through the client's 1s+2s+3s back-off on 502/503/504.
	client := meilisearch.New(url, meilisearch.WithAPIKey(apiKey), meilisearch.DisableRetries())
	e := newEngine(&core{client: client, opts: opts, owner: true})
	e.vocab, _ = vocabulary{
		venueFields:     defaultVenueFields,
		organizerFields: defaultOrganizerFields,
		statuses:        defaultStatuses,
	}.union(vocabulary{languages: opts.Languages})
	if err := e.Ping(ctx); err != nil {
		client.Close()
		return nil, err
	}
	if err := e.checkVersion(ctx); err != nil {
		client.Close()
		return nil, err
	}
	return e, nil
}

// IndexUID returns the UID of one of the engine's indexes.
func (e *core) IndexUID(ix Index) string { return e.opts.IndexPrefix + string(ix) }

// Init creates the indexes if needed and reconciles their settings with
// settingsFor, sending an update only for an index whose live settings
// differ. It then checks the attribute scheme the indexes were written
// under (see Outdated).
func (e *Engine) Init(ctx context.Context) error {
	e.learnMu.Lock()
	defer e.learnMu.Unlock()
	for _, ix := range indexes {
		if err := e.EnsureIndex(ctx, e.IndexUID(ix), ix); err != nil {
			return err
		}
	}
	return e.checkScheme(ctx)
}

// IndexEvents adds or replaces event documents, at most BatchSize and
// MaxRequestBytes per request, and returns once every batch task has
// succeeded. A document over MaxRequestBytes on its own is not indexed:
// the others are, and a *DocumentTooLargeError naming it is returned.
func (e *Engine) IndexEvents(ctx context.Context, docs []search.EventDocument) error {
	if len(docs) == 0 {
		return nil
	}
	var add vocabulary
	for _, d := range docs {
		add.languages = appendKeys(add.languages, d.Text)
	}
	if err := e.learn(ctx, sorted(add)); err != nil {
		return err
	}
	return e.indexEvents(ctx, docs)
}

// IndexPlaces adds or replaces venue and organizer documents (each goes to
// the index of its Kind).
func (e *Engine) IndexPlaces(ctx context.Context, docs []search.PlaceDocument) error {
	if len(docs) == 0 {
		return nil
	}
	byIndex := map[Index][]search.PlaceDocument{}
	var add vocabulary
	for _, d := range docs {
		ix, err := indexOf(d.Kind)
		if err != nil {
			return err
		}
		byIndex[ix] = append(byIndex[ix], d)
		add.languages = appendKeys(add.languages, d.Text)
		add.statuses = appendKeys(add.statuses, d.LastStart)
		if ix == VenueIndex {
			add.venueFields = appendKeys(add.venueFields, d.Fields)
		} else {
			add.organizerFields = appendKeys(add.organizerFields, d.Fields)
		}
	}
	if err := e.learn(ctx, sorted(add)); err != nil {
		return err
	}
	statuses := e.vocabulary().statuses
	for _, ix := range []Index{VenueIndex, OrganizerIndex} {
		part := byIndex[ix]
		err := e.addDocuments(ctx, e.IndexUID(ix), len(part), func(i int) map[string]any {
			return placeDocument(part[i], statuses)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// documentWriter adds and deletes documents and waits for the writes to
// land.
type documentWriter struct{ *core }

// addDocuments sends n documents, built by doc, in batches and awaits each
// batch's task before sending the next.
func (e *documentWriter) addDocuments(ctx context.Context, uid string, n int, doc func(int) map[string]any) error {
	return e.addDocumentsPK(ctx, uid, attrID, n, doc)
}

// addDocumentsPK is addDocuments for an index whose primary key is pk.
// The documents are cut by count and encoded size (cutDocuments); a
// document over the size budget is left out and reported after the
// others were indexed.
func (e *documentWriter) addDocumentsPK(ctx context.Context, uid, pk string, n int, doc func(int) map[string]any) error {
	return e.addDocumentsBetween(ctx, uid, pk, n, doc, nil)
}

// addDocumentsBetween is addDocumentsPK calling before (when not nil)
// ahead of each request, after the previous request's task has ended.
func (e *documentWriter) addDocumentsBetween(ctx context.Context, uid, pk string, n int, doc func(int) map[string]any, before func() error) error {
	return cutDocuments(uid, pk, n, e.opts.BatchSize, e.opts.MaxRequestBytes, doc, func(body []byte, first, last int) error {
		if before != nil {
			if err := before(); err != nil {
				return err
			}
		}
		task, err := e.client.Index(uid).AddDocumentsWithContext(ctx, body, &meilisearch.DocumentOptions{PrimaryKey: &pk})
		return e.await(ctx, fmt.Sprintf("add documents %d-%d to %s", first, last, uid), task, err)
	})
}

// DeleteEvents removes every document (every occurrence) of the events:
// a deletion by filter id IN [...] in each event index; missing IDs are
// not an error.
func (e *Engine) DeleteEvents(ctx context.Context, ids []int64) error {
	for _, ix := range []Index{EventIndex, EventHiddenIndex} {
		if err := e.deleteEventsByID(ctx, e.IndexUID(ix), ids); err != nil {
			return err
		}
	}
	return nil
}

// deleteEventsByID deletes, by filter, every document of index uid whose
// id is one of ids, at most BatchSize and maxFilterValues IDs per task,
// and awaits the tasks. Every task is queued before the first is awaited:
// deletions by filter of one index are processed in one batch
// (autobatcher.rs).
func (e *documentWriter) deleteEventsByID(ctx context.Context, uid string, ids []int64) error {
	var tasks []*meilisearch.TaskInfo
	for _, part := range filterChunks(ids, e.opts.BatchSize) {
		task, err := e.client.Index(uid).DeleteDocumentsByFilterWithContext(ctx, in(attrID, part), nil)
		if err != nil {
			return e.fail("delete events from "+uid, err)
		}
		tasks = append(tasks, task)
	}
	for _, task := range tasks {
		if err := e.await(ctx, "delete events from "+uid, task, nil); err != nil {
			return err
		}
	}
	return nil
}

// DeletePlaces removes venues or organizers; missing IDs are not an error.
func (e *Engine) DeletePlaces(ctx context.Context, kind search.PlaceKind, ids []int64) error {
	ix, err := indexOf(kind)
	if err != nil {
		return err
	}
	return e.deleteDocuments(ctx, e.IndexUID(ix), ids)
}

func (e *documentWriter) deleteDocuments(ctx context.Context, uid string, ids []int64) error {
	for start := 0; start < len(ids); start += e.opts.BatchSize {
		end := min(start+e.opts.BatchSize, len(ids))
		keys := make([]string, 0, end-start)
		for _, id := range ids[start:end] {
			keys = append(keys, strconv.FormatInt(id, 10))
		}
		task, err := e.client.Index(uid).DeleteDocumentsWithContext(ctx, keys, nil)
		if err := e.await(ctx, "delete documents from "+uid, task, err); err != nil {
			return err
		}
	}
	return nil
}

// SearchEvents runs an event query.
func (e *Engine) SearchEvents(ctx context.Context, q search.EventQuery) (search.Result, error) {
	return e.searchEvents(ctx, q)
}

// SearchPlaces runs a venue or organizer query.
func (e *Engine) SearchPlaces(ctx context.Context, q search.PlaceQuery) (search.Result, error) {
	ix, err := indexOf(q.Kind)
	if err != nil {
		return search.Result{}, err
	}
	return e.run(ctx, planPlaces(q, ix, e.vocabulary(), e.IndexUID(ix)))
}

// queryRunner sends the searches and counts and combines their answers
// (exact.go, pair.go, collapse.go and the two-index search of hidden.go).
type queryRunner struct{ *core }

// run sends a planned search and cuts the requested page out of the
// returned page window.
func (e *queryRunner) run(ctx context.Context, p plan) (search.Result, error) {
	if p.req == nil {
		return search.Result{}, nil
	}
	if p.pairLang != "" {
		return e.runPair(ctx, p)
	}
	if p.near != nil {
		geo, ok, err := e.nearFilter(ctx, p)
		if err != nil || !ok {
			return search.Result{}, err
		}
		p.req.Filter = and(p.filter, geo)
	}
	if p.oneField != nil {
		return e.searchOneField(ctx, p)
	}
	req := p.req
	if p.collapse && len(req.Facets) > 0 {
		r := *req
		r.Facets = nil
		req = &r
	}
	resp, err := e.client.Index(p.index).SearchWithContext(ctx, req.Query, req)
	if err != nil {
		return search.Result{}, e.fail("search "+p.index, err)
	}
	hits := resp.Hits
	hits = hits[min(p.skip, len(hits)):]
	hits = hits[:min(p.limit, len(hits))]
	res := search.Result{IDs: make([]int64, 0, len(hits)), Total: int(resp.TotalHits)}
	if err := readHits(&res, hits); err != nil {
		return search.Result{}, fmt.Errorf("meili: search %s: %w", p.index, err)
	}
	if len(p.facets) > 0 {
		dist := resp.FacetDistribution
		if p.collapse {
			// Every matching document counts in the facets, as without
			// CollapseSeries: one more request, without distinct and
			// without hits.
			r := *p.req
			r.Distinct, r.Page, r.HitsPerPage = "", 1, ptr(int64(0))
			fr, err := e.client.Index(p.index).SearchWithContext(ctx, r.Query, &r)
			if err != nil {
				return search.Result{}, e.fail("search "+p.index+" (facets)", err)
			}
			dist = fr.FacetDistribution
		}
		if res.Facets, err = facetCounts(dist, p.facets); err != nil {
			return search.Result{}, fmt.Errorf("meili: search %s: %w", p.index, err)
		}
	}
	return res, nil
}

// readHits appends the IDs and occurrence keys of event hits to res
// (Occurrences stays nil while every hit is a single event).
func readHits(res *search.Result, hits meilisearch.Hits) error {
	for _, h := range hits {
		id, err := hitID(h)
		if err != nil {
			return err
		}
		res.IDs = append(res.IDs, id)
		occ := ""
		if raw, ok := h[attrOccurrence]; ok {
			if err := json.Unmarshal(raw, &occ); err != nil {
				return fmt.Errorf("decode hit occurrence %s: %w", raw, err)
			}
		}
		if occ != "" && res.Occurrences == nil {
			res.Occurrences = make([]string, len(res.IDs)-1, cap(res.IDs))
		}
		if res.Occurrences != nil {
			res.Occurrences = append(res.Occurrences, occ)
		}
	}
	return nil
}

// facetCounts reads a facetDistribution ({"<attribute>": {"<value>":
// count}}) into the contract's facets. Meilisearch writes numbers and
// booleans as their JSON text ("3", "true"), which are the contract's
// values (search.FacetValues).
func facetCounts(raw json.RawMessage, facets []string) (map[string]map[string]int, error) {
	var dist map[string]map[string]int
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &dist); err != nil {
			return nil, fmt.Errorf("decode facetDistribution: %w", err)
		}
	}
	out := make(map[string]map[string]int, len(facets))
	for _, f := range facets {
		counts := map[string]int{}
		for v, n := range dist[facetAttrs[f]] {
			if n > 0 {
				counts[v] = n
			}
		}
		out[f] = counts
	}
	return out, nil
}

func hitID(h meilisearch.Hit) (int64, error) {
	var id int64
	if err := json.Unmarshal(h[attrID], &id); err != nil {
		return 0, fmt.Errorf("decode hit id %s: %w", h[attrID], err)
	}
	return id, nil
}

// CountEvents returns the number of indexed event documents: those of
// the editor index, which holds every event (the sum of the two indexes
// while the live ones are of an older layout, where they were disjoint).
func (e *Engine) CountEvents(ctx context.Context) (int, error) {
	if !e.legacyLayout() {
		return e.count(ctx, e.IndexUID(EventHiddenIndex))
	}
	public, err := e.count(ctx, e.IndexUID(EventIndex))
	if err != nil {
		return 0, err
	}
	hidden, err := e.count(ctx, e.IndexUID(EventHiddenIndex))
	return public + hidden, err
}

// CountPlaces returns the number of indexed venues or organizers.
func (e *Engine) CountPlaces(ctx context.Context, kind search.PlaceKind) (int, error) {
	ix, err := indexOf(kind)
	if err != nil {
		return 0, err
	}
	return e.count(ctx, e.IndexUID(ix))
}

func (e *queryRunner) count(ctx context.Context, uid string) (int, error) {
	stats, err := e.client.Index(uid).GetStatsWithContext(ctx, nil)
	if err != nil {
		return 0, e.fail("stats of "+uid, err)
	}
	return int(stats.NumberOfDocuments), nil
}

// Ping checks that the server answers and reports itself available.
func (e *Engine) Ping(ctx context.Context) error {
	h, err := e.client.HealthWithContext(ctx)
	if err != nil {
		return e.fail("health", err)
	}
	if h.Status != "available" {
		return fmt.Errorf("%w: meili: health status %q", search.ErrUnavailable, h.Status)
	}
	return nil
}

// Close releases the engine's idle connections. Closing an engine made by
// WithPrefix does nothing: it shares its parent's client.
func (e *Engine) Close() error {
	if e.owner {
		e.client.Close()
	}
	return nil
}

// TaskError is a Meilisearch task that finished without succeeding
// (status failed or canceled). The client returns such a task as a normal
// result; the engine turns it into this error.
type TaskError struct {
	// Op says what the engine was doing.
	Op string
	// TaskUID, Type, IndexUID and Status describe the task.
	TaskUID  int64
	Type     string
	IndexUID string
	Status   string
	// Code and Message are the task's error (for example
	// "invalid_document_id"); both are empty for a canceled task.
	Code    string
	Message string
}

// Error names the operation, the task and the task's error code.
func (e *TaskError) Error() string {
	return fmt.Sprintf("meili: %s: task %d (%s) %s: %s: %s", e.Op, e.TaskUID, e.Type, e.Status, e.Code, e.Message)
}

// await waits for the task a write request enqueued and checks its final
// status. err is the write request's own error, passed through so that
// callers can write e.await(ctx, op, client.Call(…)).
func (e *taskWaiter) await(ctx context.Context, op string, info *meilisearch.TaskInfo, err error) error {
	if err != nil {
		return e.fail(op, err)
	}
	task, err := e.waitTask(ctx, op, info.TaskUID)
	if err != nil {
		return err
	}
	return taskResult(op, info.TaskUID, task)
}

// taskResult is nil for a task that succeeded, else its *TaskError.
func taskResult(op string, uid int64, task *meilisearch.Task) error {
	if task.Status == meilisearch.TaskStatusSucceeded {
		return nil
	}
	return &TaskError{
		Op: op, TaskUID: uid, Type: string(task.Type), IndexUID: task.IndexUID,
		Status: string(task.Status), Code: task.Error.Code, Message: task.Error.Message,
	}
}

// fail wraps an error of the client. Failures to reach the server
// (connection refused, timeouts) and 5xx answers wrap search.ErrUnavailable,
// which the API reports as 503.
func (e *core) fail(op string, err error) error {
	var me *meilisearch.Error
	if errors.As(err, &me) && me.OriginError != nil {
		// meilisearch.Error does not unwrap: keep its cause (a
		// *net.OpError, context.Canceled, …) reachable by errors.Is/As.
		err = &causeError{err: err, cause: me.OriginError}
	}
	if unavailable(err) {
		return fmt.Errorf("%w: meili: %s: %w", search.ErrUnavailable, op, err)
	}
	return fmt.Errorf("meili: %s: %w", op, err)
}

func unavailable(err error) bool {
	var me *meilisearch.Error
	if errors.As(err, &me) {
		switch me.ErrCode {
		case meilisearch.MeilisearchCommunicationError, meilisearch.MeilisearchTimeoutError, meilisearch.MeilisearchMaxRetriesExceeded:
			return true
		}
		return me.StatusCode >= 500
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, context.DeadlineExceeded)
}

// apiCode returns the Meilisearch error code of a client error ("" when
// there is none), e.g. "index_not_found".
func apiCode(err error) string {
	var me *meilisearch.Error
	if errors.As(err, &me) {
		return me.MeilisearchApiError.Code
	}
	return ""
}

type causeError struct{ err, cause error }

func (c *causeError) Error() string { return c.err.Error() }
func (c *causeError) Unwrap() []error {
	return []error{c.err, c.cause}
}

// appendKeys appends the keys of m to dst.
func appendKeys[V any](dst []string, m map[string]V) []string {
	for k := range m {
		if !slices.Contains(dst, k) {
			dst = append(dst, k)
		}
	}
	return dst
}

// sorted sorts the lists of a vocabulary built from map keys, so that new
// attributes are declared in a deterministic order.
func sorted(v vocabulary) vocabulary {
	slices.Sort(v.languages)
	slices.Sort(v.venueFields)
	slices.Sort(v.organizerFields)
	slices.Sort(v.statuses)
	return v
}
