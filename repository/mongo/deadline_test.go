package mongo_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	driverevent "go.mongodb.org/mongo-driver/v2/event"

	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/repository/mongo"
	"github.com/calendar/eventcal/repository/mongo/mongotest"
)

// timeLimits records, per command sent, its time limit: the server-side
// one (maxTimeMS) when it carried one, else the time left until the
// deadline of the context the driver sent it with (its client-side limit),
// in milliseconds; -1 without either. It also counts the commands that
// succeeded.
type timeLimits struct {
	mu        sync.Mutex
	sent      []string
	limit     []int64
	succeeded int
}

func (l *timeLimits) monitor() *driverevent.CommandMonitor {
	return &driverevent.CommandMonitor{
		Started: func(ctx context.Context, e *driverevent.CommandStartedEvent) {
			ms := int64(-1)
			if v, err := e.Command.LookupErr("maxTimeMS"); err == nil {
				if n, ok := v.AsInt64OK(); ok {
					ms = n
				}
			} else if dl, ok := ctx.Deadline(); ok {
				ms = max(1, time.Until(dl).Milliseconds())
			}
			l.mu.Lock()
			l.sent = append(l.sent, e.CommandName)
			l.limit = append(l.limit, ms)
			l.mu.Unlock()
		},
		Succeeded: func(context.Context, *driverevent.CommandSucceededEvent) {
			l.mu.Lock()
			l.succeeded++
			l.mu.Unlock()
		},
	}
}

// take returns the commands, their limits and the number that succeeded
// since the last take.
func (l *timeLimits) take() ([]string, []int64, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	sent, limit, ok := l.sent, l.limit, l.succeeded
	l.sent, l.limit, l.succeeded = nil, nil, 0
	return sent, limit, ok
}

// storeCalls are store calls of the request path, each given the context
// it runs with and the ID of an existing event.
var storeCalls = []struct {
	name string
	call func(ctx context.Context, s repository.Store, id int64) error
}{
	{"CreatePost", func(ctx context.Context, s repository.Store, _ int64) error {
		return s.CreateRecord(ctx, &repository.Record{Kind: repository.KindOrganizer, Status: repository.StatusPublish,
			Title: repository.Text{"en": "Org"}, Slug: repository.Text{"en": "org"}, Organizer: &repository.OrganizerFields{}})
	}},
	{"GetPost", func(ctx context.Context, s repository.Store, id int64) error {
		_, err := s.GetRecord(ctx, id)
		return err
	}},
	{"GetPostBySlug", func(ctx context.Context, s repository.Store, _ int64) error {
		_, err := s.GetRecordBySlug(ctx, repository.KindOrganizer, "en", "first")
		return err
	}},
	{"FindPosts", func(ctx context.Context, s repository.Store, _ int64) error {
		_, err := s.FindRecords(ctx, repository.RecordQuery{Kind: repository.KindOrganizer, Limit: 10})
		return err
	}},
	{"UpdatePost", func(ctx context.Context, s repository.Store, id int64) error {
		_, err := s.UpdateRecord(ctx, id, func(p *repository.Record) error { p.Title.Set("en", "Changed"); return nil })
		return err
	}},
	{"PendingMarks", func(ctx context.Context, s repository.Store, _ int64) error {
		_, err := s.PendingMarks(ctx, 10)
		return err
	}},
	{"DueMarks", func(ctx context.Context, s repository.Store, _ int64) error {
		_, err := s.DueMarks(ctx, time.Now(), 10)
		return err
	}},
	{"FailingMarks", func(ctx context.Context, s repository.Store, _ int64) error {
		_, _, err := s.FailingMarks(ctx, 10)
		return err
	}},
	{"FailMark", func(ctx context.Context, s repository.Store, id int64) error {
		return s.FailMark(ctx, repository.IndexMark{Kind: repository.MarkPost, ID: id, Seq: 1, Attempts: 1, LastError: "x", NextAttempt: time.Now()})
	}},
	{"Exclusive", func(ctx context.Context, s repository.Store, _ int64) error {
		return s.Exclusive(ctx, "k", func(context.Context) error { return nil })
	}},
	{"GetUserByLogin", func(ctx context.Context, s repository.Store, _ int64) error {
		_, err := s.GetUserByLogin(ctx, "nobody")
		if errors.Is(err, repository.ErrNotFound) {
			return nil
		}
		return err
	}},
}

// TestStoreCallsHaveDeadlines: a store call made with a context that has
// no deadline (as every request's is) still sends each command with a
// time limit, WithTimeout's, on the client and to the server (maxTimeMS):
// a server that stops answering, or a command the server cannot finish,
// fails the call with an error (503) in place of holding the request.
func TestStoreCallsHaveDeadlines(t *testing.T) {
	t.Parallel()
	uri := mongotest.Start(t)
	limits := &timeLimits{}
	const timeout = 7 * time.Second
	s, first := monitoredStore(t, uri, limits, mongo.WithTimeout(timeout))
	limits.take()
	for _, tc := range storeCalls {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.call(context.Background(), s, first.ID); err != nil {
				t.Fatal(err)
			}
			sent, limit, _ := limits.take()
			if len(sent) == 0 {
				t.Fatal("no command sent")
			}
			for i, name := range sent {
				if limit[i] <= 0 || limit[i] > timeout.Milliseconds() {
					t.Errorf("command %d (%s) of %v went with a time limit of %d ms, want 1..%d", i, name, sent, limit[i], timeout.Milliseconds())
				}
			}
		})
	}
}

// monitoredStore opens a store on a new database of uri whose commands
// limits sees, waits for its indexes (their commands are not the calls')
// and creates one organizer, which it returns.
func monitoredStore(t *testing.T, uri string, limits *timeLimits, opts ...mongo.Option) (*mongo.Store, *repository.Record) {
	t.Helper()
	s, err := mongo.Open(t.Context(), uri, mongotest.Database(t), append([]mongo.Option{mongo.WithCommandMonitor(limits.monitor())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	if err := s.WaitIndexes(t.Context()); err != nil { // its commands are not the calls'
		t.Fatal(err)
	}
	first := &repository.Record{Kind: repository.KindOrganizer, Status: repository.StatusPublish,
		Title: repository.Text{"en": "First"}, Slug: repository.Text{"en": "first"}, Organizer: &repository.OrganizerFields{}}
	if err := s.CreateRecord(t.Context(), first); err != nil {
		t.Fatal(err)
	}
	return s, first
}

// TestStoreCallsOnDoneContexts: a store call on a context that is already
// cancelled or past its deadline does no work (commands are counted, not
// timed) and fails at once with the context's error (never ErrNotFound or ErrDuplicate, so the API answers
// 503 store_unavailable; app's TestStoreErrorStatuses).
func TestStoreCallsOnDoneContexts(t *testing.T) {
	t.Parallel()
	uri := mongotest.Start(t)
	limits := &timeLimits{}
	s, first := monitoredStore(t, uri, limits)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel2()
	for _, done := range []struct {
		name string
		ctx  context.Context
		want error
	}{
		{"cancelled", cancelled, context.Canceled},
		{"expired", expired, context.DeadlineExceeded},
	} {
		for _, tc := range storeCalls {
			t.Run(fmt.Sprintf("%s/%s", done.name, tc.name), func(t *testing.T) {
				limits.take()
				err := tc.call(done.ctx, s, first.ID)
				if !errors.Is(err, done.want) {
					t.Errorf("error %v, want %v", err, done.want)
				}
				if errors.Is(err, repository.ErrNotFound) || errors.Is(err, repository.ErrDuplicate) {
					t.Errorf("error %v would not answer 503", err)
				}
				// The driver may start the one command the call begins
				// with and fail it; nothing more (no retries, no lock
				// waits), and nothing the server carried out.
				if sent, _, ok := limits.take(); len(sent) > 1 || ok > 0 {
					t.Errorf("on a done context: started %v, %d succeeded; want at most one, failed", sent, ok)
				}
			})
		}
	}
}
