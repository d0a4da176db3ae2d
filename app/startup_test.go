package app

import (
	"context"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/config/testdeadline"
	"github.com/calendar/eventcal/config/testsupport"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/repository/sqlite"
)

// noAdminWarning is a phrase of the warning warnNoAdmin logs.
const noAdminWarning = "no admin can log in"

// TestWarnNoAdmin: at start, a warning says how to create an admin when
// ADMIN_TOKEN is unset and no enabled admin user holds a valid token.
func TestWarnNoAdmin(t *testing.T) {
	t.Parallel()
	now := time.Date(2027, 1, 1, 12, 0, 0, 0, time.UTC)
	type user struct {
		role     repository.Role
		disabled bool
		expires  []time.Time // one token each; nil: no token
	}
	tests := []struct {
		name       string
		adminToken string
		users      []user
		warn       bool
	}{
		{"empty store", "", nil, true},
		{"empty store, ADMIN_TOKEN set", "s3cret", nil, false},
		{"admin without a token", "", []user{{role: repository.RoleAdmin}}, true},
		{"admin with an expired token", "", []user{{role: repository.RoleAdmin, expires: []time.Time{now.Add(-time.Minute)}}}, true},
		{"disabled admin with a token", "", []user{{role: repository.RoleAdmin, disabled: true, expires: []time.Time{{}}}}, true},
		{"editor with a token", "", []user{{role: repository.RoleEditor, expires: []time.Time{{}}}}, true},
		{"admin with a token", "", []user{{role: repository.RoleEditor, expires: []time.Time{{}}}, {role: repository.RoleAdmin, expires: []time.Time{{}}}}, false},
		{"admin with an expired and a valid token", "", []user{{role: repository.RoleAdmin, expires: []time.Time{now.Add(-time.Hour), now.Add(time.Hour)}}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "calendar.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { store.Close(ctx) })
			for i, u := range tt.users {
				ru := &repository.User{Login: "u" + string(rune('a'+i)), Role: u.role, Disabled: u.disabled, Created: now}
				if err := store.CreateUser(ctx, ru); err != nil {
					t.Fatal(err)
				}
				for j, exp := range u.expires {
					tok := &repository.Token{Hash: repository.HashToken(ru.Login + string(rune('0'+j))), UserID: ru.ID, Created: now, Expires: exp}
					if err := store.CreateToken(ctx, tok); err != nil {
						t.Fatal(err)
					}
				}
			}
			cfg := config.Default()
			cfg.AdminToken = tt.adminToken
			var logs testsupport.SyncBuffer
			warnNoAdmin(ctx, cfg, store, cfg.NewLogger(&logs), now)
			out := logs.String()
			if got := strings.Contains(out, noAdminWarning); got != tt.warn {
				t.Fatalf("warned %v, want %v:\n%s", got, tt.warn, out)
			}
			if tt.warn && (!strings.Contains(out, "level=WARN") || !strings.Contains(out, "user add --login alice --role admin") ||
				!strings.Contains(out, "token create --login alice") || !strings.Contains(out, "ADMIN_TOKEN")) {
				t.Errorf("the warning does not say how to create an admin:\n%s", out)
			}
		})
	}
}

// TestInterruptShutsDownIdleServer: after SIGINT (Ctrl-C) the drain ends
// as soon as no connection is open, however long DRAIN_DELAY is: an idle
// development server stops at once; one with a connection open keeps
// serving until that connection closes. serve also warned at start that
// no admin can log in.
func TestInterruptShutsDownIdleServer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		hold bool
	}{
		{"no connection", false},
		{"a connection open", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// DRAIN_DELAY and SHUTDOWN_TIMEOUT are far longer than any
			// test: only the end of the last connection can end the drain.
			env := map[string]string{"DATA_DIR": t.TempDir(), "LISTEN_ADDR": "127.0.0.1:0", "DRAIN_DELAY": "1h", "SHUTDOWN_TIMEOUT": "1h"}
			cfg, err := config.Load(func(k string) string { return env[k] })
			if err != nil {
				t.Fatal(err)
			}
			var logs testsupport.SyncBuffer
			ctx, interrupt := context.WithCancelCause(context.Background())
			defer interrupt(nil)
			addr, done := serveInBackground(t, ctx, cfg, &logs)
			if !strings.Contains(logs.String(), noAdminWarning) {
				t.Errorf("no warning that no admin can log in:\n%s", logs.String())
			}
			client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: testdeadline.Timeout(t)}
			var held net.Conn
			if tc.hold {
				if held, err = net.Dial("tcp", addr); err != nil {
					t.Fatal(err)
				}
				defer held.Close()
				// A request on a connection opened after it proves the
				// server has accepted (and so counts) the held one: it
				// accepts in order.
				resp, err := client.Get("http://" + addr + "/readyz")
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
			}
			interrupt(errInterrupted)
			if tc.hold {
				// Still serving, on a new connection, once draining.
				deadline := testdeadline.Of(t)
				for {
					resp, err := client.Get("http://" + addr + "/readyz")
					if err != nil {
						t.Fatalf("/readyz while draining: %v\n%s", err, logs.String())
					}
					resp.Body.Close()
					if resp.StatusCode == http.StatusServiceUnavailable {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("/readyz never answered 503\n%s", logs.String())
					}
					time.Sleep(10 * time.Millisecond) // poll interval
				}
				select {
				case err := <-done:
					t.Fatalf("serve ended with a connection open: %v\n%s", err, logs.String())
				default:
				}
				held.Close()
			}
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("serve: %v\n%s", err, logs.String())
				}
			case <-testdeadline.After(t):
				t.Fatalf("the drain did not end when no connection was left\n%s", logs.String())
			}
			if !strings.Contains(logs.String(), "interrupted with no connection open") {
				t.Errorf("the log does not say why the drain ended:\n%s", logs.String())
			}
		})
	}
}
