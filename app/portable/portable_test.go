package portable

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/calendar/eventcal/app/calendar"
	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/config/testdeadline"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/repository/mongo"
	"github.com/calendar/eventcal/repository/mongo/mongotest"
	"github.com/calendar/eventcal/repository/sqlite"
	"github.com/calendar/eventcal/sync/webhooks"
)

// t0 is the seed's clock.
var t0 = time.Date(2026, 11, 20, 9, 30, 0, 123456789, time.UTC)

// newStore opens a new SQLite store in a temporary directory.
func newStore(t *testing.T) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "calendar.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close(context.Background()) })
	return st
}

// loadOpts are the load options over st with the target's languages.
func loadOpts(st repository.Store, langs ...string) LoadOptions {
	cfg := config.Default()
	if len(langs) == 0 {
		langs = []string{"en", "fr", "de"}
	}
	cfg.Languages, cfg.DefaultLanguage = langs, langs[0]
	return LoadOptions{
		Calendar:  calendar.New(calendar.Deps{Config: cfg, Store: st, Logger: slog.New(slog.DiscardHandler)}),
		Labels:    calendar.NewLabels(calendar.LabelsDeps{Store: st}),
		Languages: langs, DefaultLanguage: langs[0], Timezone: cfg.TimezoneName,
	}
}

// must fails the test on err.
func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// event returns an event of status on day (UTC, an hour long).
func event(status, title string, day int) *repository.Record {
	start := time.Date(2027, 3, day, 18, 0, 0, 0, time.UTC)
	return &repository.Record{Kind: repository.KindEvent, Status: status, Author: 2, Date: t0, Modified: t0,
		Title: repository.Text{"en": title}, Slug: repository.Text{"en": repository.Slugify(title)},
		Event: &repository.EventFields{StartLocal: start.Format("2006-01-02 15:04:05"), EndLocal: start.Add(time.Hour).Format("2006-01-02 15:04:05"),
			StartUTC: start, EndUTC: start.Add(time.Hour), Timezone: "UTC", ShowMap: true}}
}

// seed fills st with one of everything a store keeps: users of every
// role and their tokens, a category hierarchy and tags in three
// languages, an image, a venue with geo, an organizer, events in every
// status (a password-protected one, one with a currency and an event
// status), a series with overrides, exclusions and additions and a child,
// records written more than once (revision > 1), an item deleted (its ID
// still counted by the sequence), webhook endpoints with their secrets,
// item states and a pending delivery, a source with a run.
func seed(t *testing.T, st repository.Store) {
	t.Helper()
	ctx := t.Context()
	for i, role := range repository.Roles {
		u := &repository.User{Login: "user-" + string(role), Role: role, Created: t0.Add(time.Duration(i) * time.Minute), Email: string(role) + "@example.org"}
		if role == repository.RoleContributor {
			u.Disabled = true
		}
		must(t, st.CreateUser(ctx, u))
		tok := &repository.Token{Hash: repository.HashToken(fmt.Sprint("secret-", i)), UserID: u.ID, Name: "laptop", Created: t0, LastUsed: t0.Add(time.Hour)}
		if i == 1 {
			tok.Expires = t0.Add(-time.Hour) // an expired token
		}
		must(t, st.CreateToken(ctx, tok))
	}
	root := &repository.Label{Taxonomy: repository.LabelCategory, Name: repository.Text{"en": "Music", "fr": "Musique", "de": "Musik"},
		Slug: repository.Text{"en": "music", "fr": "musique", "de": "musik"}, Description: repository.Text{"en": "<p>All music</p>"}}
	must(t, st.CreateLabel(ctx, root))
	child := &repository.Label{Taxonomy: repository.LabelCategory, Parent: root.ID, Name: repository.Text{"en": "Jazz", "fr": "Jazz"}, Slug: repository.Text{"en": "jazz", "fr": "jazz"}}
	must(t, st.CreateLabel(ctx, child))
	grandchild := &repository.Label{Taxonomy: repository.LabelCategory, Parent: child.ID, Name: repository.Text{"en": "Bebop"}, Slug: repository.Text{"en": "bebop"}}
	must(t, st.CreateLabel(ctx, grandchild))
	// A root created after its child's move: the export must still put
	// parents first.
	late := &repository.Label{Taxonomy: repository.LabelCategory, Name: repository.Text{"en": "Arts"}, Slug: repository.Text{"en": "arts"}}
	must(t, st.CreateLabel(ctx, late))
	_, err := st.UpdateLabel(ctx, root.ID, func(l *repository.Label) error { l.Parent = late.ID; return nil })
	must(t, err)
	tag := &repository.Label{Taxonomy: repository.LabelTag, Name: repository.Text{"en": "free", "fr": "gratuit"}, Slug: repository.Text{"en": "free", "fr": "gratuit"}}
	must(t, st.CreateLabel(ctx, tag))
	gone := &repository.Label{Taxonomy: repository.LabelTag, Name: repository.Text{"en": "gone"}, Slug: repository.Text{"en": "gone"}}
	must(t, st.CreateLabel(ctx, gone))
	must(t, st.DeleteLabel(ctx, gone.ID))

	img := &repository.Record{Kind: repository.KindImage, Status: repository.StatusPublish, Date: t0, Modified: t0, Title: repository.Text{"en": "Poster"},
		Slug: repository.Text{"en": "poster"}, Image: &repository.ImageFields{URL: "https://img.example.org/poster.jpg", Extension: "jpg", Width: 800, Height: 600,
			Sizes: []repository.ImageSize{{Name: "thumbnail", Width: 150, Height: 150, URL: "https://img.example.org/poster-150.jpg"}}}}
	must(t, st.CreateRecord(ctx, img))
	lat, lng := 48.8566, 2.3522
	venue := &repository.Record{Kind: repository.KindVenue, Status: repository.StatusPublish, Date: t0, Modified: t0,
		Title: repository.Text{"en": "Hall", "fr": "Salle"}, Slug: repository.Text{"en": "hall", "fr": "salle"},
		Venue: &repository.VenueFields{Address: "1 rue de Rivoli", City: "Paris", Country: "France", GeoLat: &lat, GeoLng: &lng, ShowMap: true}}
	must(t, st.CreateRecord(ctx, venue))
	org := &repository.Record{Kind: repository.KindOrganizer, Status: repository.StatusPublish, Date: t0, Modified: t0,
		Title: repository.Text{"en": "Org"}, Slug: repository.Text{"en": "org"}, Organizer: &repository.OrganizerFields{Email: "org@example.org"}}
	must(t, st.CreateRecord(ctx, org))
	var events []*repository.Record
	for i, status := range repository.Statuses {
		e := event(status, "Concert "+status, 1+i)
		e.Event.Venues, e.Event.Organizers = []int64{venue.ID}, []int64{org.ID}
		e.Event.Categories, e.Event.Tags = []int64{grandchild.ID}, []int64{tag.ID}
		e.ImageID = img.ID
		e.Title["fr"], e.Content = "Concert "+status+" (fr)", repository.Text{"en": "<p>Come</p>", "de": "<p>Kommt</p>"}
		if status == repository.StatusPublish {
			e.Password = "open sesame"
			e.Event.CurrencyCode, e.Event.CurrencySymbol, e.Event.CurrencyPosition = "EUR", "€", "suffix"
			e.Event.Cost = []string{"10", "15"}
			e.Event.EventStatus, e.Event.EventStatusReason = repository.EventPostponed, "Rain"
		}
		e.Origin = &repository.Origin{Site: "https://wp.example.org/wp-json/tribe/events/v1", ID: int64(100 + i), Modified: t0, Hash: "abc"}
		must(t, st.CreateRecord(ctx, e))
		events = append(events, e)
	}
	// Written again: revision 3.
	for range 2 {
		_, err := st.UpdateRecord(ctx, events[0].ID, func(p *repository.Record) error { p.Title["de"] += "!"; return nil })
		must(t, err)
	}
	series := event(repository.StatusPublish, "Weekly jam", 2)
	series.Event.Timezone = "Europe/Paris"
	series.Event.StartLocal, series.Event.EndLocal = "2027-03-02 19:00:00", "2027-03-02 20:00:00"
	series.Event.StartUTC = time.Date(2027, 3, 2, 18, 0, 0, 0, time.UTC)
	series.Event.EndUTC = series.Event.StartUTC.Add(time.Hour)
	series.Event.Recurrence = &repository.Recurrence{Rules: []string{"FREQ=WEEKLY;COUNT=10"}, Exclusions: []string{"2027-03-09 19:00:00"}, Additions: []string{"2027-03-10 19:00:00"}}
	moved, title := "2027-03-16 20:00:00", repository.Text{"en": "Special jam", "fr": "Jam spéciale"}
	series.Event.Overrides = []repository.OccurrenceOverride{{Key: "20270316T190000", StartLocal: &moved, Title: title, Venues: &[]int64{venue.ID}}}
	must(t, st.CreateRecord(ctx, series))
	kid := event(repository.StatusPublish, "Split jam", 20)
	kid.Event.Parent = series.ID
	must(t, st.CreateRecord(ctx, kid))
	deleted := event(repository.StatusDraft, "Deleted", 25)
	must(t, st.CreateRecord(ctx, deleted))
	must(t, st.DeleteRecord(ctx, deleted.ID))

	hook := &repository.Webhook{URL: "https://hooks.example.org/in", Description: "CRM", Events: []string{"*"},
		Secret: "whsec_c2VjcmV0LXNpZ25pbmcta2V5LTEyMzQ1Njc4OTA=", Active: true, Created: t0, Updated: t0}
	must(t, st.CreateWebhook(ctx, hook))
	off := &repository.Webhook{URL: "https://hooks.example.org/off", Events: []string{"event.created"},
		Secret: "whsec_b3RoZXI=", Active: false, DisabledReason: "failing for a day", Created: t0, Updated: t0, FailingSince: t0}
	must(t, st.CreateWebhook(ctx, off))
	_, err = st.UpdateWebhook(ctx, hook.ID, func(w *repository.Webhook) error { w.Description = "CRM sync"; return nil })
	must(t, err)
	// The states the dispatcher records of every item but images.
	var states []repository.ItemState
	recs, err := st.FindRecords(ctx, repository.RecordQuery{})
	must(t, err)
	for _, rec := range recs {
		if rec.Kind != repository.KindImage {
			states = append(states, repository.ItemState{ItemKey: repository.ItemKey{Kind: repository.MarkPost, ID: rec.ID},
				Resource: string(rec.Kind), Revision: rec.Revision, Status: rec.Status})
		}
	}
	for _, l := range []*repository.Label{late, root, child, grandchild, tag} {
		cur, err := st.GetLabel(ctx, l.ID)
		must(t, err)
		states = append(states, repository.ItemState{ItemKey: repository.ItemKey{Kind: repository.MarkTerm, ID: l.ID}, Resource: string(l.Taxonomy), Revision: cur.Revision})
	}
	pending := &repository.Delivery{ID: "msg_1", WebhookID: hook.ID, Item: "post:" + fmt.Sprint(events[0].ID), Type: "event.updated",
		Payload: []byte(`{"type":"event.updated"}`), Created: t0, Status: repository.DeliveryPending, Attempts: 1, NextAttempt: t0.Add(time.Minute),
		Log: []repository.DeliveryAttempt{{At: t0, Code: 503, DurationMs: 12}}}
	done := &repository.Delivery{ID: "msg_0", WebhookID: hook.ID, Item: "post:1", Type: "event.created", Payload: []byte(`{}`), Created: t0,
		Status: repository.DeliveryDelivered, Attempts: 1}
	must(t, st.RecordChanges(ctx, states, nil, []*repository.Delivery{done, pending}))

	src := &repository.Source{URL: "https://feeds.example.org/cal.ics", Format: repository.SourceICS, Name: "City feed", Schedule: "@daily",
		Status: repository.StatusDraft, Categories: []int64{child.ID}, Tags: []int64{tag.ID}, OnRemoved: repository.OnRemovedTrash, Author: 2,
		ETag: `"v1"`, ContentHash: "h1", Created: t0, Updated: t0}
	must(t, st.CreateSource(ctx, src))
	run := &repository.SourceRun{SourceID: src.ID, Status: repository.RunSucceeded, Trigger: "schedule", Started: t0, Finished: t0.Add(time.Second),
		Created: 1, Problems: []repository.RunProblem{{UID: "x@feed", Problem: "no start"}}}
	must(t, st.CreateSourceRun(ctx, run))
	_, err = st.UpdateSource(ctx, src.ID, func(s *repository.Source) error { s.LastRun = run.ID; return nil })
	must(t, err)
}

// dump returns everything st keeps, as JSON: every record, label, user,
// token, webhook with its secret and revision, pending delivery, source
// with its revision, run, item state of a record or label, and the
// sequences. Two stores with equal dumps hold the same calendar.
func dump(t *testing.T, st repository.Store) string {
	t.Helper()
	ctx := t.Context()
	var d struct {
		Records    []*repository.Record
		Labels     []*repository.Label
		Users      []*repository.User
		Tokens     []*repository.Token
		Webhooks   []Webhook
		Deliveries []Delivery
		Sources    []Source
		Runs       []*repository.SourceRun
		States     []repository.ItemState
		Sequences  map[string]int64
	}
	var err error
	d.Records, err = st.FindRecords(ctx, repository.RecordQuery{})
	must(t, err)
	var keys []repository.ItemKey
	for _, r := range d.Records {
		keys = append(keys, repository.ItemKey{Kind: repository.MarkPost, ID: r.ID})
	}
	for _, tax := range []repository.LabelKind{repository.LabelCategory, repository.LabelTag} {
		ls, err := st.FindLabels(ctx, repository.LabelQuery{Taxonomy: tax})
		must(t, err)
		d.Labels = append(d.Labels, ls...)
		for _, l := range ls {
			keys = append(keys, repository.ItemKey{Kind: repository.MarkTerm, ID: l.ID})
		}
	}
	states, err := st.ItemStates(ctx, keys)
	must(t, err)
	for _, k := range keys {
		if s, ok := states[k]; ok {
			d.States = append(d.States, s)
		}
	}
	d.Users, err = st.ListUsers(ctx)
	must(t, err)
	d.Tokens, err = st.ListTokens(ctx, 0)
	must(t, err)
	hooks, err := st.ListWebhooks(ctx)
	must(t, err)
	for _, h := range hooks {
		d.Webhooks = append(d.Webhooks, Webhook{Webhook: *h, Secret: h.Secret, Revision: h.Revision})
		ds, err := st.ListDeliveries(ctx, h.ID, 1000)
		must(t, err)
		for _, x := range ds {
			if x.Status == repository.DeliveryPending {
				d.Deliveries = append(d.Deliveries, Delivery{Delivery: *x, Payload: x.Payload})
			}
		}
	}
	srcs, err := st.ListSources(ctx)
	must(t, err)
	for _, s := range srcs {
		d.Sources = append(d.Sources, Source{Source: *s, Revision: s.Revision})
		runs, err := st.ListSourceRuns(ctx, s.ID, 0)
		must(t, err)
		d.Runs = append(d.Runs, runs...)
	}
	d.Sequences, err = st.Sequences(ctx)
	must(t, err)
	b, err := json.MarshalIndent(d, "", " ")
	must(t, err)
	return string(b)
}

// export exports st and returns the file's bytes.
func export(t *testing.T, st repository.Store, opts ExportOptions) []byte {
	t.Helper()
	var buf bytes.Buffer
	if opts.Languages == nil {
		opts.Languages, opts.DefaultLanguage, opts.Timezone = []string{"en", "fr", "de"}, "en", "UTC"
	}
	if opts.TempDir == "" {
		opts.TempDir = t.TempDir()
	}
	if _, err := Export(t.Context(), st, &buf, opts); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// load loads file into st.
func load(t *testing.T, st repository.Store, file []byte, langs ...string) (*LoadReport, error) {
	t.Helper()
	return Load(t.Context(), st, bytes.NewReader(file), loadOpts(st, langs...))
}

// withoutCreated is an export with its header's creation time blanked.
func withoutCreated(file []byte) string {
	lines := strings.SplitN(string(file), "\n", 2)
	var h map[string]any
	_ = json.Unmarshal([]byte(lines[0]), &h)
	delete(h, "created")
	b, _ := json.Marshal(h)
	return string(b) + "\n" + lines[1]
}

// TestRoundTrip: a store seeded with one of everything, exported and
// loaded into a new store, gives a store whose dump equals the first's
// (every record with its revision, label, user, token, webhook with its
// secret, pending delivery, source, run, item state, the sequences); its
// export equals the first export; loading the file again changes
// nothing and reports everything unchanged; and the ID of an event
// deleted before the export is not drawn again.
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	src, file := seededExport(t)
	dst := newStore(t)
	rep, err := load(t, dst, file)
	if err != nil {
		t.Fatal(err)
	}
	want := dump(t, src)
	if got := dump(t, dst); got != want {
		t.Fatalf("the loaded store differs from the exported one:\n--- exported\n%s\n--- loaded\n%s", want, got)
	}
	for typ, n := range rep.Types {
		if typ == TypeSequences { // raised: counted replaced
			if n.Replaced != 1 {
				t.Errorf("sequences: %+v, want raised (replaced)", *n)
			}
			continue
		}
		if n.Replaced != 0 || n.Unchanged != 0 || n.Created != rep.Counts[typ] {
			t.Errorf("%s: %+v, want all %d created", typ, *n, rep.Counts[typ])
		}
	}
	if again := export(t, dst, ExportOptions{}); withoutCreated(again) != withoutCreated(file) {
		t.Errorf("the loaded store exports another file:\n%s\n---\n%s", file, again)
	}

	rep, err = load(t, dst, file)
	if err != nil {
		t.Fatal(err)
	}
	for typ, n := range rep.Types {
		if n.Created != 0 || n.Replaced != 0 || n.Unchanged != rep.Counts[typ] {
			t.Errorf("second load: %s: %+v, want all %d unchanged", typ, *n, rep.Counts[typ])
		}
	}
	if got := dump(t, dst); got != want {
		t.Fatalf("the second load changed the store:\n%s", got)
	}

	// The deleted event's ID (the largest record ID handed out) is not
	// drawn again.
	seqs, err := src.Sequences(t.Context())
	must(t, err)
	e := event(repository.StatusDraft, "After the move", 3)
	must(t, dst.CreateRecord(t.Context(), e))
	if e.ID <= seqs[repository.SeqRecords] {
		t.Errorf("a new event after the load drew ID %d; the source had handed out up to %d", e.ID, seqs[repository.SeqRecords])
	}
	if _, err := dst.GetRecord(t.Context(), seqs[repository.SeqRecords]); !errors.Is(err, repository.ErrNotFound) {
		t.Errorf("the deleted event's ID %d: %v, want not found", seqs[repository.SeqRecords], err)
	}
}

// TestLoadReplacesWhatDiffers: a record, a label, a user and a webhook
// changed in the target after a load are put back as the file has them
// by the next load (counted replaced), the rest counted unchanged.
func TestLoadReplacesWhatDiffers(t *testing.T) {
	t.Parallel()
	src, file := seededExport(t)
	dst := newStore(t)
	_, err := load(t, dst, file)
	must(t, err)
	ctx := t.Context()
	recs, err := dst.FindRecords(ctx, repository.RecordQuery{Kind: repository.KindEvent, Limit: 1})
	must(t, err)
	_, err = dst.UpdateRecord(ctx, recs[0].ID, func(p *repository.Record) error { p.Title["en"] = "Changed"; return nil })
	must(t, err)
	cats, err := dst.FindLabels(ctx, repository.LabelQuery{Taxonomy: repository.LabelCategory})
	must(t, err)
	_, err = dst.UpdateLabel(ctx, cats[0].ID, func(l *repository.Label) error { l.Name["fr"] = "Changé"; return nil })
	must(t, err)
	users, err := dst.ListUsers(ctx)
	must(t, err)
	users[0].Role = repository.RoleAdmin
	must(t, dst.UpdateUser(ctx, users[0]))
	hooks, err := dst.ListWebhooks(ctx)
	must(t, err)
	_, err = dst.UpdateWebhook(ctx, hooks[0].ID, func(w *repository.Webhook) error { w.Secret = "whsec_bmV3"; return nil })
	must(t, err)

	rep, err := load(t, dst, file)
	must(t, err)
	for _, typ := range []string{TypeRecord, TypeLabel, TypeUser, TypeWebhook} {
		if n := rep.Types[typ]; n.Replaced != 1 || n.Created != 0 || n.Unchanged != rep.Counts[typ]-1 {
			t.Errorf("%s: %+v, want 1 replaced and %d unchanged", typ, *n, rep.Counts[typ]-1)
		}
	}
	// As the file has them again (revisions aside: a replace is a write).
	got, err := dst.GetRecord(ctx, recs[0].ID)
	must(t, err)
	want, err := src.GetRecord(ctx, recs[0].ID)
	must(t, err)
	if !calendar.SameRecord(got, want) {
		t.Errorf("record %d after the load: %+v, want %+v", got.ID, got, want)
	}
	h, err := dst.GetWebhook(ctx, hooks[0].ID)
	must(t, err)
	if wantHook, _ := src.GetWebhook(ctx, hooks[0].ID); h.Secret != wantHook.Secret {
		t.Errorf("webhook secret %q after the load, want %q", h.Secret, wantHook.Secret)
	}
	rep, err = load(t, dst, file)
	must(t, err)
	for typ, n := range rep.Types {
		if n.Created != 0 || n.Replaced != 0 {
			t.Errorf("third load: %s: %+v, want everything unchanged", typ, *n)
		}
	}
}

// lines splits a file into its lines (without line feeds).
func lines(file []byte) []string {
	return strings.Split(strings.TrimSuffix(string(file), "\n"), "\n")
}

// join makes a file of lines.
func join(ls []string) []byte { return []byte(strings.Join(ls, "\n") + "\n") }

// replaceLine returns file with the first line of type typ (and
// containing has) replaced by edit's result.
func replaceLine(t *testing.T, file []byte, typ, has string, edit func(string) string) []byte {
	t.Helper()
	ls := lines(file)
	for i, l := range ls {
		if strings.HasPrefix(l, `{"type":"`+typ+`"`) && strings.Contains(l, has) {
			ls[i] = edit(l)
			return join(ls)
		}
	}
	t.Fatalf("no %s line with %q", typ, has)
	return nil
}

// TestLoadRefuses: a file that is cut short, has a bad line near its
// end, a newer version, texts in a language the target lacks, a link to
// an item neither in it nor in the target, an ID the target holds as
// another kind, an unknown type or field, or a trailer that does not
// match, is refused with what is wrong, and nothing is written (the
// target's dump is unchanged).
func TestLoadRefuses(t *testing.T) {
	t.Parallel()
	_, file := seededExport(t)
	ls := lines(file)
	last := len(ls) - 1
	tests := []struct {
		name  string
		file  func() []byte
		langs []string
		// target, when set, prepares the target store.
		target func(t *testing.T, st repository.Store)
		err    error
		says   string
	}{
		{"cut short mid-line", func() []byte { return file[:len(file)-10] }, nil, nil, ErrTruncated, "no line feed"},
		{"cut short at a line's end", func() []byte { return join(ls[:last]) }, nil, nil, ErrTruncated, "ends before its trailer"},
		{"a bad line near the end", func() []byte {
			c := slices.Clone(ls)
			c[last-1] = c[last-1][:len(c[last-1])/2]
			return join(c)
		}, nil, nil, nil, fmt.Sprintf("line %d: not a JSON object", last)},
		{"a newer version", func() []byte {
			c := slices.Clone(ls)
			c[0] = strings.Replace(c[0], `"version":1`, `"version":2`, 1)
			return join(c)
		}, nil, nil, ErrNewerVersion, "the file is version 2, this eventcal reads up to version 1"},
		{"not an export", func() []byte { return []byte("id,title\n1,x\n") }, nil, nil, ErrNotExport, "line 1 is not a header"},
		{"a language the target lacks", func() []byte { return file }, []string{"en", "fr"}, nil, ErrRefused,
			"the file has texts in de (first on line"},
		{"a dangling venue", func() []byte {
			return replaceLine(t, file, TypeRecord, `"title":{"en":"Concert draft"`, func(l string) string {
				return strings.Replace(l, `"venues":[`, `"venues":[987654,`, 1)
			})
		}, nil, nil, ErrRefused, "event 6's venue is 987654, which is neither in the file nor in this store (a venue)"},
		{"a venue that is an organizer", func() []byte {
			return replaceLine(t, file, TypeRecord, `"kind":"organizer"`, func(l string) string { return l })
		}, nil, func(t *testing.T, st repository.Store) {
			// The target holds the file's organizer ID as a venue.
			var org repository.Record
			_, body, err := envelope([]byte(lineOf(t, file, TypeRecord, `"kind":"organizer"`)))
			must(t, err)
			must(t, json.Unmarshal(body, &org))
			must(t, st.CreateRecord(t.Context(), &repository.Record{ID: org.ID, Kind: repository.KindVenue, Status: repository.StatusPublish,
				Title: repository.Text{"en": "Other"}, Venue: &repository.VenueFields{}}))
		}, ErrRefused, "is a organizer in the file and a venue in this store"},
		{"a user whose login the target gives another ID", func() []byte { return file }, nil, func(t *testing.T, st repository.Store) {
			must(t, st.CreateUser(t.Context(), &repository.User{ID: 99, Login: "user-admin", Role: repository.RoleAdmin, Created: t0}))
		}, ErrRefused, `login "user-admin" is user 4 in the file and user 99 in this store`},
		{"an unknown type", func() []byte {
			c := slices.Clone(ls)
			c = slices.Insert(c, 2, `{"type":"comment","comment":{}}`)
			return join(c)
		}, nil, nil, nil, `line 3: unknown type "comment"`},
		{"an unknown field", func() []byte {
			return replaceLine(t, file, TypeUser, `"login":"user-author"`, func(l string) string {
				return strings.Replace(l, `"login":`, `"password":"x","login":`, 1)
			})
		}, nil, nil, nil, `unknown field "password"`},
		{"a trailer that does not match", func() []byte {
			c := slices.Clone(ls)
			c[last] = strings.Replace(c[last], `"user":4`, `"user":5`, 1)
			return join(c)
		}, nil, nil, nil, "the trailer counts"},
		{"a line after the trailer", func() []byte { return append(slices.Clone(file), []byte(ls[2]+"\n")...) }, nil, nil, nil, "a line after the trailer"},
		{"lines out of order", func() []byte {
			c := slices.Clone(ls)
			c[1], c[2] = c[2], c[1]
			return join(c)
		}, nil, nil, nil, "the sequences line must come first"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dst := newStore(t)
			must(t, dst.CreateUser(t.Context(), &repository.User{Login: "someone", Role: repository.RoleEditor, Created: t0}))
			if tt.target != nil {
				tt.target(t, dst)
			}
			before := dump(t, dst)
			_, err := load(t, dst, tt.file(), tt.langs...)
			if err == nil {
				t.Fatal("loaded")
			}
			if tt.err != nil && !errors.Is(err, tt.err) {
				t.Errorf("error %v, want %v", err, tt.err)
			}
			if !strings.Contains(err.Error(), tt.says) {
				t.Errorf("error %q does not say %q", err, tt.says)
			}
			if after := dump(t, dst); after != before {
				t.Errorf("a refused load wrote:\n%s", after)
			}
		})
	}
}

// lineOf returns the first line of type typ containing has.
func lineOf(t *testing.T, file []byte, typ, has string) string {
	t.Helper()
	for _, l := range lines(file) {
		if strings.HasPrefix(l, `{"type":"`+typ+`"`) && strings.Contains(l, has) {
			return l
		}
	}
	t.Fatalf("no %s line with %q", typ, has)
	return ""
}

// TestExportIsOnePointInTime: while a writer creates events one after
// the other, each followed by a write of a counter venue's title, and is
// let write between the export's types (after the sequences, the
// records' first kinds, ...), the export is the store at one point in
// time: the records sequence is the largest record ID in the file, the
// events are exactly those created up to it, and the counter venue's
// title counts them.
func TestExportIsOnePointInTime(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	ctx := t.Context()
	counter := &repository.Record{Kind: repository.KindVenue, Status: repository.StatusPublish, Title: repository.Text{"en": "0"}, Venue: &repository.VenueFields{}}
	must(t, st.CreateRecord(ctx, counter))
	var (
		written atomic.Int64
		stop    atomic.Bool
		failed  atomic.Bool // werr is set (read werr after wg.Wait)
		wg      sync.WaitGroup
		werr    error
	)
	wg.Go(func() {
		for i := 1; !stop.Load(); i++ {
			if err := st.CreateRecord(ctx, event(repository.StatusPublish, fmt.Sprint("e", i), 1+i%27)); err != nil {
				werr = err
				failed.Store(true)
				return
			}
			if _, err := st.UpdateRecord(ctx, counter.ID, func(p *repository.Record) error { p.Title["en"] = fmt.Sprint(i); return nil }); err != nil {
				werr = err
				failed.Store(true)
				return
			}
			written.Add(1)
		}
	})
	deadline := testdeadline.Of(t)
	// waitWrites lets the writer make two more writes.
	waitWrites := func(string) {
		n := written.Load()
		for written.Load() < n+2 && !failed.Load() {
			if time.Now().After(deadline) {
				return
			}
			time.Sleep(time.Millisecond) // polling the writer's progress
		}
	}
	waitWrites("")
	file := export(t, st, ExportOptions{afterType: waitWrites, pageSize: 3})
	stop.Store(true)
	wg.Wait()
	if werr != nil {
		t.Fatal(werr)
	}
	var seq, maxID, events int64
	counted := ""
	for _, l := range lines(file)[1:] {
		typ, body, err := envelope([]byte(l))
		must(t, err)
		switch typ {
		case TypeSequences:
			var s map[string]int64
			must(t, json.Unmarshal(body, &s))
			seq = s[repository.SeqRecords]
		case TypeRecord:
			var r repository.Record
			must(t, json.Unmarshal(body, &r))
			maxID = max(maxID, r.ID)
			if r.ID == counter.ID {
				counted = r.Title["en"]
			} else {
				events++
			}
		}
	}
	if seq != maxID {
		t.Errorf("the records sequence is %d, the largest record ID in the file %d", seq, maxID)
	}
	if counted != fmt.Sprint(events) && counted != fmt.Sprint(events-1) {
		t.Errorf("the counter venue says %s events, the file holds %d", counted, events)
	}
	if events < 2 {
		t.Errorf("only %d events in the export", events)
	}
	if total := written.Load(); total <= events {
		t.Errorf("the writer wrote %d events, %d of them in the export: none while it ran", total, events)
	}
}

// TestExportLeavesNoSnapshot: the embedded store's snapshot is removed
// after the export.
func TestExportLeavesNoSnapshot(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	seed(t, st)
	dir := t.TempDir()
	export(t, st, ExportOptions{TempDir: dir})
	if des, err := os.ReadDir(dir); err != nil || len(des) != 0 {
		t.Errorf("left in the snapshot's directory: %v %v", des, err)
	}
}

// noRender fails the test on any render: a load must not make the
// webhook dispatcher report anything.
type noRender struct{ t *testing.T }

func (r noRender) RenderRecord(_ context.Context, p *repository.Record) (json.RawMessage, error) {
	r.t.Errorf("the dispatcher reports record %d", p.ID)
	return json.RawMessage(`{}`), nil
}

func (r noRender) RenderLabel(_ context.Context, l *repository.Label) (json.RawMessage, error) {
	r.t.Errorf("the dispatcher reports label %d", l.ID)
	return json.RawMessage(`{}`), nil
}

// TestLoadSendsNoWebhookMessages: the webhook dispatcher observing the
// index marks a load recorded (as the sync worker does) finds every
// loaded item as its endpoints last heard of it (the item states came
// with it) and queues nothing beyond the pending delivery the file
// carried.
func TestLoadSendsNoWebhookMessages(t *testing.T) {
	t.Parallel()
	_, file := seededExport(t)
	dst := newStore(t)
	_, err := load(t, dst, file)
	must(t, err)
	ctx := t.Context()
	marks, err := dst.PendingMarks(ctx, 1000)
	must(t, err)
	if len(marks) == 0 {
		t.Fatal("the load recorded no index marks")
	}
	d := &webhooks.Dispatcher{Store: dst, Render: noRender{t}, Log: slog.New(slog.DiscardHandler)}
	must(t, d.Observe(ctx, marks))
	n, _, err := dst.DeliveryQueue(ctx)
	must(t, err)
	if n != 1 {
		t.Errorf("%d deliveries pending after the dispatcher observed the load, want the 1 the file carried", n)
	}
}

// TestRoundTripThroughMongo: the embedded store exported, loaded into
// MongoDB, exported from there and loaded into a new embedded store:
// the MongoDB store and the last one hold what the first held (equal
// dumps), and the three exports are the same but for their headers.
func TestRoundTripThroughMongo(t *testing.T) {
	t.Parallel()
	uri := mongotest.Start(t)
	first := newStore(t)
	seed(t, first)
	file := export(t, first, ExportOptions{})
	m, err := mongo.Open(t.Context(), uri, mongotest.Database(t))
	must(t, err)
	t.Cleanup(func() { m.Close(context.Background()) })
	_, err = load(t, m, file)
	must(t, err)
	// MongoDB keeps times to the millisecond or the second: compare
	// them to the second.
	toSec := regexp.MustCompile(`(T\d\d:\d\d:\d\d)\.\d+Z`)
	dumpSec := func(st repository.Store) string { return toSec.ReplaceAllString(dump(t, st), "${1}Z") }
	want := dumpSec(first)
	if got := dumpSec(m); got != want {
		t.Fatalf("MongoDB holds another calendar:\n--- embedded\n%s\n--- MongoDB\n%s", want, got)
	}
	fromMongo := export(t, m, ExportOptions{})
	if !strings.Contains(lines(fromMongo)[0], `"store":"mongodb"`) {
		t.Errorf("header %s", lines(fromMongo)[0])
	}
	body := func(f []byte) string { return toSec.ReplaceAllString(strings.Join(lines(f)[1:], "\n"), "${1}Z") }
	if body(fromMongo) != body(file) {
		t.Errorf("MongoDB's export differs:\n%s\n---\n%s", file, fromMongo)
	}
	third := newStore(t)
	_, err = load(t, third, fromMongo)
	must(t, err)
	if got := dumpSec(third); got != want {
		t.Fatalf("the third store holds another calendar:\n%s", got)
	}
	// The first file again (its times to the nanosecond, MongoDB's not):
	// nothing changes.
	rep, err := load(t, m, file)
	must(t, err)
	for typ, n := range rep.Types {
		if n.Created != 0 || n.Replaced != 0 {
			t.Errorf("a second load into MongoDB: %s %+v", typ, *n)
		}
	}
}

// changingFile is a file whose size changes between Stat calls.
type changingFile struct {
	*bytes.Reader
	stats int
}

func (f *changingFile) Stat() (os.FileInfo, error) {
	f.stats++
	return fakeInfo{size: int64(f.Len() + f.stats)}, nil
}

type fakeInfo struct {
	os.FileInfo
	size int64
}

func (i fakeInfo) Size() int64        { return i.size }
func (i fakeInfo) ModTime() time.Time { return t0 }

// TestLoadRefusesAFileThatChanges: a file whose size changed while pass
// 1 checked it is refused and nothing is written.
func TestLoadRefusesAFileThatChanges(t *testing.T) {
	t.Parallel()
	_, file := seededExport(t)
	dst := newStore(t)
	before := dump(t, dst)
	_, err := Load(t.Context(), dst, &changingFile{Reader: bytes.NewReader(file)}, loadOpts(dst))
	if err == nil || !strings.Contains(err.Error(), "the file changed while it was checked") {
		t.Fatalf("error %v", err)
	}
	if after := dump(t, dst); after != before {
		t.Errorf("a refused load wrote:\n%s", after)
	}
}

// TestLoadEdges: an empty store's export loads into an empty store (and
// changes nothing the second time); a load into a service of another
// TIMEZONE or DEFAULT_LANGUAGE notes the difference; a category whose
// parent comes after it in the file is refused unless the target holds
// the parent.
func TestLoadEdges(t *testing.T) {
	t.Parallel()
	t.Run("empty", func(t *testing.T) {
		t.Parallel()
		file := export(t, newStore(t), ExportOptions{})
		dst := newStore(t)
		for range 2 {
			rep, err := load(t, dst, file)
			must(t, err)
			for typ, n := range rep.Types {
				if n.Created != 0 || n.Replaced != 0 || n.Unchanged != rep.Counts[typ] {
					t.Errorf("%s: %+v", typ, *n)
				}
			}
		}
	})
	t.Run("notes", func(t *testing.T) {
		t.Parallel()
		file := export(t, newStore(t), ExportOptions{Languages: []string{"fr", "en"}, DefaultLanguage: "fr", Timezone: "Europe/Paris"})
		dst := newStore(t)
		rep, err := load(t, dst, file)
		must(t, err)
		notes := strings.Join(rep.Notes, "\n")
		for _, want := range []string{"TIMEZONE Europe/Paris, this service has UTC", "DEFAULT_LANGUAGE fr, this service has en"} {
			if !strings.Contains(notes, want) {
				t.Errorf("notes %q do not say %q", notes, want)
			}
		}
	})
	t.Run("parent after its child", func(t *testing.T) {
		t.Parallel()
		_, file := seededExport(t)
		// Move the first category (the root, Arts, ID 4) after its
		// children.
		ls := lines(file)
		first := slices.IndexFunc(ls, func(l string) bool { return strings.HasPrefix(l, `{"type":"label"`) })
		root := ls[first]
		ls = slices.Delete(ls, first, first+1)
		last := slices.IndexFunc(ls, func(l string) bool { return strings.Contains(l, `"taxonomy":"tag"`) })
		ls = slices.Insert(ls, last, root)
		dst := newStore(t)
		before := dump(t, dst)
		_, err := load(t, dst, join(ls))
		if err == nil || !strings.Contains(err.Error(), "category 1's parent (not before it in the file) is 4, which is not in this store") {
			t.Fatalf("error %v", err)
		}
		if after := dump(t, dst); after != before {
			t.Errorf("a refused load wrote:\n%s", after)
		}
	})
}

// seededExport returns a new store seeded with every kind of item (seed)
// and its export.
func seededExport(t *testing.T) (*sqlite.Store, []byte) {
	t.Helper()
	src := newStore(t)
	seed(t, src)
	return src, export(t, src, ExportOptions{})
}
