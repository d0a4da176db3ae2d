package calendar

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/calendar/eventcal/app/apierr"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/repository/mongo"
	"github.com/calendar/eventcal/repository/mongo/mongotest"
	"github.com/calendar/eventcal/repository/sqlite"
	"github.com/calendar/eventcal/repository/storetest"
)

// The writers of the tests, one per role.
var (
	contributor = &repository.User{ID: 1, Login: "c", Role: repository.RoleContributor}
	author      = &repository.User{ID: 2, Login: "a", Role: repository.RoleAuthor}
	editor      = &repository.User{ID: 3, Login: "e", Role: repository.RoleEditor}
	admin       = &repository.User{ID: 4, Login: "x", Role: repository.RoleAdmin}
)

// openStores returns a function per store engine that opens an empty
// store for a test: SQLite in t.TempDir(), and MongoDB in a database of
// its own on the process's embedded FerretDB (mongotest.Main, TestMain)
// or TEST_MONGO_URI.
func openStores(t *testing.T) map[string]func(t *testing.T) repository.Store {
	t.Helper()
	return map[string]func(t *testing.T) repository.Store{
		"sqlite": func(t *testing.T) repository.Store {
			st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "calendar.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close(context.Background()) })
			return st
		},
		"mongo": func(t *testing.T) repository.Store {
			st, err := mongo.Open(context.Background(), mongotest.Start(t), mongotest.Database(t))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close(context.Background()) })
			return st
		},
	}
}

// dumpTerms returns every term of the store and every pending index mark,
// as JSON lines: two dumps are equal when no term was written.
func dumpTerms(t *testing.T, st repository.Store) string {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	storetest.WriteLabels(t, ctx, st, &b)
	marks, err := st.PendingMarks(ctx, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range marks {
		fmt.Fprintf(&b, "mark %s %d\n", m.Kind, m.ID)
	}
	return b.String()
}

// termFixture is what the tests of one store start from.
type termFixture struct {
	st                repository.Store
	svc               *Labels
	music, jazz, free int64
	// changed records the IDs the service reported changed.
	changed []int64
}

// newTermFixture makes a store with a category Music, its child Jazz and
// a tag Free (in English), and the service over it.
func newTermFixture(t *testing.T, st repository.Store) *termFixture {
	t.Helper()
	f := &termFixture{st: st}
	f.svc = NewLabels(LabelsDeps{Store: st, Changed: func(ids ...int64) { f.changed = append(f.changed, ids...) },
		Count: func(context.Context, *repository.Label) (int, error) { return 7, nil }})
	ctx := context.Background()
	mk := func(tax repository.LabelKind, name string, parent int64) int64 {
		in := &LabelInput{Name: &name}
		if parent != 0 {
			in.Parent = &parent
		}
		term, err := f.svc.Create(ctx, admin, "en", tax, in)
		if err != nil {
			t.Fatalf("create %s %q: %v", tax, name, err)
		}
		return term.ID
	}
	f.music = mk(repository.LabelCategory, "Music", 0)
	f.jazz = mk(repository.LabelCategory, "Jazz", f.music)
	f.free = mk(repository.LabelTag, "Free", 0)
	f.changed = nil
	return f
}

func str(s string) *string { return &s }
func id(n int64) *int64    { return &n }

// refusal is what a refused command must answer.
type refusal struct {
	status int
	code   string
	// param, when set, must be a key of data.params.
	param string
}

// checkRefusal fails unless err is the API error want.
func checkRefusal(t *testing.T, err error, want refusal) {
	t.Helper()
	var e *apierr.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T), want %d %s", err, err, want.status, want.code)
	}
	if e.Status != want.status || e.Code != want.code {
		t.Fatalf("error %d %s (%s), want %d %s", e.Status, e.Code, e.Message, want.status, want.code)
	}
	if want.param != "" {
		var names []string
		switch ps := e.Data["params"].(type) {
		case map[string]string:
			for k := range ps {
				names = append(names, k)
			}
		case []string:
			names = ps
		}
		if !slices.Contains(names, want.param) {
			t.Fatalf("error %s names %v, want %s (%s)", e.Code, names, want.param, e.Message)
		}
	}
}

// TestTermCommandsRefuse sends create, update and delete commands refused
// at each step the service checks, in its order (the fields, the parent
// looked up, the writer's permission, the record, the ancestry, the
// duplicate name), on both stores: each answers the API error of that
// step, and the store's terms and index marks are exactly as before, and
// the caches are told nothing.
func TestTermCommandsRefuse(t *testing.T) {
	long := strings.Repeat("é", 201)
	type cmd func(f *termFixture) error
	create := func(by *repository.User, tax repository.LabelKind, in *LabelInput) cmd {
		return func(f *termFixture) error {
			_, err := f.svc.Create(context.Background(), by, "en", tax, in)
			return err
		}
	}
	update := func(by *repository.User, tax repository.LabelKind, which func(f *termFixture) int64, in func(f *termFixture) *LabelInput) cmd {
		return func(f *termFixture) error {
			_, err := f.svc.Update(context.Background(), by, "en", tax, which(f), in(f))
			return err
		}
	}
	del := func(by *repository.User, tax repository.LabelKind, which func(f *termFixture) int64) cmd {
		return func(f *termFixture) error {
			_, _, err := f.svc.Delete(context.Background(), by, tax, which(f))
			return err
		}
	}
	music := func(f *termFixture) int64 { return f.music }
	free := func(f *termFixture) int64 { return f.free }
	missing := func(*termFixture) int64 { return 999999 }
	fixed := func(in *LabelInput) func(*termFixture) *LabelInput {
		return func(*termFixture) *LabelInput { return in }
	}
	cat, tag := repository.LabelCategory, repository.LabelTag
	bad := refusal{400, "rest_invalid_param", ""}
	badParam := func(name string) refusal { r := bad; r.param = name; return r }
	cases := []struct {
		name string
		cmd  cmd
		want refusal
	}{
		// Create: the fields, then the permission, then the duplicate.
		{"create without a name", create(admin, cat, &LabelInput{Description: str("d")}), refusal{400, "rest_missing_callback_param", "name"}},
		{"create with a blank name", create(admin, cat, &LabelInput{Name: str("  ")}), badParam("name")},
		{"create with a name too long", create(admin, tag, &LabelInput{Name: &long}), badParam("name")},
		{"create with an empty description", create(admin, cat, &LabelInput{Name: str("New"), Description: str("")}), badParam("description")},
		{"create with a slug too long", create(admin, cat, &LabelInput{Name: str("New"), Slug: &long}), badParam("slug")},
		{"create under an unknown parent", create(admin, cat, &LabelInput{Name: str("New"), Parent: id(999999)}), badParam("parent")},
		{"create under a negative parent", create(admin, cat, &LabelInput{Name: str("New"), Parent: id(-1)}), badParam("parent")},
		{"create a tag with a parent", create(admin, tag, &LabelInput{Name: str("New"), Parent: id(1)}), badParam("parent")},
		{"fields before permission", create(contributor, cat, &LabelInput{Name: str(" ")}), badParam("name")},
		{"contributor creates a category", create(contributor, cat, &LabelInput{Name: str("New")}), refusal{403, "rest_forbidden", ""}},
		{"author creates a tag", create(author, tag, &LabelInput{Name: str("New")}), refusal{403, "rest_forbidden", ""}},
		{"create a duplicate name (case aside)", create(author, cat, &LabelInput{Name: str(" music ")}), refusal{400, "term_exists", ""}},
		{"create a duplicate tag", create(editor, tag, &LabelInput{Name: str("FREE"), Slug: str("other")}), refusal{400, "term_exists", ""}},
		// Update: the fields, the permission, the record, the ancestry.
		{"update with a blank name", update(admin, cat, music, fixed(&LabelInput{Name: str("")})), badParam("name")},
		{"update with an unknown parent", update(admin, cat, music, fixed(&LabelInput{Name: str("Renamed"), Parent: id(999999)})), badParam("parent")},
		{"update with a tag as parent", update(admin, cat, music, func(f *termFixture) *LabelInput { return &LabelInput{Parent: &f.free} }), badParam("parent")},
		{"update a tag's parent", update(admin, tag, free, fixed(&LabelInput{Name: str("Renamed"), Parent: id(0)})), badParam("parent")},
		{"contributor updates a category", update(contributor, cat, music, fixed(&LabelInput{Name: str("Renamed")})), refusal{403, "rest_forbidden", ""}},
		{"author updates a tag", update(author, tag, free, fixed(&LabelInput{Name: str("Renamed")})), refusal{403, "rest_forbidden", ""}},
		{"update an unknown term", update(admin, cat, missing, fixed(&LabelInput{Name: str("Renamed")})), refusal{404, "rest-category-not-found", ""}},
		{"update a tag as a category", update(admin, cat, free, fixed(&LabelInput{Name: str("Renamed")})), refusal{404, "rest-category-not-found", ""}},
		{"update a category as its own parent", update(admin, cat, music, func(f *termFixture) *LabelInput {
			return &LabelInput{Name: str("Renamed"), Parent: &f.music}
		}), refusal{400, "rest_term_invalid", "parent"}},
		{"update a category under its child", update(admin, cat, music, func(f *termFixture) *LabelInput {
			return &LabelInput{Name: str("Renamed"), Parent: &f.jazz}
		}), refusal{400, "rest_term_invalid", "parent"}},
		// An import (the system, with an explicit ID): the same rules,
		// and only the system may import.
		{"import a name too long", create(nil, tag, &LabelInput{Name: &long, Import: &LabelImport{ID: 700}}), badParam("name")},
		{"import an ID below 1", create(nil, cat, &LabelInput{Name: str("New"), Import: &LabelImport{}}), badParam("id")},
		{"import under an unknown parent", create(Operator, cat, &LabelInput{Name: str("New"), Parent: id(999999), Import: &LabelImport{ID: 700}}), badParam("parent")},
		{"editor imports", create(editor, cat, &LabelInput{Name: str("New"), Import: &LabelImport{ID: 700}}), refusal{403, "rest_forbidden", ""}},
		{"import a duplicate name", create(nil, cat, &LabelInput{Name: str("Music"), Import: &LabelImport{ID: 700}}), refusal{400, "term_exists", ""}},
		{"import naming another ID", update(nil, cat, music, func(f *termFixture) *LabelInput {
			return &LabelInput{Name: str("Music"), Import: &LabelImport{ID: f.jazz}}
		}), badParam("id")},
		{"import a category under its child", update(nil, cat, music, func(f *termFixture) *LabelInput {
			return &LabelInput{Name: str("Music"), Parent: &f.jazz, Import: &LabelImport{ID: f.music}}
		}), refusal{400, "rest_term_invalid", "parent"}},
		// Delete: the permission, the record.
		{"contributor deletes a category", del(contributor, cat, music), refusal{403, "rest_forbidden", ""}},
		{"author deletes a tag", del(author, tag, free), refusal{403, "rest_forbidden", ""}},
		{"delete an unknown tag", del(admin, tag, missing), refusal{404, "rest-tag-not-found", ""}},
		{"delete a category as a tag", del(admin, tag, music), refusal{404, "rest-tag-not-found", ""}},
	}
	for engine, open := range openStores(t) {
		t.Run(engine, func(t *testing.T) {
			f := newTermFixture(t, open(t))
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					before := dumpTerms(t, f.st)
					checkRefusal(t, tc.cmd(f), tc.want)
					if after := dumpTerms(t, f.st); after != before {
						t.Errorf("a refused command changed the store:\nbefore:\n%s\nafter:\n%s", before, after)
					}
					if len(f.changed) > 0 {
						t.Errorf("a refused command told the caches %v changed", f.changed)
					}
				})
			}
		})
	}
}

// failingStore fails the term look-ups with errStoreDown.
type failingStore struct {
	repository.Store
}

var errStoreDown = errors.New("store down")

func (failingStore) GetLabels(context.Context, []int64) (map[int64]*repository.Label, error) {
	return nil, errStoreDown
}

func (failingStore) GetLabel(context.Context, int64) (*repository.Label, error) {
	return nil, errStoreDown
}

// TestTermCommandsStoreFailure: a look-up the checks need that fails
// stops the command with the store's error (503 for the API, not a 400),
// before any write.
func TestTermCommandsStoreFailure(t *testing.T) {
	f := newTermFixture(t, openStores(t)["sqlite"](t))
	svc := NewLabels(LabelsDeps{Store: failingStore{f.st}})
	ctx := context.Background()
	before := dumpTerms(t, f.st)
	_, err1 := svc.Create(ctx, admin, "en", repository.LabelCategory, &LabelInput{Name: str("New"), Parent: &f.music})
	_, err2 := svc.Update(ctx, admin, "en", repository.LabelCategory, f.music, &LabelInput{Name: str("Renamed")})
	_, _, err3 := svc.Delete(ctx, admin, repository.LabelTag, f.free)
	for i, err := range []error{err1, err2, err3} {
		if !errors.Is(err, errStoreDown) {
			t.Errorf("command %d: error %v, want the store's", i+1, err)
		}
	}
	if after := dumpTerms(t, f.st); after != before {
		t.Errorf("the store changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// TestTermCommandsWrite checks what accepted commands write, on both
// stores: the name trimmed, the slug from the name or normalised, the
// HTML policy by role, the parent, one write and one cache notice each.
func TestTermCommandsWrite(t *testing.T) {
	for engine, open := range openStores(t) {
		t.Run(engine, func(t *testing.T) {
			f := newTermFixture(t, open(t))
			ctx := context.Background()
			cat, tag := repository.LabelCategory, repository.LabelTag
			cases := []struct {
				name string
				run  func() (*repository.Label, error)
				// want checks the term returned, which must also be the
				// stored one.
				want func(t *testing.T, term *repository.Label)
			}{
				{"author creates a child category", func() (*repository.Label, error) {
					return f.svc.Create(ctx, author, "en", cat, &LabelInput{Name: str("  Bebop "), Description: str("<b>Fast</b><script>x</script>"), Parent: &f.jazz})
				}, func(t *testing.T, term *repository.Label) {
					if term.Name["en"] != "Bebop" || term.Slug["en"] != "bebop" || term.Parent != f.jazz || term.Description["en"] != "<b>Fast</b>" {
						t.Errorf("got %+v", term)
					}
				}},
				{"author's name is plain text", func() (*repository.Label, error) {
					return f.svc.Create(ctx, author, "en", cat, &LabelInput{Name: str("<i>Rock</i>")})
				}, func(t *testing.T, term *repository.Label) {
					if term.Name["en"] != "Rock" {
						t.Errorf("name %q, want Rock", term.Name["en"])
					}
				}},
				{"editor's HTML is kept", func() (*repository.Label, error) {
					return f.svc.Create(ctx, editor, "en", tag, &LabelInput{Name: str("<i>Loud</i>")})
				}, func(t *testing.T, term *repository.Label) {
					if term.Name["en"] != "<i>Loud</i>" {
						t.Errorf("name %q", term.Name["en"])
					}
				}},
				{"one name in another language is no duplicate", func() (*repository.Label, error) {
					return f.svc.Create(ctx, admin, "fr", cat, &LabelInput{Name: str("Music")})
				}, func(t *testing.T, term *repository.Label) {
					if term.Name["fr"] != "Music" || term.ID == f.music {
						t.Errorf("got %+v", term)
					}
				}},
				{"one name under another parent is no duplicate", func() (*repository.Label, error) {
					return f.svc.Create(ctx, admin, "en", cat, &LabelInput{Name: str("Music"), Parent: &f.music})
				}, func(t *testing.T, term *repository.Label) {
					if term.Parent != f.music || term.Slug["en"] == "music" {
						t.Errorf("got %+v (the store makes slugs unique)", term)
					}
				}},
				{"the system creates without a role", func() (*repository.Label, error) {
					return f.svc.Create(ctx, nil, "en", tag, &LabelInput{Name: str("Imported"), Slug: str(" Other Slug ")})
				}, func(t *testing.T, term *repository.Label) {
					if term.Slug["en"] != "other-slug" {
						t.Errorf("slug %q", term.Slug["en"])
					}
				}},
				{"update moves a category and renames it", func() (*repository.Label, error) {
					return f.svc.Update(ctx, author, "en", cat, f.jazz, &LabelInput{Name: str("Jazz & Blues"), Parent: id(0)})
				}, func(t *testing.T, term *repository.Label) {
					if term.Name["en"] != "Jazz & Blues" || term.Parent != 0 || term.Slug["en"] != "jazz" {
						t.Errorf("got %+v (a slug stays when the name changes)", term)
					}
				}},
				{"update adds a translation", func() (*repository.Label, error) {
					return f.svc.Update(ctx, editor, "nl", tag, f.free, &LabelInput{Name: str("Gratis")})
				}, func(t *testing.T, term *repository.Label) {
					if term.Name["nl"] != "Gratis" || term.Slug["nl"] != "gratis" || term.Name["en"] != "Free" {
						t.Errorf("got %+v", term)
					}
				}},
			}
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					f.changed = nil
					term, err := tc.run()
					if err != nil {
						t.Fatal(err)
					}
					tc.want(t, term)
					stored, err := f.st.GetLabel(ctx, term.ID)
					if err != nil {
						t.Fatal(err)
					}
					tc.want(t, stored)
					if !slices.Equal(f.changed, []int64{term.ID}) {
						t.Errorf("caches told %v, want [%d]", f.changed, term.ID)
					}
				})
			}
			t.Run("delete", func(t *testing.T) {
				f.changed = nil
				term, n, err := f.svc.Delete(ctx, editor, cat, f.music)
				if err != nil {
					t.Fatal(err)
				}
				if term.ID != f.music || term.Name["en"] != "Music" || n != 7 {
					t.Errorf("deleted %+v with count %d, want Music with 7 (TermsDeps.Count)", term, n)
				}
				if _, err := f.st.GetLabel(ctx, f.music); !errors.Is(err, repository.ErrNotFound) {
					t.Errorf("term still there: %v", err)
				}
				if !slices.Equal(f.changed, []int64{f.music}) {
					t.Errorf("caches told %v", f.changed)
				}
				if _, err := f.svc.Get(ctx, cat, f.music); err == nil {
					t.Error("Get finds the deleted term")
				}
			})
		})
	}
}

// TestTermLockKey pins the lock key of a term name: event writes that
// create a term by name lock the same key, so the form must not drift.
func TestTermLockKey(t *testing.T) {
	a := termLockKey(repository.LabelCategory, "en", "  Jazz ")
	if b := termLockKey(repository.LabelCategory, "en", "jazz"); a != b {
		t.Errorf("case and spaces change the key: %s, %s", a, b)
	}
	for _, other := range []string{termLockKey(repository.LabelTag, "en", "jazz"), termLockKey(repository.LabelCategory, "fr", "jazz")} {
		if other == a {
			t.Errorf("key %s shared across taxonomies or languages", a)
		}
	}
	// The first 16 bytes of SHA-256("jazz"), as the event writes' key.
	if want := "term:category:en:c301f75ab52fa076c827231e613bbc97"; a != want {
		t.Errorf("key %q, want %q", a, want)
	}
}

// TestLabelImportWrites: an import create keeps the ID, the slug as sent
// and the origin; an import update replaces the label's text in every
// language by the command's and keeps the ID and origin.
func TestLabelImportWrites(t *testing.T) {
	ctx := context.Background()
	for engine, open := range openStores(t) {
		t.Run(engine, func(t *testing.T) {
			f := newTermFixture(t, open(t))
			origin := &repository.Origin{Site: "https://wp.example/wp-json/tribe/events/v1", ID: 700, Hash: "h1"}
			got, err := f.svc.Create(ctx, nil, "en", repository.LabelCategory, &LabelInput{Name: str("Folk"), Slug: str("Folk_Kept"),
				Parent: &f.music, Import: &LabelImport{ID: 700, Origin: origin}})
			if err != nil {
				t.Fatal(err)
			}
			if got.ID != 700 || got.Slug["en"] != "Folk_Kept" || got.Parent != f.music || got.Origin == nil || *got.Origin != *origin {
				t.Fatalf("imported %+v, want ID 700, slug Folk_Kept, parent %d, origin %+v", got, f.music, origin)
			}
			if _, err := f.svc.Update(ctx, admin, "de", repository.LabelCategory, 700, &LabelInput{Name: str("Volksmusik")}); err != nil {
				t.Fatal(err)
			}
			origin2 := *origin
			origin2.Hash = "h2"
			got, err = f.svc.Update(ctx, Operator, "en", repository.LabelCategory, 700, &LabelInput{Name: str("Folk music"), Slug: str("folk"),
				Parent: id(0), Import: &LabelImport{ID: 700, Origin: &origin2}})
			if err != nil {
				t.Fatal(err)
			}
			stored, err := f.st.GetLabel(ctx, 700)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range []*repository.Label{got, stored} {
				if l.Name.Has("de") || l.Name["en"] != "Folk music" || l.Slug["en"] != "folk" || l.Parent != 0 || l.Origin == nil || l.Origin.Hash != "h2" {
					t.Errorf("after the import update: %+v", l)
				}
			}
		})
	}
}
