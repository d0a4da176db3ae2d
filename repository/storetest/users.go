package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/calendar/eventcal/repository"
)

var userTests = []storeTest{
	{"CreateAndGet", testUsers},
	{"DuplicateLogin", testUserDuplicate},
	{"Tokens", testTokens},
}

func testUsers(t *testing.T, ctx context.Context, s repository.Store) {
	var users []*repository.User
	for i, role := range repository.Roles {
		u := &repository.User{
			Login:   "user-" + string(role),
			Role:    role,
			Created: baseTime.Add(time.Duration(i) * time.Hour),
		}
		if err := s.CreateUser(ctx, u); err != nil {
			t.Fatalf("CreateUser(%s): %v", u.Login, err)
		}
		users = append(users, u)
	}
	ids := make([]int64, len(users))
	for i, u := range users {
		ids[i] = u.ID
	}
	checkDistinct(t, "user IDs", ids, 0)
	for _, u := range users {
		got, err := s.GetUser(ctx, u.ID)
		if err != nil {
			t.Fatalf("GetUser(%d): %v", u.ID, err)
		}
		checkUser(t, "GetUser", u, got)
		got, err = s.GetUserByLogin(ctx, u.Login)
		if err != nil {
			t.Fatalf("GetUserByLogin(%s): %v", u.Login, err)
		}
		checkUser(t, "GetUserByLogin", u, got)
	}
	_, err := s.GetUser(ctx, ids[len(ids)-1]+1000)
	wantNotFound(t, "GetUser(missing)", err)
	_, err = s.GetUserByLogin(ctx, "nobody")
	wantNotFound(t, "GetUserByLogin(missing)", err)
	_, err = s.GetUserByLogin(ctx, "user-")
	wantNotFound(t, "GetUserByLogin(prefix)", err)
}

func testUserDuplicate(t *testing.T, ctx context.Context, s repository.Store) {
	first := &repository.User{Login: "alice", Role: repository.RoleEditor, Created: baseTime}
	if err := s.CreateUser(ctx, first); err != nil {
		t.Fatalf("CreateUser: %v", err)
	}
	dup := &repository.User{Login: "alice", Role: repository.RoleAdmin, Created: baseTime}
	if err := s.CreateUser(ctx, dup); !errors.Is(err, repository.ErrDuplicate) {
		t.Errorf("CreateUser(duplicate login) error %v, want ErrDuplicate", err)
	}
	got, err := s.GetUserByLogin(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	checkUser(t, "user after a rejected duplicate", first, got)
	// The failed create did not break the store.
	bob := &repository.User{Login: "bob", Role: repository.RoleAuthor, Created: baseTime}
	if err := s.CreateUser(ctx, bob); err != nil {
		t.Fatalf("CreateUser after a duplicate: %v", err)
	}
	if bob.ID == first.ID {
		t.Errorf("bob got alice's ID %d", bob.ID)
	}
}

func testTokens(t *testing.T, ctx context.Context, s repository.Store) {
	alice := &repository.User{Login: "alice", Role: repository.RoleAdmin, Created: baseTime}
	bob := &repository.User{Login: "bob", Role: repository.RoleContributor, Created: baseTime}
	for _, u := range []*repository.User{alice, bob} {
		if err := s.CreateUser(ctx, u); err != nil {
			t.Fatalf("CreateUser: %v", err)
		}
	}
	tokens := []struct {
		hash string
		user *repository.User
	}{
		{"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", alice},
		{"60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752", alice},
		{"fd61a03af4f77d870fc21e05e7e80678095c92d808cfb3b5c279ee04c74aca13", bob},
	}
	for _, tk := range tokens {
		if err := s.CreateToken(ctx, &repository.Token{Hash: tk.hash, UserID: tk.user.ID, Created: baseTime}); err != nil {
			t.Fatalf("CreateToken: %v", err)
		}
	}
	for _, tk := range tokens {
		got, err := s.UserByTokenHash(ctx, tk.hash)
		if err != nil {
			t.Errorf("UserByTokenHash(%s): %v", tk.hash[:8], err)
			continue
		}
		checkUser(t, "UserByTokenHash", tk.user, got)
	}
	_, err := s.UserByTokenHash(ctx, "0000000000000000000000000000000000000000000000000000000000000000")
	wantNotFound(t, "UserByTokenHash(unknown)", err)
	_, err = s.UserByTokenHash(ctx, "")
	wantNotFound(t, "UserByTokenHash(empty)", err)
}
