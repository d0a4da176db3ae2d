package calendar_test

import (
	"context"
	"testing"
	"time"

	"github.com/calendar/eventcal/app/calendar"
	"github.com/calendar/eventcal/repository"
)

// TestLoads: each kind of item a load writes through calendar.Loads is
// created under its ID, left alone when given again as stored (its times
// given to the nanosecond, the store's to the second, count as the
// same), and replaced when given otherwise, the store then holding it as
// given.
func TestLoads(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 20, 9, 30, 0, 0, time.UTC)
	fine := at.Add(123456789 * time.Nanosecond)
	tests := []struct {
		name string
		// write writes the item of version v (0: as first created; 1:
		// the same with finer times; 2: changed).
		write func(ctx context.Context, l *calendar.Loads, v int) (calendar.Outcome, error)
		// read returns the stored item's changed field.
		read func(ctx context.Context, st repository.Store) (string, error)
		want string
	}{
		{"user", func(ctx context.Context, l *calendar.Loads, v int) (calendar.Outcome, error) {
			u := &repository.User{ID: 7, Login: "ann", Role: repository.RoleAuthor, Created: []time.Time{at, fine, at}[v]}
			if v == 2 {
				u.Role = repository.RoleEditor
			}
			return l.User(ctx, u)
		}, func(ctx context.Context, st repository.Store) (string, error) {
			u, err := st.GetUser(ctx, 7)
			if err != nil {
				return "", err
			}
			return string(u.Role), nil
		}, "editor"},
		{"token", func(ctx context.Context, l *calendar.Loads, v int) (calendar.Outcome, error) {
			if v == 0 {
				if _, err := l.User(ctx, &repository.User{ID: 8, Login: "bob", Role: repository.RoleAdmin, Created: at}); err != nil {
					return 0, err
				}
			}
			tok := &repository.Token{Hash: repository.HashToken("s"), UserID: 8, Name: "ci", Created: []time.Time{at, fine, at}[v]}
			if v == 2 {
				tok.Name = "laptop"
			}
			return l.Token(ctx, tok)
		}, func(ctx context.Context, st repository.Store) (string, error) {
			tok, err := st.TokenByHash(ctx, repository.HashToken("s"))
			if err != nil {
				return "", err
			}
			return tok.Name, nil
		}, "laptop"},
		{"webhook", func(ctx context.Context, l *calendar.Loads, v int) (calendar.Outcome, error) {
			w := &repository.Webhook{ID: 9, URL: "https://hooks.example.org/", Events: []string{"*"}, Secret: "whsec_YQ==", Active: true,
				Created: []time.Time{at, fine, at}[v], Updated: at, Revision: 4}
			if v == 2 {
				w.Secret = "whsec_Yg=="
			}
			return l.Webhook(ctx, w)
		}, func(ctx context.Context, st repository.Store) (string, error) {
			w, err := st.GetWebhook(ctx, 9)
			if err != nil {
				return "", err
			}
			return w.Secret, nil
		}, "whsec_Yg=="},
		{"source and run", func(ctx context.Context, l *calendar.Loads, v int) (calendar.Outcome, error) {
			s := &repository.Source{ID: 10, URL: "https://feeds.example.org/a.ics", Format: repository.SourceICS, Name: "A",
				Status: repository.StatusDraft, OnRemoved: repository.OnRemovedKeep, Created: []time.Time{at, fine, at}[v], Updated: at, Revision: 3}
			if _, err := l.Source(ctx, s); err != nil {
				return 0, err
			}
			r := &repository.SourceRun{ID: 11, SourceID: 10, Status: repository.RunSucceeded, Trigger: "cli", Started: []time.Time{at, fine, at}[v]}
			if v == 2 {
				r.Created = 5
			}
			return l.SourceRun(ctx, r)
		}, func(ctx context.Context, st repository.Store) (string, error) {
			runs, err := st.ListSourceRuns(ctx, 10, 0)
			if err != nil || len(runs) != 1 {
				return "", err
			}
			return string(rune('0' + runs[0].Created)), nil
		}, "5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, st := newService(t)
			l := calendar.NewLoads(st)
			ctx := t.Context()
			for v, want := range []calendar.Outcome{calendar.Created, calendar.Unchanged, calendar.Replaced, calendar.Unchanged} {
				got, err := tt.write(ctx, l, min(v, 2))
				if err != nil {
					t.Fatalf("write %d: %v", v, err)
				}
				if got != want {
					t.Errorf("write %d: outcome %d, want %d", v, got, want)
				}
			}
			if got, err := tt.read(ctx, st); err != nil || got != tt.want {
				t.Errorf("stored %q (%v), want %q", got, err, tt.want)
			}
		})
	}
}
