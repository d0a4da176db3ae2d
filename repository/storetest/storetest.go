// Package storetest is the conformance suite that every repository.Store
// engine must pass. An engine's test calls Run with a constructor for fresh,
// empty stores:
//
//	func TestStore(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) repository.Store {
//			s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "db"))
//			if err != nil {
//				t.Fatal(err)
//			}
//			t.Cleanup(func() { s.Close(context.Background()) })
//			return s
//		})
//	}
//
// Every subtest asks for its own store, so subtests never see each other's
// data. The suite is engine-neutral: it compares times truncated to the second
// (MongoDB keeps milliseconds), treats nil and empty slices and texts as
// equal, never sleeps, and makes no assumption about timing beyond "a call has
// returned". The "Close" subtest closes its store itself, so the constructor's
// cleanup must tolerate a store that is already closed.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/calendar/eventcal/repository"
)

// storeTest is one subtest of the suite.
type storeTest struct {
	name string
	run  func(t *testing.T, ctx context.Context, s repository.Store)
}

// Options tunes the suite for an engine. The zero value runs it in full.
type Options struct {
	// Workers is the number of goroutines writing at once in the
	// concurrency tests (default DefaultWorkers; at least 2, and even).
	Workers int
	// PerWorker is the number of posts each goroutine creates in the
	// PostIDs concurrency test (default DefaultPerWorker).
	PerWorker int
	// ExplicitRun is the number of consecutive explicit IDs the
	// ExplicitIDs sequence tests create (default DefaultExplicitRun). It
	// must exceed the draws the engine makes for one new ID before it
	// gives up: an engine whose test lowers that bound may run fewer.
	ExplicitRun int
}

// Run runs the conformance suite in full. newStore must return a fresh,
// empty store each time it is called; it is called once per subtest and
// should register its own cleanup (t.Cleanup) to close the store and
// remove its data.
func Run(t *testing.T, newStore func(t *testing.T) repository.Store) {
	RunWith(t, Options{}, newStore)
}

// RunWith runs the conformance suite at the scale opts sets: an engine
// emulated in the test process (FerretDB) runs the concurrency tests with
// fewer writers than a real server, which the same tests run in full.
func RunWith(t *testing.T, opts Options, newStore func(t *testing.T) repository.Store) {
	conc := concurrency{workers: DefaultWorkers, perWorker: DefaultPerWorker}
	if opts.Workers > 0 {
		conc.workers = max(2, opts.Workers+opts.Workers%2)
	}
	if opts.PerWorker > 0 {
		conc.perWorker = opts.PerWorker
	}
	explicitRun := DefaultExplicitRun
	if opts.ExplicitRun > 0 {
		explicitRun = opts.ExplicitRun
	}
	groups := []struct {
		name  string
		tests []storeTest
	}{
		{"Posts", postTests},
		{"Slugs", slugTests},
		{"Update", updateTests},
		{"Delete", deleteTests},
		{"FindPosts", queryTests},
		{"UnlinkPost", unlinkTests},
		{"Terms", termTests},
		{"Users", userTests},
		{"Marks", markTests},
		{"Concurrency", conc.tests()},
		{"Lifecycle", lifecycleTests},
		{"Webhooks", webhookTests},
		{"EventLinks", eventLinksTests},
		{"AccountDocuments", accountDocumentTests},
		{"Accounts", accountTests},
		{"Exclusive", exclusiveTests},
		{"ExplicitIDs", explicitIDTests(explicitRun)},
		{"Recurrence", recurrenceTests},
		{"JobState", jobStateTests},
		{"RecordSize", recordSizeTests},
		{"Sources", sourceTests},
		{"Portable", portableTests},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			for _, tc := range g.tests {
				t.Run(tc.name, func(t *testing.T) {
					ctx := testContext(t)
					tc.run(t, ctx, newStore(t))
				})
			}
		})
	}
}

// testContext returns the context of a subtest: it ends with the test.
// There is no time budget of the suite's own (a busy machine may be slow);
// a store that hangs is stopped by go test's -timeout.
func testContext(t *testing.T) context.Context {
	t.Helper()
	return t.Context()
}

// baseTime has sub-second digits on purpose: engines may drop them (the suite
// compares truncated to the second) but must keep everything else.
var baseTime = time.Date(2031, time.March, 14, 18, 30, 5, 123456789, time.UTC)

func ptr[T any](v T) *T { return &v }

// eventFixture returns an event with every field set. Callers override what
// they need.
func eventFixture(title string) *repository.Record {
	start := baseTime.Add(48 * time.Hour)
	return &repository.Record{
		Kind:     repository.KindEvent,
		Author:   7,
		Status:   repository.StatusPublish,
		Password: "s3cret",
		Date:     baseTime,
		Modified: baseTime.Add(90 * time.Minute),
		Title:    repository.Text{"en": title, "nl": title + " (nl)"},
		Content:  repository.Text{"en": "<p>About " + title + "</p>", "nl": "<p>Over " + title + "</p>"},
		Excerpt:  repository.Text{"en": "Short " + title},
		Slug:     repository.Text{"en": repository.Slugify(title), "nl": repository.Slugify(title + " nl")},
		ImageID:  0,
		Event: &repository.EventFields{
			Timezone:          "Europe/Amsterdam",
			AllDay:            true,
			StartLocal:        "2031-03-16 19:30:05",
			EndLocal:          "2031-03-16 23:00:00",
			StartUTC:          start,
			EndUTC:            start.Add(3*time.Hour + 30*time.Minute),
			Cost:              []string{"10", "25,50"},
			CurrencySymbol:    "€",
			CurrencyCode:      "EUR",
			CurrencyPosition:  "suffix",
			Website:           ptr("https://example.org/" + repository.Slugify(title)),
			ShowMap:           true,
			ShowMapLink:       true,
			HideFromListings:  true,
			Sticky:            true,
			Featured:          true,
			Ticketed:          true,
			EventStatus:       repository.EventPostponed,
			EventStatusReason: "The band is ill «é»",
			Categories:        []int64{},
			Tags:              []int64{},
			Venues:            []int64{},
			Organizers:        []int64{},
		},
	}
}

// minimalEvent returns an event with only what an event needs: zero flags,
// no optional values, so that "unset" round-trips too.
func minimalEvent(slug string) *repository.Record {
	return &repository.Record{
		Kind:   repository.KindEvent,
		Status: repository.StatusDraft,
		Date:   baseTime,
		Title:  repository.Text{"en": slug},
		Slug:   repository.Text{"en": slug},
		Event: &repository.EventFields{
			StartLocal: "2031-03-16 00:00:00",
			EndLocal:   "2031-03-16 23:59:59",
			StartUTC:   time.Date(2031, 3, 16, 0, 0, 0, 0, time.UTC),
			EndUTC:     time.Date(2031, 3, 16, 23, 59, 59, 0, time.UTC),
		},
	}
}

func venueFixture(name string) *repository.Record {
	return &repository.Record{
		Kind:     repository.KindVenue,
		Author:   2,
		Status:   repository.StatusPublish,
		Date:     baseTime,
		Modified: baseTime,
		Title:    repository.Text{"en": name, "fr": name + " (fr)"},
		Content:  repository.Text{"en": "Venue " + name},
		Slug:     repository.Text{"en": repository.Slugify(name), "fr": repository.Slugify(name + " fr")},
		ImageID:  0,
		Venue: &repository.VenueFields{
			Address:       "Main Street 1",
			City:          "Amsterdam",
			Country:       "Netherlands",
			Province:      "Noord-Holland",
			State:         "NH",
			StateProvince: "Noord-Holland",
			Zip:           "1011 AB",
			Phone:         "+31 20 123 4567",
			Website:       "https://venue.example/" + repository.Slugify(name),
			ShowMap:       true,
			ShowMapLink:   false,
			GeoLat:        ptr(52.370216),
			GeoLng:        ptr(-4.895168),
		},
	}
}

func organizerFixture(name string) *repository.Record {
	return &repository.Record{
		Kind:     repository.KindOrganizer,
		Author:   3,
		Status:   repository.StatusPublish,
		Date:     baseTime,
		Modified: baseTime,
		Title:    repository.Text{"en": name},
		Excerpt:  repository.Text{"de": "Veranstalter " + name},
		Slug:     repository.Text{"en": repository.Slugify(name)},
		Organizer: &repository.OrganizerFields{
			Phone:   "+49 30 1234",
			Website: "https://org.example/" + repository.Slugify(name),
			Email:   repository.Slugify(name) + "@org.example",
		},
	}
}

func imageFixture(url string) *repository.Record {
	return &repository.Record{
		Kind:     repository.KindImage,
		Author:   1,
		Status:   repository.StatusPublish,
		Date:     baseTime,
		Modified: baseTime,
		Title:    repository.Text{"en": "Image"},
		Slug:     repository.Text{"en": "image"},
		Image: &repository.ImageFields{URL: url, Extension: "jpg", Width: 1200, Height: 800, Filesize: 245760,
			Sizes: []repository.ImageSize{{Name: "thumbnail", Width: 150, Height: 150, MimeType: "image/jpeg", URL: url + "-150x150"}}},
	}
}

func termFixture(tax repository.LabelKind, name string, parent int64) *repository.Label {
	return &repository.Label{
		Taxonomy:    tax,
		Name:        repository.Text{"en": name},
		Description: repository.Text{"en": "About " + name},
		Slug:        repository.Text{"en": repository.Slugify(name)},
		Parent:      parent,
	}
}

// mustCreatePost creates p or fails the test.
func mustCreatePost(t *testing.T, ctx context.Context, s repository.Store, p *repository.Record) *repository.Record {
	t.Helper()
	if err := s.CreateRecord(ctx, p); err != nil {
		t.Fatalf("CreatePost(%s %v): %v", p.Kind, p.Title, err)
	}
	if p.ID <= 0 {
		t.Fatalf("CreatePost(%s %v) assigned ID %d, want > 0", p.Kind, p.Title, p.ID)
	}
	return p
}

func mustCreateTerm(t *testing.T, ctx context.Context, s repository.Store, term *repository.Label) *repository.Label {
	t.Helper()
	if err := s.CreateLabel(ctx, term); err != nil {
		t.Fatalf("CreateTerm(%s %v): %v", term.Taxonomy, term.Name, err)
	}
	if term.ID <= 0 {
		t.Fatalf("CreateTerm(%s %v) assigned ID %d, want > 0", term.Taxonomy, term.Name, term.ID)
	}
	return term
}

// must returns v, failing the test with the call (fmt.Sprintf(call,
// args...)) and err when err is not nil.
func must[T any](t *testing.T, v T, err error, call string, args ...any) T {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", fmt.Sprintf(call, args...), err)
	}
	return v
}

// mustGetPost returns the record or fails the test.
func mustGetPost(t *testing.T, ctx context.Context, s repository.Store, id int64) *repository.Record {
	t.Helper()
	p, err := s.GetRecord(ctx, id)
	return must(t, p, err, "GetPost(%d)", id)
}

// mustGetTerm returns the label or fails the test.
func mustGetTerm(t *testing.T, ctx context.Context, s repository.Store, id int64) *repository.Label {
	t.Helper()
	term, err := s.GetLabel(ctx, id)
	return must(t, term, err, "GetTerm(%d)", id)
}

// mustUpdatePost updates the record with fn or fails the test.
func mustUpdatePost(t *testing.T, ctx context.Context, s repository.Store, id int64, fn func(p *repository.Record)) *repository.Record {
	t.Helper()
	p, err := s.UpdateRecord(ctx, id, func(p *repository.Record) error { fn(p); return nil })
	return must(t, p, err, "UpdatePost(%d)", id)
}

// mustUpdateTerm updates the label with fn or fails the test.
func mustUpdateTerm(t *testing.T, ctx context.Context, s repository.Store, id int64, fn func(term *repository.Label)) *repository.Label {
	t.Helper()
	term, err := s.UpdateLabel(ctx, id, func(term *repository.Label) error { fn(term); return nil })
	return must(t, term, err, "UpdateTerm(%d)", id)
}

// wantNotFound fails unless err is repository.ErrNotFound.
func wantNotFound(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, repository.ErrNotFound) {
		t.Errorf("%s: error %v, want ErrNotFound", what, err)
	}
}

func errorsIsDuplicate(err error) bool { return errors.Is(err, repository.ErrDuplicate) }

// normTime drops what engines may legitimately lose: sub-second digits, the
// location and the monotonic reading.
func normTime(tm time.Time) time.Time { return tm.Truncate(time.Second).UTC() }

func normText(tx repository.Text) repository.Text {
	if len(tx) == 0 {
		return nil
	}
	return tx.Clone()
}

func normIDs(ids []int64) []int64 {
	if ids == nil {
		return []int64{}
	}
	return slices.Clone(ids)
}

func normStrings(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return slices.Clone(s)
}

// normPost returns a copy of p in the comparable form described in the
// package documentation.
func normPost(p *repository.Record) *repository.Record {
	if p == nil {
		return nil
	}
	c := *p
	c.Date, c.Modified = normTime(p.Date), normTime(p.Modified)
	c.Title, c.Content, c.Excerpt, c.Slug = normText(p.Title), normText(p.Content), normText(p.Excerpt), normText(p.Slug)
	c.Origin = normOrigin(p.Origin)
	if p.Event != nil {
		e := *p.Event
		e.StartUTC, e.EndUTC = normTime(e.StartUTC), normTime(e.EndUTC)
		e.Cost = normStrings(e.Cost)
		e.Categories, e.Tags = normIDs(e.Categories), normIDs(e.Tags)
		e.Venues, e.Organizers = normIDs(e.Venues), normIDs(e.Organizers)
		c.Event = &e
	}
	if p.Venue != nil {
		v := *p.Venue
		c.Venue = &v
	}
	if p.Organizer != nil {
		o := *p.Organizer
		c.Organizer = &o
	}
	if p.Image != nil {
		i := *p.Image
		c.Image = &i
	}
	return &c
}

func normOrigin(o *repository.Origin) *repository.Origin {
	if o == nil {
		return nil
	}
	c := *o
	c.Modified = normTime(o.Modified)
	return &c
}

func normTerm(term *repository.Label) *repository.Label {
	if term == nil {
		return nil
	}
	c := *term
	c.Name, c.Description, c.Slug = normText(term.Name), normText(term.Description), normText(term.Slug)
	c.Origin = normOrigin(term.Origin)
	return &c
}

func dump(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%#v", v)
	}
	return string(b)
}

// checkPost reports every difference between the post the test expects and
// the one the store returned.
func checkPost(t *testing.T, what string, want, got *repository.Record) {
	t.Helper()
	w, g := normPost(want), normPost(got)
	if !reflect.DeepEqual(w, g) {
		t.Errorf("%s: post differs\nwant %s\ngot  %s", what, dump(w), dump(g))
	}
}

func checkTerm(t *testing.T, what string, want, got *repository.Label) {
	t.Helper()
	w, g := normTerm(want), normTerm(got)
	if !reflect.DeepEqual(w, g) {
		t.Errorf("%s: term differs\nwant %s\ngot  %s", what, dump(w), dump(g))
	}
}

func checkUser(t *testing.T, what string, want, got *repository.User) {
	t.Helper()
	w, g := *want, *got
	w.Created, g.Created = normTime(w.Created), normTime(g.Created)
	if dump(w) != dump(g) {
		t.Errorf("%s: user differs\nwant %s\ngot  %s", what, dump(w), dump(g))
	}
}

func postIDs(ps []*repository.Record) []int64 {
	ids := make([]int64, len(ps))
	for i, p := range ps {
		ids[i] = p.ID
	}
	return ids
}

func termIDs(ts []*repository.Label) []int64 {
	ids := make([]int64, len(ts))
	for i, term := range ts {
		ids[i] = term.ID
	}
	return ids
}

func sortedIDs(ids []int64) []int64 {
	c := slices.Clone(ids)
	slices.Sort(c)
	return c
}

// checkIDs fails unless got holds exactly want, in this order.
func checkIDs(t *testing.T, what string, want, got []int64) {
	t.Helper()
	if len(want) == 0 && len(got) == 0 {
		return
	}
	if !slices.Equal(want, got) {
		t.Errorf("%s: IDs %v, want %v", what, got, want)
	}
}

// checkDistinct fails when ids holds a value twice or a value <= 0.
func checkDistinct[T comparable](t *testing.T, what string, vals []T, zero T) {
	t.Helper()
	seen := make(map[T]int, len(vals))
	for i, v := range vals {
		if v == zero {
			t.Errorf("%s: value #%d is the zero value", what, i)
		}
		if j, dup := seen[v]; dup {
			t.Errorf("%s: value %v at #%d and #%d", what, v, j, i)
		}
		seen[v] = i
	}
}

// asciiEqualFold compares ignoring ASCII case only, as the contract's
// case-insensitive title and name filters require at least.
func asciiEqualFold(a, b string) bool {
	return asciiLower(a) == asciiLower(b)
}

func asciiLower(s string) string {
	return strings.Map(func(r rune) rune {
		if 'A' <= r && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, s)
}
