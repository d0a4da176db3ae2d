package mongo_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/repository/mongo"
	"github.com/calendar/eventcal/repository/mongo/mongotest"
)

// rereadTimeout bounds the re-reads of the cases whose re-reads all fail
// (WithRereadTimeoutForTest): they fail however long they are given.
const rereadTimeout = time.Second

// TestWriteFailuresDoNotLie loses the reply of each write command of each
// write path once (after the server applied it), or cuts the command
// before it is sent, and checks what the store answers and keeps: a write
// that landed is answered as done and keeps its slugs, one that did not is
// answered with an error and leaves nothing, and no write happens twice.
func TestWriteFailuresDoNotLie(t *testing.T) {
	t.Parallel()
	uri := mongotest.Start(t)
	type env struct {
		s    *mongo.Store
		post *repository.Record
		term *repository.Label
	}
	category := func(slug string) *repository.Label {
		return &repository.Label{Taxonomy: repository.LabelCategory, Name: repository.Text{"en": slug}, Slug: repository.Text{"en": slug}}
	}
	postBySlug := func(t *testing.T, ctx context.Context, e *env, slug string) int64 {
		t.Helper()
		p, err := e.s.GetRecordBySlug(ctx, repository.KindEvent, "en", slug)
		if errors.Is(err, repository.ErrNotFound) {
			return 0
		}
		if err != nil {
			t.Fatalf("GetPostBySlug(%q): %v", slug, err)
		}
		return p.ID
	}
	termBySlug := func(t *testing.T, ctx context.Context, e *env, slug string) []*repository.Label {
		t.Helper()
		ts, err := e.s.FindLabels(ctx, repository.LabelQuery{Taxonomy: repository.LabelCategory, Slug: slug, SlugLang: "en"})
		if err != nil {
			t.Fatalf("FindTerms(%q): %v", slug, err)
		}
		return ts
	}
	countPosts := func(t *testing.T, ctx context.Context, e *env) int {
		t.Helper()
		n, err := e.s.CountRecords(ctx, repository.RecordQuery{Kind: repository.KindEvent})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	reservations := func(t *testing.T, ctx context.Context, e *env) int64 {
		t.Helper()
		n, err := mongo.SlugReservationsForTest(ctx, e.s)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}

	// The set-ups: the event (the category, the user) a case's write
	// changes, stored.
	storedEvent := func(slug string) func(t *testing.T, ctx context.Context, e *env) {
		return func(t *testing.T, ctx context.Context, e *env) {
			e.post = event(slug)
			if err := e.s.CreateRecord(ctx, e.post); err != nil {
				t.Fatal(err)
			}
		}
	}
	storedCategory := func(slug string) func(t *testing.T, ctx context.Context, e *env) {
		return func(t *testing.T, ctx context.Context, e *env) {
			e.term = category(slug)
			if err := e.s.CreateLabel(ctx, e.term); err != nil {
				t.Fatal(err)
			}
		}
	}
	storedUser := func(t *testing.T, ctx context.Context, e *env) {
		if err := e.s.CreateUser(ctx, &repository.User{ID: 5, Login: "ana", Role: repository.RoleEditor}); err != nil {
			t.Fatal(err)
		}
	}

	cases := []struct {
		name  string
		setup func(t *testing.T, ctx context.Context, e *env)
		fault mongotest.Fault
		// more are further faults, applied until the write returns.
		more    []mongotest.Fault
		write   func(ctx context.Context, e *env) error
		wantErr bool
		check   func(t *testing.T, ctx context.Context, e *env)
	}{
		{
			name:  "create post: insert reply lost",
			fault: mongotest.Fault{Command: "insert", Collection: "posts", Action: mongotest.DropReply},
			write: func(ctx context.Context, e *env) error { e.post = event("ghost"); return e.s.CreateRecord(ctx, e.post) },
			check: func(t *testing.T, ctx context.Context, e *env) {
				if id := postBySlug(t, ctx, e, "ghost"); id != e.post.ID {
					t.Errorf("by slug: post %d, want %d", id, e.post.ID)
				}
				if n := countPosts(t, ctx, e); n != 1 {
					t.Errorf("%d events stored, want 1", n)
				}
				// The slug stays taken: a second post gets another one.
				p := event("ghost")
				if err := e.s.CreateRecord(ctx, p); err != nil || p.Slug["en"] != "ghost-2" {
					t.Errorf("second post: slug %q, %v; want ghost-2", p.Slug["en"], err)
				}
			},
		},
		{
			name:  "create post: slug reservation reply lost",
			fault: mongotest.Fault{Command: "insert", Collection: "slugs", Action: mongotest.DropReply},
			write: func(ctx context.Context, e *env) error { e.post = event("ghost"); return e.s.CreateRecord(ctx, e.post) },
			check: func(t *testing.T, ctx context.Context, e *env) {
				if id := postBySlug(t, ctx, e, "ghost"); id != e.post.ID || e.post.Slug["en"] != "ghost" {
					t.Errorf("by slug: post %d with slug %q, want %d with ghost", id, e.post.Slug["en"], e.post.ID)
				}
				if n := reservations(t, ctx, e); n != 1 {
					t.Errorf("%d slug reservations, want 1", n)
				}
			},
		},
		{
			// The insert landed, its reply was lost and every re-read
			// fails too: the outcome is unknown, so the create answers
			// an error and undoes nothing (the stored post keeps its
			// slug; no ghost, no duplicate slug).
			name:    "create post: reply lost, re-reads fail",
			fault:   mongotest.Fault{Command: "insert", Collection: "posts", Action: mongotest.DropReply},
			more:    []mongotest.Fault{{Command: "find", Collection: "posts", Action: mongotest.Cut}},
			write:   func(ctx context.Context, e *env) error { e.post = event("ghost"); return e.s.CreateRecord(ctx, e.post) },
			wantErr: true,
			check: func(t *testing.T, ctx context.Context, e *env) {
				if n := countPosts(t, ctx, e); n != 1 {
					t.Fatalf("%d events stored, want the one that landed", n)
				}
				if id := postBySlug(t, ctx, e, "ghost"); id == 0 {
					t.Error("the stored post lost its slug")
				}
				p := event("ghost")
				if err := e.s.CreateRecord(ctx, p); err != nil || p.Slug["en"] != "ghost-2" {
					t.Errorf("second post: slug %q, %v; want ghost-2", p.Slug["en"], err)
				}
			},
		},
		{
			name:    "create post: insert cut before the server",
			fault:   mongotest.Fault{Command: "insert", Collection: "posts", Action: mongotest.Cut},
			write:   func(ctx context.Context, e *env) error { e.post = event("ghost"); return e.s.CreateRecord(ctx, e.post) },
			wantErr: true,
			check: func(t *testing.T, ctx context.Context, e *env) {
				if n := countPosts(t, ctx, e); n != 0 {
					t.Errorf("%d events stored after a refused create, want 0", n)
				}
				if n := reservations(t, ctx, e); n != 0 {
					t.Errorf("%d slug reservations left, want 0", n)
				}
			},
		},
		{
			name:  "update post: replace reply lost",
			setup: storedEvent("before"),
			fault: mongotest.Fault{Command: "update", Collection: "posts", Action: mongotest.DropReply},
			write: func(ctx context.Context, e *env) error {
				_, err := e.s.UpdateRecord(ctx, e.post.ID, func(p *repository.Record) error { p.Slug = repository.Text{"en": "after"}; return nil })
				return err
			},
			check: func(t *testing.T, ctx context.Context, e *env) {
				p, err := e.s.GetRecord(ctx, e.post.ID)
				if err != nil || p.Revision != 2 || p.Slug["en"] != "after" {
					t.Fatalf("GetPost = %+v, %v; want revision 2 with slug after", p, err)
				}
				if id := postBySlug(t, ctx, e, "after"); id != e.post.ID {
					t.Errorf("by new slug: post %d, want %d", id, e.post.ID)
				}
				if n := reservations(t, ctx, e); n != 1 {
					t.Errorf("%d slug reservations, want 1 (the old one released)", n)
				}
			},
		},
		{
			name:  "delete post: reply lost",
			setup: storedEvent("gone"),
			fault: mongotest.Fault{Command: "delete", Collection: "posts", Action: mongotest.DropReply},
			write: func(ctx context.Context, e *env) error { return e.s.DeleteRecord(ctx, e.post.ID) },
			check: func(t *testing.T, ctx context.Context, e *env) {
				if _, err := e.s.GetRecord(ctx, e.post.ID); !errors.Is(err, repository.ErrNotFound) {
					t.Errorf("GetPost after delete: %v, want ErrNotFound", err)
				}
				if n := reservations(t, ctx, e); n != 0 {
					t.Errorf("%d slug reservations left, want 0", n)
				}
			},
		},
		{
			name:  "create term: insert reply lost",
			fault: mongotest.Fault{Command: "insert", Collection: "terms", Action: mongotest.DropReply},
			write: func(ctx context.Context, e *env) error {
				e.term = category("music")
				return e.s.CreateLabel(ctx, e.term)
			},
			check: func(t *testing.T, ctx context.Context, e *env) {
				if ts := termBySlug(t, ctx, e, "music"); len(ts) != 1 || ts[0].ID != e.term.ID {
					t.Errorf("by slug: %d terms, want exactly %d", len(ts), e.term.ID)
				}
				c := category("music")
				if err := e.s.CreateLabel(ctx, c); err != nil || c.Slug["en"] != "music-2" {
					t.Errorf("second term: slug %q, %v; want music-2", c.Slug["en"], err)
				}
			},
		},
		{
			name:  "update term: replace reply lost",
			setup: storedCategory("jazz"),
			fault: mongotest.Fault{Command: "update", Collection: "terms", Action: mongotest.DropReply},
			write: func(ctx context.Context, e *env) error {
				_, err := e.s.UpdateLabel(ctx, e.term.ID, func(c *repository.Label) error { c.Slug = repository.Text{"en": "blues"}; return nil })
				return err
			},
			check: func(t *testing.T, ctx context.Context, e *env) {
				c, err := e.s.GetLabel(ctx, e.term.ID)
				if err != nil || c.Revision != 2 || c.Slug["en"] != "blues" {
					t.Fatalf("GetTerm = %+v, %v; want revision 2 with slug blues", c, err)
				}
				if ts := termBySlug(t, ctx, e, "blues"); len(ts) != 1 {
					t.Errorf("by new slug: %d terms, want 1", len(ts))
				}
			},
		},
		{
			name:  "delete term: reply lost",
			setup: storedCategory("gone"),
			fault: mongotest.Fault{Command: "delete", Collection: "terms", Action: mongotest.DropReply},
			write: func(ctx context.Context, e *env) error { return e.s.DeleteLabel(ctx, e.term.ID) },
			check: func(t *testing.T, ctx context.Context, e *env) {
				if _, err := e.s.GetLabel(ctx, e.term.ID); !errors.Is(err, repository.ErrNotFound) {
					t.Errorf("GetTerm after delete: %v, want ErrNotFound", err)
				}
			},
		},
		{
			name:  "create user: insert reply lost",
			fault: mongotest.Fault{Command: "insert", Collection: "users", Action: mongotest.DropReply},
			write: func(ctx context.Context, e *env) error {
				return e.s.CreateUser(ctx, &repository.User{Login: "ana", Role: repository.RoleEditor})
			},
			check: func(t *testing.T, ctx context.Context, e *env) {
				us, err := e.s.ListUsers(ctx)
				if err != nil || len(us) != 1 || us[0].Login != "ana" {
					t.Errorf("ListUsers = %v, %v; want ana once", us, err)
				}
			},
		},
		{
			name:  "create token: insert reply lost",
			setup: storedUser,
			fault: mongotest.Fault{Command: "insert", Collection: "tokens", Action: mongotest.DropReply},
			write: func(ctx context.Context, e *env) error {
				return e.s.CreateToken(ctx, &repository.Token{Hash: "h1", UserID: 5, Name: "ci"})
			},
			check: func(t *testing.T, ctx context.Context, e *env) {
				ts, err := e.s.ListTokens(ctx, 5)
				if err != nil || len(ts) != 1 {
					t.Errorf("ListTokens = %v, %v; want one", ts, err)
				}
			},
		},
		{
			name:  "update user: reply lost",
			setup: storedUser,
			fault: mongotest.Fault{Command: "update", Collection: "users", Action: mongotest.DropReply},
			write: func(ctx context.Context, e *env) error {
				return e.s.UpdateUser(ctx, &repository.User{ID: 5, Role: repository.RoleEditor, Disabled: true})
			},
			check: func(t *testing.T, ctx context.Context, e *env) {
				u, err := e.s.GetUser(ctx, 5)
				if err != nil || !u.Disabled {
					t.Errorf("GetUser = %+v, %v; want disabled", u, err)
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Each case has its own proxy and database; most of its time
			// is the driver's wait before it checks a server again after
			// the lost reply (heartbeat), so the cases wait together.
			t.Parallel()
			ctx := t.Context()
			p, puri := mongotest.ProxyURI(t, uri)
			var opts []mongo.Option
			if len(tc.more) > 0 {
				// The further faults fail every re-read until the write
				// returns: bound them by rereadTimeout, not the 10 s
				// cleanup bound.
				opts = append(opts, mongo.WithRereadTimeoutForTest(rereadTimeout))
			}
			s, err := mongo.Open(ctx, puri, mongotest.Database(t), opts...)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close(context.Background()) })
			e := &env{s: s}
			if tc.setup != nil {
				tc.setup(t, ctx, e)
			}
			f := tc.fault
			f.Times = 1
			p.Inject(f)
			for _, m := range tc.more {
				p.Inject(m)
			}
			err = tc.write(ctx, e)
			if n := p.Applied(); n < 1+len(tc.more) || (len(tc.more) == 0 && n != 1) {
				t.Fatalf("the faults were applied %d times, want each at least once (the first once)", n)
			}
			p.Reset()
			if (err != nil) != tc.wantErr {
				t.Fatalf("write: error %v, want error %v", err, tc.wantErr)
			}
			tc.check(t, ctx, e)
		})
	}
}
