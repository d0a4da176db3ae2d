package wpimport_test

import (
	"bytes"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/calendar/eventcal/app/wpimport"
	"github.com/calendar/eventcal/app/wpimport/replay"
	"github.com/calendar/eventcal/repository"
)

// adminOptions are siteOptions with an administrator's credentials and
// the run's log in logs.
func adminOptions(src *replay.SiteServer, logs *bytes.Buffer) wpimport.Options {
	opts := siteOptions(src)
	opts.User, opts.AppPassword = "fx-admin", "abcd EFGH 1234 ijkl MNOP 5678"
	opts.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	return opts
}

// protectedSite is a site with a listed password-protected event (with a
// category, a tag, a venue and an organizer), a hidden protected one, a
// hidden event that has ended, and a plain one.
func protectedSite() *replay.Site {
	cat, tag := replay.Term(801, "Concerts", "concerts"), replay.Term(802, "Jazz", "jazz")
	cat["taxonomy"] = "tribe_events_cat"
	venue, org := replay.Venue(803, "Paradiso"), replay.Organizer(804, "Mojo")
	listed := replay.Event(811, "Members' night")
	listed["description"], listed["excerpt"] = "<p>Secret line-up.</p>", "Members only"
	listed["categories"], listed["tags"] = []any{cat}, []any{tag}
	listed["venue"], listed["organizer"] = venue, []any{org}
	hiddenProtected := replay.Event(812, "Hidden members' night")
	hiddenProtected["hide_from_listings"] = true
	hiddenProtected["description"] = "<p>Hidden and protected.</p>"
	hiddenPast := replay.Event(813, "Hidden past night")
	hiddenPast["hide_from_listings"] = true
	for _, k := range []string{"start_date", "utc_start_date"} {
		hiddenPast[k] = "2025-03-01 19:00:00"
	}
	for _, k := range []string{"end_date", "utc_end_date"} {
		hiddenPast[k] = "2025-03-01 22:00:00"
	}
	return &replay.Site{
		Categories: []map[string]any{cat}, Tags: []map[string]any{tag},
		Venues: []map[string]any{venue}, Organizers: []map[string]any{org},
		Events:    []map[string]any{listed, replay.Event(814, "Open night")},
		Hidden:    []map[string]any{hiddenProtected, hiddenPast},
		Protected: map[int64]string{811: "fx-secret", 812: "another secret"},
	}
}

// TestHiddenPastEventFound (issue 34, finding 1): an event hidden from
// listings that has ended is in no TEC list and, outside the edit
// context, not in WordPress's route either; read in the edit context,
// the route lists it and the import carries it over.
func TestHiddenPastEventFound(t *testing.T) {
	src := replay.NewSite(t, protectedSite())
	var logs bytes.Buffer
	s := openSQLite(t)
	rep := runImport(t, s, adminOptions(src, &logs))
	p, err := s.GetRecord(t.Context(), 813)
	if err != nil {
		t.Fatalf("the hidden event that has ended was not imported: %v\nreport: %+v", err, rep)
	}
	if !p.Event.HideFromListings {
		t.Errorf("event 813 lost hide_from_listings")
	}
}

// TestProtectedEventsComplete (issue 34, finding 2): with the edit
// context, WordPress's route names each protected event's password; the
// import reads the event whole with it (?password=) and keeps the
// password. The password is never printed, and a second run changes
// nothing.
func TestProtectedEventsComplete(t *testing.T) {
	src := replay.NewSite(t, protectedSite())
	var logs bytes.Buffer
	s := openSQLite(t)
	rep := runImport(t, s, adminOptions(src, &logs))
	ctx := t.Context()
	p, err := s.GetRecord(ctx, 811)
	if err != nil {
		t.Fatal(err)
	}
	if p.Password != "fx-secret" {
		t.Errorf("event 811 password %q, want fx-secret", p.Password)
	}
	if !strings.Contains(p.Content["en"], "Secret line-up") || !strings.Contains(p.Excerpt["en"], "Members only") {
		t.Errorf("event 811 text: description %q excerpt %q", p.Content, p.Excerpt)
	}
	if e := p.Event; !slices.Equal(e.Categories, []int64{801}) || !slices.Equal(e.Tags, []int64{802}) || !slices.Equal(e.Venues, []int64{803}) || !slices.Equal(e.Organizers, []int64{804}) {
		t.Errorf("event 811 links: categories %v tags %v venues %v organizers %v", e.Categories, e.Tags, e.Venues, e.Organizers)
	}
	h, err := s.GetRecord(ctx, 812)
	if err != nil {
		t.Fatalf("the hidden protected event: %v", err)
	}
	if h.Password != "another secret" || !strings.Contains(h.Content["en"], "Hidden and protected") {
		t.Errorf("event 812: password %q description %q", h.Password, h.Content)
	}
	if len(rep.Protected) != 0 {
		t.Errorf("report lists protected events as incomplete: %v", rep.Protected)
	}
	var out bytes.Buffer
	rep.Print(&out)
	for _, secret := range []string{"fx-secret", "another secret", "another+secret", "another%20secret"} {
		if strings.Contains(out.String()+logs.String(), secret) {
			t.Errorf("a protected event's password %q appears in the output:\n%s\n%s", secret, out.String(), logs.String())
		}
	}
	again := runImport(t, s, adminOptions(src, &logs))
	if again.Changes() != 0 {
		out.Reset()
		again.Print(&out)
		t.Errorf("a second run changed %d records:\n%s", again.Changes(), out.String())
	}
}

// TestProtectedWithoutEditContext: a user the source refuses the edit
// context still imports what the lists show; the summary says what that
// leaves behind and names the protected events as incomplete.
func TestProtectedWithoutEditContext(t *testing.T) {
	site := protectedSite()
	site.NoEditContext = true
	src := replay.NewSite(t, site)
	var logs bytes.Buffer
	s := openSQLite(t)
	rep := runImport(t, s, adminOptions(src, &logs))
	if !slices.Contains(rep.Protected, 811) {
		t.Errorf("report Protected %v, want 811 in it", rep.Protected)
	}
	if !slices.ContainsFunc(rep.Warnings, func(w string) bool { return strings.Contains(w, "edit context") }) {
		t.Errorf("no warning names the edit context: %q", rep.Warnings)
	}
	p, err := s.GetRecord(t.Context(), 811)
	if err != nil {
		t.Fatal(err)
	}
	if p.Password != "" || p.Content["en"] != "" {
		t.Errorf("event 811 has password %q, description %q without the edit context", p.Password, p.Content)
	}
	// Without the edit context the hidden event that has ended is found
	// nowhere: the warning says so.
	if _, err := s.GetRecord(t.Context(), 813); !errors.Is(err, repository.ErrNotFound) {
		t.Errorf("event 813 without the edit context: %v, want not found", err)
	}
}
