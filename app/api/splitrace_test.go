package api_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/config/testdeadline"
	"github.com/calendar/eventcal/repository"
)

// splitRaceStore holds the first creation of a child of series parent
// until a second split of that series has got as far as the first: it has
// looked for the children of the series (a split without a lock, which
// then finds none) or asked for the split's lock (a split with one, which
// then waits for the first). Both splits have then read the series before
// either changed it, whatever the scheduling.
type splitRaceStore struct {
	repository.Store
	parent  int64
	timeout context.Context

	mu       sync.Mutex
	finds    int
	locks    int
	held     bool
	released chan struct{}
}

// arrived counts a step of a split and releases the held creation once a
// second split has reached it.
func (s *splitRaceStore) arrived(find bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if find {
		s.finds++
	} else {
		s.locks++
	}
	if (s.finds >= 2 || s.locks >= 2) && s.released != nil {
		select {
		case <-s.released:
		default:
			close(s.released)
		}
	}
}

func (s *splitRaceStore) FindRecords(ctx context.Context, q repository.RecordQuery) ([]*repository.Record, error) {
	if q.Parent == s.parent {
		s.arrived(true)
	}
	return s.Store.FindRecords(ctx, q)
}

func (s *splitRaceStore) Exclusive(ctx context.Context, key string, fn func(ctx context.Context) error) error {
	if strings.HasPrefix(key, "split:") {
		s.arrived(false)
	}
	return s.Store.Exclusive(ctx, key, fn)
}

func (s *splitRaceStore) CreateRecord(ctx context.Context, p *repository.Record) error {
	s.mu.Lock()
	hold := p.Event != nil && p.Event.Parent == s.parent && s.parent != 0 && !s.held
	if hold {
		s.held = true
	}
	s.mu.Unlock()
	if hold {
		select {
		case <-s.released:
		case <-s.timeout.Done():
			return fmt.Errorf("the second split never arrived: %w", s.timeout.Err())
		}
	}
	return s.Store.CreateRecord(ctx, p)
}

// TestConcurrentSplits sends two splits of one series at once, on both
// stores: exactly one creates a new series (201), the other is refused
// (409: the series changed meanwhile), and the series has one child.
func TestConcurrentSplits(t *testing.T) {
	t.Parallel()
	run := func(t *testing.T, open func(t testing.TB, cfg *config.Config) repository.Store) {
		rs := &splitRaceStore{timeout: testdeadline.Context(t), released: make(chan struct{})}
		opts := envOptions{openStore: open, wrapStore: func(s repository.Store) repository.Store { rs.Store = s; return rs }}
		e := newEnvWith(t, t.TempDir(), opts)
		id := e.must(201, "POST", "events", "editor", weekly(map[string]any{"recurrence": map[string]any{"rules": []any{"FREQ=WEEKLY;COUNT=8"}}})).id()
		rs.mu.Lock()
		rs.parent = id
		rs.mu.Unlock()

		keys := []string{"20270401T190000", "20270415T190000"}
		statuses := make([]int, len(keys))
		var wg sync.WaitGroup
		for i, key := range keys {
			wg.Add(1)
			go func() {
				defer wg.Done()
				statuses[i] = e.do("POST", fmt.Sprintf("events/%d/occurrences/%s/split", id, key), "editor", nil).status
			}()
		}
		wg.Wait()
		created := 0
		for i, st := range statuses {
			switch st {
			case 201:
				created++
			case 409:
			default:
				t.Errorf("split at %s: status %d, want 201 or 409", keys[i], st)
			}
		}
		if created != 1 {
			t.Errorf("%d splits succeeded (%v), want 1", created, statuses)
		}
		children, err := rs.Store.FindRecords(context.Background(), repository.RecordQuery{Kind: repository.KindEvent, Parent: id})
		if err != nil {
			t.Fatal(err)
		}
		if len(children) != 1 {
			t.Errorf("the series has %d children after two concurrent splits, want 1", len(children))
		}
	}
	t.Run("sqlite", func(t *testing.T) { run(t, nil) })
	t.Run("mongo", func(t *testing.T) { run(t, openMongo) })
}
