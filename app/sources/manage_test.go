package sources_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/calendar/eventcal/app/apierr"
	"github.com/calendar/eventcal/app/sources"
	"github.com/calendar/eventcal/repository"
)

// manageEnv is the sources service over a SQLite store, with a category "Music" (slug music) and a tag
// "Jazz" (slug jazz).
type manageEnv struct {
	svc      *sources.Sources
	store    repository.Store
	sources  repository.SourceStore
	music    *repository.Label
	jazz     *repository.Label
	editor   *repository.User
	clockNow time.Time
}

func newManageEnv(t *testing.T, allowPrivate bool) *manageEnv {
	t.Helper()
	st := openSQLite(t)
	e := &manageEnv{store: st, sources: st, editor: &repository.User{ID: 3, Login: "ed", Role: repository.RoleEditor}, clockNow: now}
	e.svc = sources.NewSources(sources.SourcesDeps{Store: st, DefaultLanguage: "en", AllowPrivate: allowPrivate,
		Now: func() time.Time { return e.clockNow }})
	for _, l := range []**repository.Label{&e.music, &e.jazz} {
		kind, name := repository.LabelCategory, "Music"
		if l == &e.jazz {
			kind, name = repository.LabelTag, "Jazz"
		}
		*l = &repository.Label{Taxonomy: kind, Name: repository.Text{"en": name}, Slug: repository.Text{"en": strings.ToLower(name)}}
		if err := st.CreateLabel(t.Context(), *l); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// paramsOf returns the code of an API error and the names in its
// data.params.
func paramsOf(t *testing.T, err error) (string, []string) {
	t.Helper()
	var ae *apierr.Error
	if !errors.As(err, &ae) {
		t.Fatalf("error %v is not an API error", err)
	}
	var names []string
	switch p := ae.Data["params"].(type) {
	case map[string]string:
		for n := range p {
			names = append(names, n)
		}
	case []string:
		names = p
	}
	return ae.Code, names
}

// TestSourcesRefuseBadInput checks that every field is checked: each
// bad value is a 400 naming its field (rest_invalid_param, or
// rest_missing_callback_param for a missing url), and nothing is stored.
func TestSourcesRefuseBadInput(t *testing.T) {
	e := newManageEnv(t, false)
	ok := "https://feeds.example/cal.ics"
	long := strings.Repeat("é", sources.MaxSourceName+1)
	cases := []struct {
		name  string
		in    sources.SourceInput
		field string
		code  string
		text  string // in the message
	}{
		{"no url", sources.SourceInput{}, "url", "rest_missing_callback_param", ""},
		{"ftp url", sources.SourceInput{URL: ptr("ftp://feeds.example/cal.ics")}, "url", "rest_invalid_param", "http:// or https://"},
		{"file url", sources.SourceInput{URL: ptr("file:///etc/passwd")}, "url", "rest_invalid_param", "http:// or https://"},
		{"no host", sources.SourceInput{URL: ptr("https:///cal.ics")}, "url", "rest_invalid_param", "names no host"},
		{"loopback", sources.SourceInput{URL: ptr("http://127.0.0.1/cal.ics")}, "url", "rest_invalid_param", "SOURCES_ALLOW_PRIVATE"},
		{"private range", sources.SourceInput{URL: ptr("http://10.1.2.3/cal.ics")}, "url", "rest_invalid_param", "SOURCES_ALLOW_PRIVATE"},
		{"localhost", sources.SourceInput{URL: ptr("http://localhost:8080/cal.ics")}, "url", "rest_invalid_param", "SOURCES_ALLOW_PRIVATE"},
		{"link-local", sources.SourceInput{URL: ptr("http://[fe80::1]/cal.ics")}, "url", "rest_invalid_param", "SOURCES_ALLOW_PRIVATE"},
		{"credentials", sources.SourceInput{URL: ptr("https://user:secret@feeds.example/cal.ics")}, "url", "rest_invalid_param", "user name or password"},
		{"user only", sources.SourceInput{URL: ptr("https://user@feeds.example/cal.ics")}, "url", "rest_invalid_param", "user name or password"},
		{"unknown format", sources.SourceInput{URL: ptr(ok), Format: ptr("rss")}, "format", "rest_invalid_param", "auto, ics, tec"},
		{"@monthly", sources.SourceInput{URL: ptr(ok), Schedule: ptr("@monthly")}, "schedule", "rest_invalid_param", "@hourly"},
		{"every without @", sources.SourceInput{URL: ptr(ok), Schedule: ptr("every 5m")}, "schedule", "rest_invalid_param", "five-field cron"},
		{"@every no unit", sources.SourceInput{URL: ptr(ok), Schedule: ptr("@every 5")}, "schedule", "rest_invalid_param", "not a duration"},
		{"@every 30s", sources.SourceInput{URL: ptr(ok), Schedule: ptr("@every 30s")}, "schedule", "rest_invalid_param", "once a minute"},
		{"three fields", sources.SourceInput{URL: ptr(ok), Schedule: ptr("0 * *")}, "schedule", "rest_invalid_param", "five-field cron"},
		{"six fields", sources.SourceInput{URL: ptr(ok), Schedule: ptr("0 0 * * * *")}, "schedule", "rest_invalid_param", "five-field cron"},
		{"minute 61", sources.SourceInput{URL: ptr(ok), Schedule: ptr("61 * * * *")}, "schedule", "rest_invalid_param", "not a cron expression"},
		{"never fires", sources.SourceInput{URL: ptr(ok), Schedule: ptr("0 0 30 2 *")}, "schedule", "rest_invalid_param", "never fires"},
		{"time zone", sources.SourceInput{URL: ptr(ok), Schedule: ptr("CRON_TZ=UTC 0 0 * * *")}, "schedule", "rest_invalid_param", "a schedule is"},
		{"unknown status", sources.SourceInput{URL: ptr(ok), Status: ptr("published")}, "status", "rest_invalid_param", "draft, pending, publish, private"},
		{"future status", sources.SourceInput{URL: ptr(ok), Status: ptr("future")}, "status", "rest_invalid_param", "draft"},
		{"unknown category", sources.SourceInput{URL: ptr(ok), Categories: &[]string{"music", "Opera"}}, "categories", "rest_invalid_param", `"Opera"`},
		{"unknown category ID", sources.SourceInput{URL: ptr(ok), Categories: &[]string{"999"}}, "categories", "rest_invalid_param", `"999"`},
		{"a tag as a category", sources.SourceInput{URL: ptr(ok), Categories: &[]string{"jazz"}}, "categories", "rest_invalid_param", `"jazz"`},
		{"unknown tag", sources.SourceInput{URL: ptr(ok), Tags: &[]string{"blues"}}, "tags", "rest_invalid_param", `"blues"`},
		{"too many tags", sources.SourceInput{URL: ptr(ok), Tags: ptr(make([]string, sources.MaxSourceLabels+1))}, "tags", "rest_invalid_param", "at most"},
		{"bad on_removed", sources.SourceInput{URL: ptr(ok), OnRemoved: ptr("delete")}, "on_removed", "rest_invalid_param", "trash, keep"},
		{"name too long", sources.SourceInput{URL: ptr(ok), Name: &long}, "name", "rest_invalid_param", "at most 200 characters"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := e.svc.Create(t.Context(), e.editor, &c.in)
			if err == nil {
				t.Fatal("accepted")
			}
			code, names := paramsOf(t, err)
			if code != c.code || len(names) != 1 || names[0] != c.field {
				t.Errorf("code %s params %v, want %s naming %s (%v)", code, names, c.code, c.field, err)
			}
			if !strings.Contains(err.Error(), c.text) {
				t.Errorf("message %q does not say %q", err.Error(), c.text)
			}
			if all, _ := e.sources.ListSources(t.Context()); len(all) != 0 {
				t.Errorf("a refused create stored %d sources", len(all))
			}
		})
	}
	// An update is checked the same way and changes nothing.
	src, err := e.svc.Create(t.Context(), e.editor, &sources.SourceInput{URL: ptr(ok), Name: ptr("Partner")})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases[1:] {
		t.Run("update "+c.name, func(t *testing.T) {
			_, err := e.svc.Update(t.Context(), e.editor, src.ID, &c.in)
			if code, names := paramsOf(t, err); code != "rest_invalid_param" || len(names) < 1 {
				t.Errorf("code %s params %v (%v)", code, names, err)
			}
			got, _ := e.sources.GetSource(t.Context(), src.ID)
			if got.URL != ok || got.Name != "Partner" || got.Schedule != "" || got.Status != "draft" || got.Revision != src.Revision {
				t.Errorf("a refused update changed the source: %+v", got)
			}
		})
	}
}

// TestSourcesWhoMay checks that editors and administrators manage
// sources, and that authors and contributors get 403 and anonymous
// callers 401 from every command, before anything is written.
func TestSourcesWhoMay(t *testing.T) {
	e := newManageEnv(t, false)
	mine, err := e.svc.Create(t.Context(), e.editor, &sources.SourceInput{URL: ptr("https://feeds.example/a.ics")})
	if err != nil {
		t.Fatal(err)
	}
	roles := []struct {
		name   string
		user   *repository.User
		status int // 0: allowed
	}{
		{"anonymous", nil, 401},
		{"contributor", &repository.User{ID: 1, Role: repository.RoleContributor}, 403},
		{"author", &repository.User{ID: 2, Role: repository.RoleAuthor}, 403},
		{"editor", &repository.User{ID: 3, Role: repository.RoleEditor}, 0},
		{"admin", &repository.User{ID: 4, Role: repository.RoleAdmin}, 0},
	}
	for _, r := range roles {
		t.Run(r.name, func(t *testing.T) {
			ctx := t.Context()
			calls := map[string]func() error{
				"create": func() error {
					_, err := e.svc.Create(ctx, r.user, &sources.SourceInput{URL: ptr("https://feeds.example/" + r.name + ".ics")})
					return err
				},
				"get":  func() error { _, err := e.svc.Get(ctx, r.user, mine.ID); return err },
				"list": func() error { _, err := e.svc.List(ctx, r.user); return err },
				"update": func() error {
					_, err := e.svc.Update(ctx, r.user, mine.ID, &sources.SourceInput{Name: ptr(r.name)})
					return err
				},
				"runs": func() error { _, err := e.svc.Runs(ctx, r.user, mine.ID, 10); return err },
			}
			for what, call := range calls {
				err := call()
				var ae *apierr.Error
				switch {
				case r.status == 0 && err != nil:
					t.Errorf("%s: %v", what, err)
				case r.status != 0 && (!errors.As(err, &ae) || ae.Status != r.status || ae.Code != "rest_forbidden"):
					t.Errorf("%s: %v, want %d rest_forbidden", what, err, r.status)
				}
			}
			if r.status != 0 {
				if _, err := e.svc.Delete(ctx, r.user, mine.ID); err == nil {
					t.Error("delete allowed")
				}
				got, _ := e.sources.GetSource(ctx, mine.ID)
				if got == nil || got.Name == r.name {
					t.Errorf("a refused caller changed the source: %+v", got)
				}
			}
		})
	}
}

// TestSourcesRoundTrip creates, reads, lists, changes and deletes a
// source: the defaults, labels named by ID, slug or name (resolved to
// IDs, without repeats), a partial update, a new url forgetting what the
// last run read, and 404 source_not_found once it is gone.
func TestSourcesRoundTrip(t *testing.T) {
	e := newManageEnv(t, false)
	ctx := t.Context()
	src, err := e.svc.Create(ctx, e.editor, &sources.SourceInput{URL: ptr("  https://Feeds.Example:8443/cal.ics "),
		Categories: &[]string{"music", "Music", strconv.FormatInt(e.music.ID, 10)}, Tags: &[]string{"JAZZ"}, Schedule: ptr(" @every  6h ")})
	if err != nil {
		t.Fatal(err)
	}
	want := repository.Source{ID: src.ID, URL: "https://Feeds.Example:8443/cal.ics", Format: "auto", Name: "Feeds.Example", Schedule: "@every 6h",
		Status: "draft", Categories: []int64{e.music.ID}, Tags: []int64{e.jazz.ID}, OnRemoved: "trash", Author: e.editor.ID, Created: now, Updated: now}
	if !sameSource(src, &want) {
		t.Errorf("created\n %+v\nwant\n %+v", src, &want)
	}
	got, err := e.svc.Get(ctx, e.editor, src.ID)
	if err != nil || !sameSource(got, &want) {
		t.Errorf("get: %+v, %v", got, err)
	}
	second, err := e.svc.Create(ctx, e.editor, &sources.SourceInput{URL: ptr("https://other.example/feed"), Format: ptr("TEC"),
		Name: ptr("<b>Other</b> site"), Status: ptr("publish"), OnRemoved: ptr("keep"), Schedule: ptr("30 4 * * 1")})
	if err != nil {
		t.Fatal(err)
	}
	if second.Format != "tec" || second.Name != "Other site" || second.Status != "publish" || second.OnRemoved != "keep" || second.Schedule != "30 4 * * 1" {
		t.Errorf("second: %+v", second)
	}
	all, err := e.svc.List(ctx, e.editor)
	if err != nil || len(all) != 2 || all[0].ID != src.ID || all[1].ID != second.ID {
		t.Errorf("list: %v, %v", all, err)
	}

	// What a run read is kept by an update of other fields...
	if _, err := e.sources.UpdateSource(ctx, src.ID, func(s *repository.Source) error {
		s.ETag, s.LastModified, s.ContentHash, s.DetectedFormat = `"v1"`, "Mon, 01 Jun 2026 10:00:00 GMT", "h1", "ics"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	e.clockNow = now.Add(time.Hour)
	up, err := e.svc.Update(ctx, e.editor, src.ID, &sources.SourceInput{Name: ptr("Partner"), Categories: &[]string{}})
	if err != nil {
		t.Fatal(err)
	}
	want.Name, want.Categories, want.Updated = "Partner", []int64{}, now.Add(time.Hour)
	want.ETag, want.LastModified, want.ContentHash, want.DetectedFormat = `"v1"`, "Mon, 01 Jun 2026 10:00:00 GMT", "h1", "ics"
	if !sameSource(up, &want) {
		t.Errorf("updated\n %+v\nwant\n %+v", up, &want)
	}
	// ... and forgotten when the url or the format changes.
	for _, in := range []sources.SourceInput{{URL: ptr("https://feeds.example/new.ics")}, {Format: ptr("ics")}} {
		if _, err := e.sources.UpdateSource(ctx, src.ID, func(s *repository.Source) error {
			s.ETag, s.LastModified, s.ContentHash, s.DetectedFormat = `"v1"`, "x", "h1", "ics"
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		up, err := e.svc.Update(ctx, e.editor, src.ID, &in)
		if err != nil {
			t.Fatal(err)
		}
		if up.ETag != "" || up.LastModified != "" || up.ContentHash != "" || up.DetectedFormat != "" {
			t.Errorf("after %+v the validators stay: %+v", in, up)
		}
	}
	// The same url again keeps them.
	if _, err := e.sources.UpdateSource(ctx, src.ID, func(s *repository.Source) error { s.ETag = `"v2"`; return nil }); err != nil {
		t.Fatal(err)
	}
	if up, _ := e.svc.Update(ctx, e.editor, src.ID, &sources.SourceInput{URL: ptr("https://feeds.example/new.ics")}); up.ETag != `"v2"` {
		t.Errorf("the same url forgot the validators: %+v", up)
	}

	gone, err := e.svc.Delete(ctx, e.editor, src.ID)
	if err != nil || gone.ID != src.ID {
		t.Fatalf("delete: %+v, %v", gone, err)
	}
	for what, call := range map[string]func() error{
		"get": func() error { _, err := e.svc.Get(ctx, e.editor, src.ID); return err },
		"update": func() error {
			_, err := e.svc.Update(ctx, e.editor, src.ID, &sources.SourceInput{Name: ptr("x")})
			return err
		},
		"delete": func() error { _, err := e.svc.Delete(ctx, e.editor, src.ID); return err },
		"runs":   func() error { _, err := e.svc.Runs(ctx, e.editor, src.ID, 5); return err },
	} {
		var ae *apierr.Error
		if err := call(); !errors.As(err, &ae) || ae.Status != 404 || ae.Code != "source_not_found" {
			t.Errorf("%s of a deleted source: %v", what, err)
		}
	}
}

// TestSourcesRuns checks that Runs lists a source's runs newest first,
// bounded by the limit (within 1 and MaxRunList), and LastRun the newest.
func TestSourcesRuns(t *testing.T) {
	e := newManageEnv(t, false)
	ctx := t.Context()
	src, err := e.svc.Create(ctx, e.editor, &sources.SourceInput{URL: ptr("https://feeds.example/a.ics")})
	if err != nil {
		t.Fatal(err)
	}
	if last, err := e.svc.LastRun(ctx, src); last != nil || err != nil {
		t.Errorf("last run of a new source: %v, %v", last, err)
	}
	for i := range sources.MaxRunList + 5 {
		if err := e.sources.CreateSourceRun(ctx, &repository.SourceRun{SourceID: src.ID, Status: repository.RunSucceeded, Trigger: "cli", Started: now.Add(time.Duration(i) * time.Minute)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ limit, want int }{{3, 3}, {0, 1}, {-2, 1}, {10_000, sources.MaxRunList}} {
		runs, err := e.svc.Runs(ctx, e.editor, src.ID, c.limit)
		if err != nil || len(runs) != c.want {
			t.Fatalf("limit %d: %d runs, %v", c.limit, len(runs), err)
		}
		for i := 1; i < len(runs); i++ {
			if runs[i].ID >= runs[i-1].ID {
				t.Fatalf("limit %d: not newest first", c.limit)
			}
		}
	}
	last, err := e.svc.LastRun(ctx, src)
	if err != nil || last == nil || last.Started != now.Add(time.Duration(sources.MaxRunList+4)*time.Minute) {
		t.Errorf("last run: %+v, %v", last, err)
	}
}

// TestSourcesAllowPrivate checks SOURCES_ALLOW_PRIVATE: private
// addresses are accepted, credentials and other schemes still refused.
func TestSourcesAllowPrivate(t *testing.T) {
	e := newManageEnv(t, true)
	for _, u := range []string{"http://127.0.0.1:8080/cal.ics", "http://10.0.0.5/cal.ics", "http://localhost/cal.ics"} {
		if _, err := e.svc.Create(t.Context(), e.editor, &sources.SourceInput{URL: ptr(u)}); err != nil {
			t.Errorf("%s: %v", u, err)
		}
	}
	for _, u := range []string{"http://u:p@127.0.0.1/cal.ics", "gopher://127.0.0.1/"} {
		if _, err := e.svc.Create(t.Context(), e.editor, &sources.SourceInput{URL: ptr(u)}); err == nil {
			t.Errorf("%s accepted", u)
		}
	}
}

// TestNilSourcesRefuses checks that a nil service (a server composed
// without one) refuses every command with ErrNoSourceStore rather than
// failing.
func TestNilSourcesRefuses(t *testing.T) {
	var svc *sources.Sources
	ed := &repository.User{ID: 1, Role: repository.RoleEditor}
	if _, err := svc.List(context.Background(), ed); !errors.Is(err, sources.ErrNoSourceStore) {
		t.Errorf("list: %v", err)
	}
	if _, err := svc.Get(context.Background(), ed, 1); !errors.Is(err, sources.ErrNoSourceStore) {
		t.Errorf("get: %v", err)
	}
	if _, err := svc.Create(context.Background(), ed, &sources.SourceInput{URL: ptr("https://feeds.example/a.ics")}); !errors.Is(err, sources.ErrNoSourceStore) {
		t.Errorf("create: %v", err)
	}
	if svc.AllowPrivate() {
		t.Error("a nil service allows private addresses")
	}
}

// sameSource compares the stored fields of two sources (not Revision).
func sameSource(a, b *repository.Source) bool {
	x, y := *a, *b
	x.Revision, y.Revision = 0, 0
	return x.ID == y.ID && x.URL == y.URL && x.Format == y.Format && x.Name == y.Name && x.Schedule == y.Schedule &&
		x.Status == y.Status && equalIDs(x.Categories, y.Categories) && equalIDs(x.Tags, y.Tags) && x.OnRemoved == y.OnRemoved &&
		x.Author == y.Author && x.Created.Equal(y.Created) && x.Updated.Equal(y.Updated) &&
		x.ETag == y.ETag && x.LastModified == y.LastModified && x.ContentHash == y.ContentHash && x.DetectedFormat == y.DetectedFormat
}

func equalIDs(a, b []int64) bool {
	if len(a) != len(b) || (a == nil) != (b == nil) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
