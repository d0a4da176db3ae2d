package handlers

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/calendar/eventcal/app/apierr"
	"github.com/calendar/eventcal/app/input"
	"github.com/calendar/eventcal/app/present"
	"github.com/calendar/eventcal/app/sources"
	"github.com/calendar/eventcal/app/sources/feed"
	"github.com/calendar/eventcal/app/sources/fetch"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/sync/schedule"
)

// SourceRunner starts a run of a source in the background
// (sources.Runner): it records the run as running and returns it, or
// sources.ErrRunning when a run of that source is in progress.
type SourceRunner interface {
	Start(ctx context.Context, id int64, trigger string) (*repository.SourceRun, error)
}

// sourceHandlers serves the routes of calendar sources (editors and
// administrators); every write goes through the sources service (svc).
type sourceHandlers struct {
	svc *sources.Sources
	// runner starts runs; nil answers POST /sources/{id}/run with 503.
	runner SourceRunner
	// allowPrivate is SOURCES_ALLOW_PRIVATE, for the url check.
	allowPrivate bool
	// loc is TIMEZONE, in which cron schedules are read; now the clock.
	loc *time.Location
	now func() time.Time
}

// sourceWriteArgs declares the body of POST /sources and PATCH
// /sources/{id}. No argument has a declared default, so that an update
// changes only what it sends: the defaults are the service's, on create.
func (h *sourceHandlers) sourceWriteArgs(create bool) []Arg {
	return []Arg{
		{Name: "url", Type: tString, Required: create, Format: "uri", Check: h.checkSourceURL,
			Desc: "The feed's address: an iCalendar feed, or the REST root of a site running The Events Calendar (http or https, no credentials; private addresses need SOURCES_ALLOW_PRIVATE=true)."},
		{Name: "format", Type: tString, Enum: sources.SourceFormats,
			Desc: "ics (an iCalendar feed), tec (a site running The Events Calendar) or auto (tell them apart on the first run); default auto."},
		{Name: "name", Type: tString, MaxLen: sources.MaxSourceName, Text: plainText,
			Desc: "The editors' name for the source (plain text); default: the URL's host."},
		{Name: "schedule", Type: tString, Check: checkSourceSchedule,
			Desc: "When the source runs: " + feed.ScheduleHelp + "; default \"\"."},
		{Name: "status", Type: tString, Enum: sources.SourceStatuses,
			Desc: "The status the events a run creates get; default draft (nothing appears publicly unreviewed)."},
		{Name: "categories", Type: tArray, Items: tAny, MaxItems: sources.MaxSourceLabels,
			Desc: "Categories added to every imported event: IDs, slugs or names of existing categories (unknown ones are refused, never created)."},
		{Name: "tags", Type: tArray, Items: tAny, MaxItems: sources.MaxSourceLabels,
			Desc: "Tags added to every imported event: IDs, slugs or names of existing tags (unknown ones are refused, never created)."},
		{Name: "on_removed", Type: tString, Enum: sources.OnRemovedValues,
			Desc: "What happens to an imported event that left the feed: trash (default; restored if it comes back) or keep."},
	}
}

// sourceRunListArgs declares GET /sources/{id}/runs.
func sourceRunListArgs() []Arg {
	return []Arg{{Name: "per_page", Type: tInteger, Default: strconv.Itoa(sources.DefaultRunList), Check: positiveInt,
		Desc: "Runs to show, newest first (at most " + strconv.Itoa(sources.MaxRunList) + ")."}}
}

func (h *sourceHandlers) checkSourceURL(_ *Request, v any) string {
	u, _ := input.AsString(v)
	if err := fetch.CheckURL(strings.TrimSpace(u), h.allowPrivate); err != nil {
		return err.Error()
	}
	return ""
}

func checkSourceSchedule(_ *Request, v any) string {
	s, _ := input.AsString(v)
	if _, err := feed.ParseSchedule(s); err != nil {
		return err.Error()
	}
	return ""
}

// sourceID is the route's :id.
func sourceID(r *Request) int64 {
	id, _ := input.AsInt(r.bag.Values["id"])
	return id
}

// sourceInput decodes the validated body of a source write.
func sourceInput(b *input.Bag) *sources.SourceInput {
	in := &sources.SourceInput{}
	str := func(name string) *string {
		if !b.Has(name) {
			return nil
		}
		s := b.Str(name)
		return &s
	}
	in.URL, in.Format, in.Name, in.Schedule = str("url"), str("format"), str("name"), str("schedule")
	in.Status, in.OnRemoved = str("status"), str("on_removed")
	list := func(name string) *[]string {
		v, ok := b.Get(name)
		if !ok {
			return nil
		}
		out := input.AsStrings(v)
		return &out
	}
	in.Categories, in.Tags = list("categories"), list("tags")
	return in
}

// present renders a source with its newest run.
func (h *sourceHandlers) present(r *Request, src *repository.Source) (*present.Source, error) {
	last, err := h.svc.LastRun(r.ctx, src)
	if err != nil {
		return nil, err
	}
	return h.shape(src, last), nil
}

// shape is the source's response: with its newest run, and next_run by
// the spread rule every replica's schedule follows
// (schedule.SourceNext), left out for a manual source.
func (h *sourceHandlers) shape(src *repository.Source, last *repository.SourceRun) *present.Source {
	o := present.NewSource(src, last)
	if next, ok := schedule.SourceNext(src.ID, src.Schedule, h.loc, h.now()); ok {
		o.NextRun = next.UTC().Format(present.TimeRFC3339)
	}
	return o
}

// listSources serves GET /sources.
func (h *sourceHandlers) listSources(r *Request) error {
	all, err := h.svc.List(r.ctx, r.user)
	if err != nil {
		return sourceErr(err)
	}
	items := make([]any, 0, len(all))
	for _, src := range all {
		o, err := h.present(r, src)
		if err != nil {
			return err
		}
		items = append(items, o)
	}
	return present.SendJSON(r.c, 200, present.NewObj().Set("sources", items))
}

// createSource serves POST /sources: 201 with the source.
func (h *sourceHandlers) createSource(r *Request) error {
	src, err := h.svc.Create(r.ctx, r.user, sourceInput(r.bag))
	if err != nil {
		return sourceErr(err)
	}
	return present.SendJSON(r.c, 201, h.shape(src, nil))
}

// getSource serves GET /sources/{id}.
func (h *sourceHandlers) getSource(r *Request) error {
	src, err := h.svc.Get(r.ctx, r.user, sourceID(r))
	return h.reply(r, src, err)
}

// updateSource serves POST/PUT/PATCH /sources/{id} (partial).
func (h *sourceHandlers) updateSource(r *Request) error {
	src, err := h.svc.Update(r.ctx, r.user, sourceID(r), sourceInput(r.bag))
	return h.reply(r, src, err)
}

// reply answers 200 with src and its newest run, or the error of the
// service call that returned src.
func (h *sourceHandlers) reply(r *Request, src *repository.Source, err error) error {
	if err != nil {
		return sourceErr(err)
	}
	o, err := h.present(r, src)
	if err != nil {
		return err
	}
	return present.SendJSON(r.c, 200, o)
}

// deleteSource serves DELETE /sources/{id}: the source and its runs go;
// the events it imported stay.
func (h *sourceHandlers) deleteSource(r *Request) error {
	src, err := h.svc.Delete(r.ctx, r.user, sourceID(r))
	if err != nil {
		return sourceErr(err)
	}
	return present.SendJSON(r.c, 200, present.NewObj().Set("deleted", true).Set("previous", present.NewSource(src, nil)))
}

// runSource serves POST /sources/{id}/run: 202 with the run as recorded
// (running), which goes on in the background; 409 source_running when a
// run of the source is in progress.
func (h *sourceHandlers) runSource(r *Request) error {
	src, err := h.svc.Get(r.ctx, r.user, sourceID(r))
	if err != nil {
		return sourceErr(err)
	}
	if h.runner == nil {
		return apierr.New(503, "sources_unavailable", "This service runs without the sources runner: sources can be managed but not run here; try again later.")
	}
	run, err := h.runner.Start(r.ctx, src.ID, "api")
	if errors.Is(err, sources.ErrRunning) {
		return apierr.New(409, "source_running", "A run of this source is in progress; wait for it to end (GET its runs).")
	}
	if errors.Is(err, repository.ErrNotFound) {
		// Deleted since it was read.
		return apierr.New(404, "source_not_found", "No source has this ID.")
	}
	if err != nil {
		return err
	}
	return present.SendJSON(r.c, 202, present.NewSourceRun(run))
}

// sourceRuns serves GET /sources/{id}/runs: {"runs": [...]}, newest
// first.
func (h *sourceHandlers) sourceRuns(r *Request) error {
	n := int64(sources.DefaultRunList)
	if v, ok := r.bag.Get("per_page"); ok {
		n, _ = input.AsInt(v)
	}
	runs, err := h.svc.Runs(r.ctx, r.user, sourceID(r), int(min(max(n, 1), sources.MaxRunList)))
	if err != nil {
		return sourceErr(err)
	}
	items := make([]any, 0, len(runs))
	for _, run := range runs {
		items = append(items, present.NewSourceRun(run))
	}
	return present.SendJSON(r.c, 200, present.NewObj().Set("runs", items))
}

// sourceErr answers a store that keeps no sources (or a service without
// the sources service) with 503.
func sourceErr(err error) error {
	if errors.Is(err, sources.ErrNoSourceStore) {
		return apierr.New(503, "sources_unavailable", "This store keeps no calendar sources.")
	}
	return err
}
