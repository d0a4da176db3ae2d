package sources

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"

	"github.com/calendar/eventcal/app/apierr"
	"github.com/calendar/eventcal/app/calendar"
	"github.com/calendar/eventcal/app/sources/feed"
	"github.com/calendar/eventcal/repository"
)

// Link hashes that are no digest of a feed event.
const (
	// hashRemoved marks an event that left its feed (counted removed
	// once; a later run that finds it in the feed again writes it).
	hashRemoved = "removed"
	// hashPending marks a series whose changed occurrences are not all
	// written yet (a run writes it again).
	hashPending = "pending"
)

// runWrite is the work of one run: the source, what it imported before,
// and the venue and organizer IDs found so far, by name.
type runWrite struct {
	r      *Runner
	src    *repository.Source
	run    *repository.SourceRun
	lang   string
	author int64
	// places maps "venue:<name>" and "organizer:<name>" (lower case) to
	// the ID of the record of that name.
	places map[string]int64
	// labels maps "category:<name>" and "tag:<name>" (the name as the
	// feed gives it) to the ID of the term the calendar resolves that
	// name to (labelItem), so that a run looks each name up once, not
	// once per event.
	labels map[string]int64
	// newLabels holds the names (keys as in labels) no label had when
	// the run met them: the run creates at most MaxNewLabelsPerRun.
	newLabels map[string]bool
}

// identity is an event's identity within its source.
type identity struct{ uid, recurrenceID string }

// execute reads the source and, when the read succeeded, writes what
// changed. An error fails the run: the read's (nothing was written), or
// a store failure or cancellation while writing (what was written
// stays; the next run goes on from there, as unchanged events cost
// nothing).
func (r *Runner) execute(ctx context.Context, src *repository.Source, run *repository.SourceRun) (*ReadResult, error) {
	res, err := r.d.Reader.Read(ctx, src)
	if err != nil {
		return nil, err
	}
	unchanged := res != nil && (res.NotModified || (res.ContentHash != "" && res.ContentHash == src.ContentHash))
	if res == nil || (res.Calendar == nil && !unchanged) {
		return nil, errors.New("not a calendar: the source gave no events")
	}
	items, err := r.d.Store.SourceItems(ctx, src.ID)
	if err != nil {
		return nil, err
	}
	known := map[identity]*repository.SourceItem{}
	for i := range items {
		it := &items[i]
		k := identity{it.UID, it.RecurrenceID}
		if prev := known[k]; prev == nil || it.RecordID < prev.RecordID {
			known[k] = it
		}
	}
	if unchanged {
		for _, it := range known {
			if it.Hash != hashRemoved {
				run.Unchanged++
			}
		}
		return res, nil
	}
	w := &runWrite{r: r, src: src, run: run, lang: r.cfg.DefaultLanguage, places: map[string]int64{}, labels: map[string]int64{}, newLabels: map[string]bool{}}
	if err := w.findAuthor(ctx); err != nil {
		return nil, err
	}
	for _, p := range res.Calendar.Problems {
		w.fail(p.UID, p.Problem)
	}
	seen := map[identity]bool{}
	for i := range res.Calendar.Events {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ev := &res.Calendar.Events[i]
		k := identity{ev.UID, ev.RecurrenceID}
		switch {
		case strings.TrimSpace(ev.UID) == "":
			w.fail("", "the event has no UID: a source's events are told apart by their UID")
			continue
		case seen[k]:
			w.fail(ev.UID, "the feed holds this event twice (same UID and RECURRENCE-ID); the first was imported")
			continue
		}
		seen[k] = true
		digest := ev.Digest()
		it := known[k]
		if it != nil && it.Hash == digest {
			run.Unchanged++
			continue
		}
		if err := r.pace(ctx); err != nil {
			return nil, err
		}
		if err := w.write(ctx, ev, digest, it); err != nil {
			return nil, err
		}
	}
	for _, k := range slices.SortedFunc(maps.Keys(known), func(a, b identity) int {
		return int(known[a].RecordID - known[b].RecordID)
	}) {
		it := known[k]
		if seen[k] || it.Hash == hashRemoved {
			continue
		}
		if err := r.pace(ctx); err != nil {
			return nil, err
		}
		if err := w.remove(ctx, it); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// findAuthor sets the author of the events the run creates: the
// source's, when that user still exists (else none).
func (w *runWrite) findAuthor(ctx context.Context) error {
	if w.src.Author == 0 {
		return nil
	}
	_, err := w.r.d.Store.GetUser(ctx, w.src.Author)
	switch {
	case errors.Is(err, repository.ErrNotFound):
		w.r.log.Warn("source run: the source's author no longer exists; events are created without one", "source", w.src.ID, "author", w.src.Author)
		return nil
	case err != nil:
		return err
	}
	w.author = w.src.Author
	return nil
}

// fail counts an event the run could not import, keeping the first
// MaxRunProblems problems.
func (w *runWrite) fail(uid, problem string) {
	w.run.Failed++
	if len(w.run.Problems) < repository.MaxRunProblems {
		w.run.Problems = append(w.run.Problems, repository.RunProblem{UID: uid, Problem: truncateText(problem, 500)})
	}
}

// note records a problem of an event the run imported in part (not
// counted as failed), keeping the first MaxRunProblems problems.
func (w *runWrite) note(uid, problem string) {
	if len(w.run.Problems) < repository.MaxRunProblems {
		w.run.Problems = append(w.run.Problems, repository.RunProblem{UID: uid, Problem: truncateText(problem, 500)})
	}
}

// refusal returns the text of the calendar's refusal of a command ("" for
// an error that is no refusal: a store failure).
func refusal(err error) string {
	var ae *apierr.Error
	var fe *calendar.FieldError
	switch {
	case errors.As(err, &fe):
		return fe.Error()
	case errors.As(err, &ae) && ae.Status < 500:
		if params, ok := ae.Data["params"].(map[string]string); ok && len(params) > 0 {
			var parts []string
			for _, name := range slices.Sorted(maps.Keys(params)) {
				parts = append(parts, name+": "+params[name])
			}
			return strings.Join(parts, "; ")
		}
		return ae.Message
	}
	return ""
}

// write creates the feed event ev (it nil: new to the run's source) or
// updates the event it imported before, then writes the series' changed
// occurrences. A refusal counts the event failed; an error is a store
// failure.
func (w *runWrite) write(ctx context.Context, ev *feed.Event, digest string, it *repository.SourceItem) error {
	cal := w.r.d.Calendar
	tm, zone, err := w.timesOf(ev)
	if err != nil {
		w.fail(ev.UID, err.Error())
		return nil
	}
	var cur *repository.Record
	if it != nil {
		cur, err = w.r.d.Store.GetRecord(ctx, it.RecordID)
		switch {
		case errors.Is(err, repository.ErrNotFound):
			cur = nil // deleted meanwhile: created again
		case err != nil:
			return err
		}
	}
	link := &repository.SourceLink{SourceID: w.src.ID, UID: ev.UID, RecurrenceID: ev.RecurrenceID, Hash: digest}
	series := seriesOf(ev, tm) != nil
	if series && len(ev.Overrides) > 0 {
		link.Hash = hashPending // set once every change is written
	}
	in, err := w.eventInput(ctx, ev, cur, it != nil && it.Hash == hashRemoved, link, tm, zone)
	if err != nil {
		return err
	}
	var p *repository.Record
	if cur == nil {
		p, err = cal.CreateEvent(ctx, calendar.Operator, w.lang, in)
	} else {
		p, err = cal.UpdateEvent(ctx, calendar.Operator, w.lang, cur, in)
	}
	if err != nil {
		if msg := refusal(err); msg != "" {
			w.fail(ev.UID, msg)
			return nil
		}
		return fmt.Errorf("write event %q: %w", ev.UID, err)
	}
	w.remember(ev, p)
	if series && len(ev.Overrides) > 0 {
		p, err = w.writeOverrides(ctx, ev, p, tm)
		if err != nil {
			if msg := refusal(err); msg != "" {
				w.fail(ev.UID, msg)
				return nil
			}
			return err
		}
		link.Hash = digest
		if _, err := cal.UpdateEvent(ctx, calendar.Operator, w.lang, p, &calendar.EventInput{Source: calendar.Some(link)}); err != nil {
			return fmt.Errorf("write event %q: %w", ev.UID, err)
		}
	}
	if cur == nil {
		w.run.Created++
	} else {
		w.run.Updated++
	}
	return nil
}

// remember keeps the IDs of the venue and organizer an event write
// linked, by name, for the run's next events.
func (w *runWrite) remember(ev *feed.Event, p *repository.Record) {
	if p.Event == nil {
		return
	}
	if ev.Location != nil && len(p.Event.Venues) == 1 {
		w.places[placeKey(repository.KindVenue, plain(ev.Location.Name))] = p.Event.Venues[0]
	}
	if ev.Organizer != nil && len(p.Event.Organizers) == 1 {
		w.places[placeKey(repository.KindOrganizer, plain(ev.Organizer.Name))] = p.Event.Organizers[0]
	}
}

// writeOverrides writes the changed instances of the series p, one
// occurrence change each (the write of p dropped the changes it had).
// A refusal is returned with the instance it concerns.
func (w *runWrite) writeOverrides(ctx context.Context, ev *feed.Event, p *repository.Record, tm times) (*repository.Record, error) {
	cal := w.r.d.Calendar
	for i := range ev.Overrides {
		ov := &ev.Overrides[i]
		key := tm.key(ov.Of)
		venue := int64(0)
		if ov.Location != nil && plain(ov.Location.Name) != "" {
			id, err := w.venueID(ctx, ov.Location)
			if err != nil {
				return nil, err
			}
			venue = id
		}
		q, _, err := cal.UpdateOccurrence(ctx, calendar.Operator, w.lang, p, key, occurrenceInput(ov, tm, venue))
		if err != nil {
			if msg := refusal(err); msg != "" {
				return nil, &calendar.FieldError{Field: "the changed instance " + key + " (RECURRENCE-ID)", Problem: msg}
			}
			return nil, err
		}
		p = q
	}
	return p, nil
}

// venueID returns the ID of the venue of a changed instance: the one
// of that name, or one created from the feed's place (an occurrence
// links existing venues only).
func (w *runWrite) venueID(ctx context.Context, pl *feed.Place) (int64, error) {
	key := placeKey(repository.KindVenue, plain(pl.Name))
	if id, err := w.findPlace(ctx, repository.KindVenue, pl.Name); err != nil || id != 0 {
		return id, err
	}
	v, _, err := w.r.d.Calendar.CreateVenue(ctx, calendar.Operator, w.lang, venueInput(pl))
	if err != nil {
		return 0, err
	}
	w.places[key] = v.ID
	return v.ID, nil
}

// remove handles an event that left the feed: trashed (OnRemovedTrash)
// or left as it is (OnRemovedKeep), and marked removed so that later
// runs count it once.
func (w *runWrite) remove(ctx context.Context, it *repository.SourceItem) error {
	cal := w.r.d.Calendar
	cur, err := w.r.d.Store.GetRecord(ctx, it.RecordID)
	switch {
	case errors.Is(err, repository.ErrNotFound):
		return nil // deleted meanwhile
	case err != nil:
		return err
	}
	if w.src.OnRemoved != repository.OnRemovedKeep && cur.Status != repository.StatusTrash {
		p, err := cal.Delete(ctx, calendar.Operator, cur, false)
		var ae *apierr.Error
		switch {
		case err == nil:
			cur = p
		case errors.As(err, &ae) && ae.Status == 410: // trashed meanwhile
		case errors.As(err, &ae) && ae.Status == 404:
			return nil
		default:
			return fmt.Errorf("trash event %d: %w", cur.ID, err)
		}
	}
	link := &repository.SourceLink{SourceID: w.src.ID, UID: it.UID, RecurrenceID: it.RecurrenceID, Hash: hashRemoved}
	if _, err := cal.UpdateEvent(ctx, calendar.Operator, w.lang, cur, &calendar.EventInput{Source: calendar.Some(link)}); err != nil {
		var ae *apierr.Error
		if errors.As(err, &ae) && ae.Status == 404 {
			return nil
		}
		return fmt.Errorf("mark event %d removed: %w", cur.ID, err)
	}
	w.run.Removed++
	return nil
}

// pace waits for the next write's turn (the limiter) and yields the
// processor: a write that finds its token ready would otherwise follow
// the last one at once, and the readers queued behind the run's
// goroutine would wait out its whole time slice.
func (r *Runner) pace(ctx context.Context) error {
	if err := r.limiter.Wait(ctx); err != nil {
		return err
	}
	runtime.Gosched()
	return nil
}
