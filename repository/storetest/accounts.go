package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/calendar/eventcal/repository"
)

// accountTests cover the user and token lifecycle (issue 7, finding 9).
var accountTests = []storeTest{
	{"ListAndUpdateUsers", testListUpdateUsers},
	{"TokenLifecycle", testTokenLifecycle},
}

// exclusiveTests cover Exclusive (issue 7, finding 6).
var exclusiveTests = []storeTest{
	{"Serialises", testExclusiveSerialises},
	{"FindOrCreateTerm", testExclusiveFindOrCreate},
	{"IndexedTermLookups", testIndexedTermLookups},
}

func testListUpdateUsers(t *testing.T, ctx context.Context, s repository.Store) {
	users, err := s.ListUsers(ctx)
	if err != nil || len(users) != 0 {
		t.Fatalf("ListUsers on an empty store: %v, %v", users, err)
	}
	var made []*repository.User
	for _, login := range []string{"b", "a", "c"} {
		u := &repository.User{Login: login, Role: repository.RoleAuthor, Created: baseTime}
		if login == "a" {
			u.Email = "a@example.org" // kept as given
			u.Origin = &repository.Origin{Site: "https://example.org/wp-json/tribe/events/v1", ID: 7, Hash: "h1"}
		}
		if err := s.CreateUser(ctx, u); err != nil {
			t.Fatal(err)
		}
		made = append(made, u)
	}
	users, err = s.ListUsers(ctx)
	if err != nil || len(users) != 3 {
		t.Fatalf("ListUsers: %d users, %v", len(users), err)
	}
	for i, u := range users {
		checkUser(t, "ListUsers", made[i], u)
	}
	upd := *made[1]
	upd.Role, upd.Disabled, upd.Email = repository.RoleEditor, true, "a2@example.org"
	upd.Origin = &repository.Origin{Site: "https://example.org/wp-json/tribe/events/v1", ID: 7, Hash: "h2"}
	if err := s.UpdateUser(ctx, &upd); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetUser(ctx, upd.ID)
	if err != nil {
		t.Fatal(err)
	}
	checkUser(t, "after UpdateUser", &upd, got)
	upd.Disabled = false
	if err := s.UpdateUser(ctx, &upd); err != nil {
		t.Fatal(err)
	}
	if got, _ = s.GetUser(ctx, upd.ID); got.Disabled || got.Role != repository.RoleEditor {
		t.Errorf("re-enabled user: %+v", got)
	}
	wantNotFound(t, "UpdateUser(missing)", s.UpdateUser(ctx, &repository.User{ID: 9999, Role: repository.RoleAdmin}))
}

func testTokenLifecycle(t *testing.T, ctx context.Context, s repository.Store) {
	a := &repository.User{Login: "a", Role: repository.RoleAdmin, Created: baseTime}
	b := &repository.User{Login: "b", Role: repository.RoleContributor, Created: baseTime}
	for _, u := range []*repository.User{a, b} {
		if err := s.CreateUser(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	mk := func(secret string, user int64, name string, created, expires time.Time) *repository.Token {
		tok := &repository.Token{Hash: repository.HashToken(secret), UserID: user, Name: name, Created: created, Expires: expires}
		if err := s.CreateToken(ctx, tok); err != nil {
			t.Fatal(err)
		}
		return tok
	}
	t1 := mk("one", a.ID, "laptop", baseTime, time.Time{})
	t2 := mk("two", b.ID, "ci", baseTime.Add(time.Hour), baseTime.Add(48*time.Hour))
	t3 := mk("three", a.ID, "", baseTime.Add(2*time.Hour), time.Time{})

	got, err := s.TokenByHash(ctx, t2.Hash)
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "ci" || got.UserID != b.ID || !normTime(got.Expires).Equal(normTime(t2.Expires)) || !got.LastUsed.IsZero() {
		t.Errorf("TokenByHash = %+v, want %+v", got, t2)
	}
	_, err = s.TokenByHash(ctx, repository.HashToken("nope"))
	wantNotFound(t, "TokenByHash(missing)", err)

	all, err := s.ListTokens(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 3 || all[0].Hash != t1.Hash || all[1].Hash != t2.Hash || all[2].Hash != t3.Hash {
		t.Errorf("ListTokens(0) = %s, want oldest first", dump(all))
	}
	mine, err := s.ListTokens(ctx, a.ID)
	if err != nil || len(mine) != 2 {
		t.Fatalf("ListTokens(a) = %d tokens, %v", len(mine), err)
	}

	used := baseTime.Add(3 * time.Hour)
	if err := s.TouchToken(ctx, t1.Hash, used); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.TokenByHash(ctx, t1.Hash); !normTime(got.LastUsed).Equal(normTime(used)) {
		t.Errorf("LastUsed = %v, want %v", got.LastUsed, used)
	}

	if err := s.RevokeToken(ctx, t1.ID()); err != nil {
		t.Fatal(err)
	}
	_, err = s.TokenByHash(ctx, t1.Hash)
	wantNotFound(t, "TokenByHash(revoked)", err)
	_, err = s.UserByTokenHash(ctx, t1.Hash)
	wantNotFound(t, "UserByTokenHash(revoked)", err)
	wantNotFound(t, "RevokeToken(again)", s.RevokeToken(ctx, t1.ID()))
	for _, bad := range []string{"", t2.Hash[:8], t2.Hash, "zzzzzzzzzzzzzzzz"} {
		wantNotFound(t, fmt.Sprintf("RevokeToken(%q)", bad), s.RevokeToken(ctx, bad))
	}
	if _, err := s.TokenByHash(ctx, t2.Hash); err != nil {
		t.Errorf("another token was revoked too: %v", err)
	}
}

// testExclusiveSerialises runs 20 goroutines under one key and checks that
// no two were inside at once, while another key is not blocked.
func testExclusiveSerialises(t *testing.T, ctx context.Context, s repository.Store) {
	var inside, maxInside atomic.Int32
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- s.Exclusive(ctx, "same key", func(context.Context) error {
				n := inside.Add(1)
				for {
					m := maxInside.Load()
					if n <= m || maxInside.CompareAndSwap(m, n) {
						break
					}
				}
				time.Sleep(time.Millisecond) // widen the window a race would need
				inside.Add(-1)
				return nil
			})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if maxInside.Load() != 1 {
		t.Errorf("%d callers were inside Exclusive at once", maxInside.Load())
	}
	sentinel := errors.New("from fn")
	if err := s.Exclusive(ctx, "other", func(context.Context) error { return sentinel }); !errors.Is(err, sentinel) {
		t.Errorf("Exclusive returned %v, want fn's error", err)
	}
	// The lock is free again after an error.
	if err := s.Exclusive(ctx, "other", func(context.Context) error { return nil }); err != nil {
		t.Errorf("second Exclusive: %v", err)
	}
}

// testExclusiveFindOrCreate is the pattern the API uses for term names: 20
// parallel find-or-create calls under one key create one term.
func testExclusiveFindOrCreate(t *testing.T, ctx context.Context, s repository.Store) {
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- s.Exclusive(ctx, "term:category:en:jazz", func(ctx context.Context) error {
				found, err := s.FindLabels(ctx, repository.LabelQuery{Taxonomy: repository.LabelCategory, Name: "Jazz", NameLang: "en"})
				if err != nil || len(found) > 0 {
					return err
				}
				return s.CreateLabel(ctx, &repository.Label{Taxonomy: repository.LabelCategory, Name: repository.Text{"en": "Jazz"}, Slug: repository.Text{"en": "jazz"}})
			})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	found, err := s.FindLabels(ctx, repository.LabelQuery{Taxonomy: repository.LabelCategory})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 1 {
		t.Errorf("%d terms created, want 1", len(found))
	}
}

// testIndexedTermLookups pins the name and slug look-ups that the engines
// answer from an index (MongoDB: name_keys and the slug reservations):
// renames and slug changes are followed, other taxonomies and languages
// are not matched.
func testIndexedTermLookups(t *testing.T, ctx context.Context, s repository.Store) {
	cat := mustCreateTerm(t, ctx, s, &repository.Label{Taxonomy: repository.LabelCategory, Name: repository.Text{"en": "Blues", "de": "Blues DE"}, Slug: repository.Text{"en": "blues", "de": "blues-de"}})
	tag := mustCreateTerm(t, ctx, s, &repository.Label{Taxonomy: repository.LabelTag, Name: repository.Text{"en": "Blues"}, Slug: repository.Text{"en": "blues"}})
	find := func(q repository.LabelQuery) []int64 {
		t.Helper()
		ts, err := s.FindLabels(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		ids := []int64{}
		for _, x := range ts {
			if len(x.NameKeys) != 0 {
				t.Errorf("FindTerms returned engine-internal NameKeys %v", x.NameKeys)
			}
			ids = append(ids, x.ID)
		}
		return ids
	}
	cases := []struct {
		name string
		q    repository.LabelQuery
		want []int64
	}{
		{"name category", repository.LabelQuery{Taxonomy: repository.LabelCategory, Name: "BLUES", NameLang: "en"}, []int64{cat.ID}},
		{"name tag", repository.LabelQuery{Taxonomy: repository.LabelTag, Name: "blues", NameLang: "en"}, []int64{tag.ID}},
		{"name de", repository.LabelQuery{Taxonomy: repository.LabelCategory, Name: "blues de", NameLang: "de"}, []int64{cat.ID}},
		{"slug category", repository.LabelQuery{Taxonomy: repository.LabelCategory, Slug: "blues", SlugLang: "en"}, []int64{cat.ID}},
		{"slug any taxonomy", repository.LabelQuery{Slug: "blues", SlugLang: "en"}, []int64{cat.ID, tag.ID}},
		{"slug and IDs", repository.LabelQuery{Slug: "blues", SlugLang: "en", IDs: []int64{tag.ID}}, []int64{tag.ID}},
		{"slug other language", repository.LabelQuery{Taxonomy: repository.LabelCategory, Slug: "blues", SlugLang: "de"}, []int64{}},
	}
	for _, c := range cases {
		if got := find(c.q); fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	if _, err := s.UpdateLabel(ctx, cat.ID, func(x *repository.Label) error {
		x.Name.Set("en", "Soul")
		x.Slug.Set("en", "soul")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		q    repository.LabelQuery
		want []int64
	}{
		{"old name", repository.LabelQuery{Taxonomy: repository.LabelCategory, Name: "Blues", NameLang: "en"}, []int64{}},
		{"new name", repository.LabelQuery{Taxonomy: repository.LabelCategory, Name: "soul", NameLang: "en"}, []int64{cat.ID}},
		{"old slug", repository.LabelQuery{Taxonomy: repository.LabelCategory, Slug: "blues", SlugLang: "en"}, []int64{}},
		{"new slug", repository.LabelQuery{Taxonomy: repository.LabelCategory, Slug: "soul", SlugLang: "en"}, []int64{cat.ID}},
	} {
		if got := find(c.q); fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("after rename, %s: %v, want %v", c.name, got, c.want)
		}
	}
}
