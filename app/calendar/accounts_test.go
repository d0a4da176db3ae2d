package calendar

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/calendar/eventcal/repository"
)

// dumpAccounts returns every user and token of the store as text.
func dumpAccounts(t *testing.T, st repository.Store) string {
	t.Helper()
	ctx := context.Background()
	users, err := st.ListUsers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := st.ListTokens(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, u := range users {
		fmt.Fprintf(&b, "user %+v\n", *u)
	}
	for _, tk := range tokens {
		fmt.Fprintf(&b, "token %+v\n", *tk)
	}
	return b.String()
}

// TestAccountCommandsRefuse sends user and token commands refused at each
// step the service checks (the fields, the caller, the record), on both
// stores: each answers the API error of its step, and the users and
// tokens are exactly as before; the admin cache is told nothing.
func TestAccountCommandsRefuse(t *testing.T) {
	ctx := context.Background()
	bad := func(name string) refusal { return refusal{400, "rest_invalid_param", name} }
	forbidden := refusal{403, "rest_forbidden", ""}
	role := func(r repository.Role) *repository.Role { return &r }
	yes := true
	dur := func(d time.Duration) *time.Duration { return &d }
	for engine, open := range openStores(t) {
		t.Run(engine, func(t *testing.T) {
			st := open(t)
			u := &repository.User{Login: "admin", Role: repository.RoleEditor, Created: time.Unix(1e9, 0).UTC()}
			if err := st.CreateUser(ctx, u); err != nil {
				t.Fatal(err)
			}
			changed := 0
			svc := NewAccounts(AccountsDeps{Store: st, Now: func() time.Time { return time.Unix(2e9, 0) }, AdminChanged: func() { changed++ }})
			if _, _, err := svc.CreateToken(ctx, admin, &TokenInput{User: u.ID}); err != nil {
				t.Fatal(err)
			}
			long := strings.Repeat("n", MaxTokenName+1)
			cases := []struct {
				name string
				run  func() error
				want refusal
			}{
				{"update with an unknown role", func() error {
					_, err := svc.UpdateUser(ctx, admin, u.ID, &UserInput{Role: role("owner")})
					return err
				}, bad("role")},
				{"role checked before the caller", func() error {
					_, err := svc.UpdateUser(ctx, editor, u.ID, &UserInput{Role: role("owner")})
					return err
				}, bad("role")},
				{"editor updates a user", func() error {
					_, err := svc.UpdateUser(ctx, editor, u.ID, &UserInput{Disabled: &yes})
					return err
				}, forbidden},
				{"anonymous updates a user", func() error {
					_, err := svc.UpdateUser(ctx, nil, u.ID, &UserInput{Disabled: &yes})
					return err
				}, refusal{401, "rest_forbidden", ""}},
				{"update an unknown user", func() error {
					_, err := svc.UpdateUser(ctx, admin, 999999, &UserInput{Disabled: &yes})
					return err
				}, refusal{404, "rest_user_invalid_id", ""}},
				{"create a user with a control character in the login", func() error {
					_, err := svc.CreateUser(ctx, admin, &NewUserInput{Login: "a\x1bb", Role: repository.RoleEditor})
					return err
				}, bad("login")},
				{"create a user with a login too long", func() error {
					_, err := svc.CreateUser(ctx, admin, &NewUserInput{Login: strings.Repeat("l", MaxLogin+1), Role: repository.RoleEditor})
					return err
				}, bad("login")},
				{"create a user with a blank login", func() error {
					_, err := svc.CreateUser(ctx, Operator, &NewUserInput{Login: "  ", Role: repository.RoleEditor})
					return err
				}, bad("login")},
				{"create a user with a role in capitals", func() error {
					_, err := svc.CreateUser(ctx, Operator, &NewUserInput{Login: "new", Role: "Admin"})
					return err
				}, bad("role")},
				{"create a user with an ID above the bound", func() error {
					_, err := svc.CreateUser(ctx, Operator, &NewUserInput{Login: "new", Role: repository.RoleEditor, ID: repository.MaxExplicitID + 1})
					return err
				}, bad("id")},
				{"an admin gives an ID", func() error {
					_, err := svc.CreateUser(ctx, admin, &NewUserInput{Login: "new", Role: repository.RoleEditor, ID: 50})
					return err
				}, forbidden},
				{"an admin stamps an origin", func() error {
					_, err := svc.CreateUser(ctx, admin, &NewUserInput{Login: "new", Role: repository.RoleEditor, Origin: &repository.Origin{Site: "s", ID: 1}})
					return err
				}, forbidden},
				{"an admin sets an e-mail", func() error {
					email := "x@example.org"
					_, err := svc.UpdateUser(ctx, admin, u.ID, &UserInput{Email: &email})
					return err
				}, forbidden},
				{"editor creates a user", func() error {
					_, err := svc.CreateUser(ctx, editor, &NewUserInput{Login: "new", Role: repository.RoleEditor})
					return err
				}, forbidden},
				{"anonymous creates a user", func() error {
					_, err := svc.CreateUser(ctx, nil, &NewUserInput{Login: "new", Role: repository.RoleEditor})
					return err
				}, refusal{401, "rest_forbidden", ""}},
				{"create a user with a taken login", func() error {
					_, err := svc.CreateUser(ctx, Operator, &NewUserInput{Login: " admin ", Role: repository.RoleEditor})
					return err
				}, refusal{400, "existing_user_login", ""}},
				{"create a user with a taken ID", func() error {
					_, err := svc.CreateUser(ctx, Operator, &NewUserInput{Login: "new", Role: repository.RoleEditor, ID: u.ID})
					return err
				}, refusal{400, "existing_user_id", ""}},
				{"token for user 0", func() error {
					_, _, err := svc.CreateToken(ctx, admin, &TokenInput{})
					return err
				}, bad("user")},
				{"token name too long", func() error {
					_, _, err := svc.CreateToken(ctx, admin, &TokenInput{User: u.ID, Name: &long})
					return err
				}, bad("name")},
				{"token lifetime too short", func() error {
					_, _, err := svc.CreateToken(ctx, admin, &TokenInput{User: u.ID, Lifetime: dur(59 * time.Second)})
					return err
				}, bad("expires_in")},
				{"token lifetime too long", func() error {
					_, _, err := svc.CreateToken(ctx, admin, &TokenInput{User: u.ID, Lifetime: dur(MaxTokenLifetime + time.Second)})
					return err
				}, bad("expires_in")},
				{"editor creates a token", func() error {
					_, _, err := svc.CreateToken(ctx, editor, &TokenInput{User: u.ID})
					return err
				}, forbidden},
				{"token for an unknown user", func() error {
					_, _, err := svc.CreateToken(ctx, admin, &TokenInput{User: 999999, UserSent: "999999"})
					return err
				}, bad("user")},
				{"editor revokes a token", func() error {
					_, err := svc.RevokeToken(ctx, editor, "0123456789abcdef")
					return err
				}, forbidden},
				{"revoke an unknown token", func() error {
					_, err := svc.RevokeToken(ctx, admin, "0123456789ABCDEF")
					return err
				}, refusal{404, "rest_token_invalid_id", ""}},
			}
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					before := dumpAccounts(t, st)
					checkRefusal(t, tc.run(), tc.want)
					if after := dumpAccounts(t, st); after != before {
						t.Errorf("a refused command changed the store:\nbefore:\n%s\nafter:\n%s", before, after)
					}
					if changed != 0 {
						t.Error("a refused command told the admin cache")
					}
				})
			}
			t.Run("accepted", func(t *testing.T) {
				got, err := svc.UpdateUser(ctx, admin, u.ID, &UserInput{Role: role(repository.RoleAdmin), Disabled: &yes})
				if err != nil {
					t.Fatal(err)
				}
				if got.Role != repository.RoleAdmin || !got.Disabled || changed != 1 {
					t.Errorf("got %+v, admin cache told %d times", got, changed)
				}
				name := "  ci  "
				tk, secret, err := svc.CreateToken(ctx, admin, &TokenInput{User: u.ID, Name: &name, Lifetime: dur(time.Hour)})
				if err != nil {
					t.Fatal(err)
				}
				if tk.Name != "ci" || tk.Hash != repository.HashToken(secret) || !tk.Expires.Equal(time.Unix(2e9, 0).Add(time.Hour)) {
					t.Errorf("token %+v", tk)
				}
				if _, err := st.TokenByHash(ctx, tk.Hash); err != nil {
					t.Errorf("token not stored: %v", err)
				}
				origin := &repository.Origin{Site: "https://wp.example", ID: 9, Hash: "h"}
				nu, err := svc.CreateUser(ctx, Operator, &NewUserInput{Login: " imported ", Role: repository.RoleAuthor, Email: "i@example.org", ID: 77, Origin: origin})
				if err != nil {
					t.Fatal(err)
				}
				if stored, err := st.GetUser(ctx, 77); err != nil || stored.Login != "imported" || stored.Role != repository.RoleAuthor ||
					stored.Email != "i@example.org" || stored.Origin == nil || *stored.Origin != *origin || !stored.Created.Equal(time.Unix(2e9, 0)) || nu.ID != 77 {
					t.Errorf("created %+v, stored %+v (%v)", nu, stored, err)
				}
				if nu, err := svc.CreateUser(ctx, admin, &NewUserInput{Login: "next", Role: repository.RoleEditor}); err != nil || nu.ID == 0 {
					t.Errorf("an admin creates a user: %+v, %v", nu, err)
				}
				id, err := svc.RevokeToken(ctx, admin, strings.ToUpper(tk.ID()))
				if err != nil || id != tk.ID() {
					t.Errorf("revoke: %q, %v", id, err)
				}
				if _, err := st.TokenByHash(ctx, tk.Hash); err == nil {
					t.Error("revoked token still stored")
				}
			})
		})
	}
}
