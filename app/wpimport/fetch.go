package wpimport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/calendar/eventcal/app/calendar"
	"github.com/calendar/eventcal/config/currency"
	"github.com/calendar/eventcal/repository"
)

// fetch reads every list, the hidden events, the store's own records the
// lists lack, and the password-protected events.
func (r *importRun) fetch(ctx context.Context) error {
	if r.m.zone == nil {
		zone, err := r.c.siteZone(ctx)
		if err != nil {
			return err
		}
		if zone == nil {
			zone = time.UTC
			r.log.Info("the site's time zone is not readable from its REST index; the dates of drafts are read in UTC")
		}
		r.m.zone = zone
	}
	for _, kind := range []string{KindCategory, KindTag, KindVenue, KindOrganizer, KindEvent} {
		l := listOf[kind]
		r.progress.Start("read "+l.name, -1)
		n, total, err := r.c.fetchList(ctx, l, func(total, n int) {
			if total > 0 {
				r.progress.Total(total)
			}
			r.progress.Add(n)
		}, func(id int64, raw json.RawMessage) error {
			return r.take(kind, id, raw)
		})
		r.progress.Finish()
		if err != nil {
			return err
		}
		if total >= 0 && total != n {
			r.rep.warnf("the %s list announced %d records (X-TEC-Total) and gave %d (records changed while it was read?); run the import again", l.name, total, n)
		}
		r.log.Info("read", "list", l.name, "records", n)
	}

	// Events hidden from listings are in no TEC list; WordPress's own
	// route enumerates every event ID.
	var probe []int64
	wp, ok, err := r.c.wpEventIDs(ctx)
	if err != nil {
		return err
	}
	wpIDs := wp.ids
	r.passwords = wp.passwords
	switch {
	case !ok:
		r.rep.warnf("WordPress's wp/v2/tribe_events route is not reachable from %s: events hidden from listings (which no TEC list shows) are imported only if an earlier import has them", r.rep.Source)
	case r.c.authenticated() && !wp.editContext:
		r.rep.warnf("the source refused its edit context to this user (wp/v2/tribe_events?context=edit): events hidden from listings that have ended cannot be found, and password-protected events come without their text, terms, venue, organizers and password; import as an administrator to carry them over")
	}
	for _, id := range wpIDs {
		if r.listed[KindEvent][id] {
			continue
		}
		if err := checkID(id); err != nil {
			r.fail(KindEvent, id, err)
			continue
		}
		probe = append(probe, id)
	}

	if err := r.scanOwn(ctx); err != nil {
		return err
	}
	// Records imported earlier that the lists lack: hidden events, or
	// records the source deleted. A single read tells them apart.
	probes := map[string]map[int64]bool{KindEvent: {}}
	for _, id := range probe {
		probes[KindEvent][id] = true
	}
	for _, kind := range []string{KindCategory, KindTag, KindVenue, KindOrganizer, KindEvent} {
		for id := range r.own[kind] {
			if !r.listed[kind][id] {
				if probes[kind] == nil {
					probes[kind] = map[int64]bool{}
				}
				probes[kind][id] = true
			}
		}
	}
	for _, kind := range []string{KindCategory, KindTag, KindVenue, KindOrganizer, KindEvent} {
		ids := sortedKeys(probes[kind])
		if len(ids) == 0 {
			continue
		}
		if len(ids) > r.caps.Probes {
			return &CapError{Cap: CapProbes, Limit: int64(r.caps.Probes), Where: fmt.Sprintf("the %d %s no list showed (each read one by one)", len(ids), listOf[kind].name)}
		}
		r.progress.Start("read unlisted "+listOf[kind].name, len(ids))
		for _, id := range ids {
			if err := r.probe(ctx, kind, id); err != nil {
				r.progress.Finish()
				return err
			}
			r.progress.Add(1)
		}
		r.progress.Finish()
	}
	if err := r.findProtected(ctx, wp, ok); err != nil {
		return err
	}
	r.applyStatuses(wp.statuses)
	r.applyCurrency(wp.currency)
	return nil
}

// sourceStatuses maps the source's _tribe_events_status values to event
// statuses ("" is scheduled).
var sourceStatuses = map[string]string{
	"":             repository.EventScheduled,
	"scheduled":    repository.EventScheduled,
	"canceled":     repository.EventCanceled,
	"cancelled":    repository.EventCanceled,
	"postponed":    repository.EventPostponed,
	"moved_online": repository.EventMovedOnline,
	"moved-online": repository.EventMovedOnline,
}

// applyStatuses gives the events read their status and reason from the
// source's meta (WordPress's route in the edit context). A status the
// calendar does not know is kept as scheduled, and a reason longer than
// calendar.MaxEventStatusReason is cut; both are reported as changes.
func (r *importRun) applyStatuses(statuses map[int64]wpStatus) {
	for _, id := range sortedKeys(statuses) {
		rec := r.recs[KindEvent][id]
		if rec == nil || rec.post == nil || rec.post.Event == nil {
			continue
		}
		src := statuses[id]
		e := rec.post.Event
		st, ok := sourceStatuses[strings.ToLower(strings.TrimSpace(src.status))]
		if !ok {
			st = repository.EventScheduled
			r.m.note(KindEvent, id, "event_status", src.status, st)
		}
		if st == repository.EventScheduled {
			st = ""
		}
		e.EventStatus = st
		reason := plainText(src.reason)
		if runes := []rune(reason); len(runes) > calendar.MaxEventStatusReason {
			cut := strings.TrimSpace(string(runes[:calendar.MaxEventStatusReason]))
			r.m.note(KindEvent, id, "event_status_reason", reason, cut)
			reason = cut
		}
		e.EventStatusReason = reason
	}
}

// probe reads one record the lists did not show.
func (r *importRun) probe(ctx context.Context, kind string, id int64) error {
	body, res, err := r.c.fetchSingle(ctx, listOf[kind], id)
	if err != nil {
		return err
	}
	switch {
	case body != nil:
		return r.take(kind, id, body)
	case gone(res):
		// No such record (any more): disappeared if imported before.
	case kind == KindEvent && res.status == http.StatusForbidden && res.code() == "event-password-protected":
		r.protected[id] = true
		if r.passwords[id] != "" {
			return r.openProtected(ctx, id)
		}
		if r.own[kind][id] {
			r.unseen[kind][id] = true
		} else {
			r.fail(kind, id, fieldErr("password", "hidden from listings and password-protected: the source gives nothing of it without the password"))
		}
	default:
		if r.own[kind][id] {
			r.unseen[kind][id] = true
			r.rep.warnf("%s %d: the source did not list it and a read answered %s; kept as imported before", kind, id, r.c.describe(res))
		} else {
			r.rep.warnf("%s %d: WordPress lists it but a read answered %s; not imported", kind, id, r.c.describe(res))
		}
	}
	return nil
}

// findProtected finds the password-protected events. WordPress's own
// route says which they are (content.protected); the events it did not
// list that look redacted (no description, excerpt, terms, venue or
// organizer: what the TEC lists show of a protected event) are read one
// by one: a protected one answers 403 event-password-protected, even to
// an admin.
func (r *importRun) findProtected(ctx context.Context, wp wpEvents, wpOK bool) error {
	listed := map[int64]bool{}
	for _, id := range wp.ids {
		listed[id] = true
		if wp.protected[id] {
			r.protected[id] = true
		}
	}
	var ids []int64
	for id := range r.redacted {
		if wpOK && listed[id] {
			continue
		}
		ids = append(ids, id)
	}
	if len(ids) > 0 {
		slices.Sort(ids)
		r.progress.Start("check events without text", len(ids))
		for _, id := range ids {
			_, res, err := r.c.fetchSingle(ctx, listEvents, id)
			if err != nil {
				r.progress.Finish()
				return err
			}
			if res.status == http.StatusForbidden && res.code() == "event-password-protected" {
				r.protected[id] = true
			}
			r.progress.Add(1)
		}
		r.progress.Finish()
	}
	var open []int64
	for id := range r.protected {
		if r.passwords[id] != "" && !r.opened[id] && r.recs[KindEvent][id] != nil {
			open = append(open, id)
		}
	}
	if len(open) == 0 {
		return nil
	}
	slices.Sort(open)
	r.progress.Start("read protected events", len(open))
	defer r.progress.Finish()
	for _, id := range open {
		if err := r.openProtected(ctx, id); err != nil {
			return err
		}
		r.progress.Add(1)
	}
	return nil
}

// openProtected reads a password-protected event whole, with the
// password WordPress's route named (?password=, which opens it to TEC's
// read by ID), in place of the redacted form a list gave, and keeps the
// password with it (never shown in a response). A read the password does
// not open leaves the event as listed, with a warning.
func (r *importRun) openProtected(ctx context.Context, id int64) error {
	pw := r.passwords[id]
	q := url.Values{}
	q.Set("password", pw)
	body, res, err := r.c.fetchSingleWith(ctx, listEvents, id, q)
	if err != nil {
		return err
	}
	if body == nil {
		r.rep.warnf("event %d: password-protected, and its password did not open it (%s); imported as listed", id, r.c.describe(res))
		return nil
	}
	prev, wasListed := r.recs[KindEvent][id], r.listed[KindEvent][id]
	delete(r.recs[KindEvent], id)
	r.listed[KindEvent][id] = false
	if err := r.take(KindEvent, id, body); err != nil {
		return err
	}
	rec := r.recs[KindEvent][id]
	if rec == nil || rec.post == nil {
		// The whole form failed to map (take reported it): keep what the
		// list gave.
		if prev != nil {
			r.recs[KindEvent][id] = prev
		}
		r.listed[KindEvent][id] = wasListed || prev != nil
		return nil
	}
	rec.post.Password = pw
	r.opened[id] = true
	delete(r.redacted, id)
	return nil
}

// take maps one record the source gave (from a list, or read by ID) and
// keeps only its mapped form: the source's text is dropped at once, and
// what is kept counts against Caps.HeldBytes. id is the ID the list item
// holds (0 when unreadable) or the read was for; the mapped record's ID
// must be the same.
func (r *importRun) take(kind string, id int64, raw json.RawMessage) error {
	if id <= 0 {
		r.fail(kind, 0, fieldErr("id", "missing or not a positive number"))
		return nil
	}
	if r.listed[kind][id] {
		return nil
	}
	r.listed[kind][id] = true
	if err := r.hold(heldPerID); err != nil {
		return err
	}
	if err := checkID(id); err != nil {
		r.fail(kind, id, err)
		return nil
	}
	var rec *record
	var err error
	switch kind {
	case KindCategory, KindTag:
		var t *repository.Label
		if t, err = r.m.term(repository.LabelKind(kind), raw); err == nil {
			if t.ID != id {
				err = fieldErr("id", "a read of %d answered with record %d", id, t.ID)
			}
			rec = &record{kind: kind, id: id, term: t}
		}
	default:
		var p *repository.Record
		switch kind {
		case KindVenue:
			p, err = r.m.venue(raw)
		case KindOrganizer:
			p, err = r.m.organizer(raw)
		default:
			p, err = r.m.event(raw)
		}
		if err == nil && p.ID != id {
			err = fieldErr("id", "a read of %d answered with record %d", id, p.ID)
		}
		if err == nil {
			err = r.checkPost(p)
		}
		if err == nil {
			rec = &record{kind: kind, id: id, post: p}
		}
		if kind == KindEvent && looksRedacted(raw) {
			r.redacted[id] = true
		}
	}
	if err != nil {
		r.fail(kind, id, err)
		return r.hold(0)
	}
	size, err := recordSize(rec)
	if err != nil {
		return err
	}
	if rec.post != nil && rec.post.ImageID != 0 {
		// The image object the post links to is kept too (counted once
		// per link: more than it holds, never less).
		if img := r.m.images[rec.post.ImageID]; img != nil {
			size += int64(heldPerRecord + len(img.URL) + len(img.Extension) + len(img.Sizes))
		}
	}
	r.recs[kind][id] = rec
	return r.hold(size)
}

// recordSize is what a mapped record counts against Caps.HeldBytes: its
// encoded size (every string it holds) and a fixed part.
func recordSize(rec *record) (int64, error) {
	var v any = rec.post
	if rec.term != nil {
		v = rec.term
	}
	b, err := json.Marshal(v)
	if err != nil {
		return 0, err
	}
	return int64(heldPerRecord + len(b)), nil
}

// looksRedacted reports whether an event looks as the TEC lists show a
// password-protected one: no description, excerpt, terms, venue or
// organizer.
func looksRedacted(raw json.RawMessage) bool {
	var e struct {
		Description, Excerpt string
		Categories, Tags     []json.RawMessage
		Venue, Organizer     json.RawMessage
	}
	if json.Unmarshal(raw, &e) != nil {
		return false
	}
	empty := func(raw json.RawMessage) bool {
		s := strings.TrimSpace(string(raw))
		return s == "" || s == "[]" || s == "null" || s == "false"
	}
	return e.Description == "" && e.Excerpt == "" && len(e.Categories) == 0 && len(e.Tags) == 0 && empty(e.Venue) && empty(e.Organizer)
}

// scanOwn finds the store's records imported earlier from this source.
func (r *importRun) scanOwn(ctx context.Context) error {
	site := r.m.site
	var after int64
	for {
		ps, err := r.store.FindRecords(ctx, repository.RecordQuery{AfterID: after, Limit: 1000})
		if err != nil {
			return fmt.Errorf("read the store: %w", err)
		}
		for _, p := range ps {
			if p.Origin != nil && p.Origin.Site == site {
				r.own[string(p.Kind)][p.ID] = true
			}
		}
		if len(ps) < 1000 {
			break
		}
		after = ps[len(ps)-1].ID
	}
	for _, tax := range []repository.LabelKind{repository.LabelCategory, repository.LabelTag} {
		ts, err := r.store.FindLabels(ctx, repository.LabelQuery{Taxonomy: tax})
		if err != nil {
			return fmt.Errorf("read the store: %w", err)
		}
		for _, t := range ts {
			if t.Origin != nil && t.Origin.Site == site {
				r.own[string(tax)][t.ID] = true
			}
		}
	}
	return nil
}

// checkPost is the calendar's check of a mapped post
// (calendar.Service.CheckImported), as a field error of the report. It
// runs before anything is written, so the images of a refused event are
// not imported either.
func (r *importRun) checkPost(p *repository.Record) error {
	err := r.cal.CheckImported(p)
	var fe *calendar.FieldError
	if errors.As(err, &fe) {
		return fieldErr(fe.Field, "%s", fe.Problem)
	}
	return err
}

// applyCurrency carries each event's cost as written and its own currency
// from WordPress's meta (the edit context), in place of what the TEC
// form's formatted cost gave (sourceCost): the text keeps what the
// formatting changed (a range's hyphen, words), and a protected event
// the source did not open gets its cost. An event without a symbol of
// its own keeps the site's symbol the source showed with it; one whose
// formatted cost told none (a protected event) gets the site's symbol
// the source showed with the other events. A cost of 0, which the source
// shows as nothing, stays nothing.
func (r *importRun) applyCurrency(meta map[int64]wpCurrency) {
	if len(meta) == 0 {
		return
	}
	var site sourceCurrency
	for _, id := range sortedKeys(r.recs[KindEvent]) {
		rec := r.recs[KindEvent][id]
		if m, ok := meta[id]; ok && m.symbol == "" && rec.post != nil && rec.post.Event != nil && rec.post.Event.CurrencySymbol != "" {
			site = sourceCurrency{rec.post.Event.CurrencySymbol, rec.post.Event.CurrencyPosition}
			break
		}
	}
	for _, id := range sortedKeys(r.recs[KindEvent]) {
		rec := r.recs[KindEvent][id]
		m, ok := meta[id]
		if !ok || rec.post == nil || rec.post.Event == nil {
			continue
		}
		e := rec.post.Event
		cost := plainText(strings.TrimSpace(m.cost))
		if cost == "" || (len(e.Cost) == 0 && zeroCost(cost)) {
			continue
		}
		e.Cost = []string{cost}
		switch sym := strings.TrimSpace(m.symbol); {
		case sym != "" && currency.CheckSymbol(sym) == "" && plainText(sym) == sym:
			e.CurrencySymbol, e.CurrencyPosition = sym, currency.Prefix
			if p := strings.ToLower(strings.TrimSpace(m.position)); p == "postfix" || p == currency.Suffix {
				e.CurrencyPosition = currency.Suffix
			}
		case e.CurrencySymbol == "" && site.symbol != "" && !strings.Contains(cost, site.symbol):
			e.CurrencySymbol, e.CurrencyPosition = site.symbol, site.position
		}
		if code, msg := currency.CheckCode(strings.TrimSpace(m.code)); msg == "" && code != "" {
			e.CurrencyCode = code
		}
	}
}

// zeroCost reports whether a cost is the number 0 alone ("0", "0.00").
func zeroCost(s string) bool {
	f, err := strconv.ParseFloat(strings.ReplaceAll(s, ",", "."), 64)
	return err == nil && f == 0
}
