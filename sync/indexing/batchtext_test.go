package indexing

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/calendar/eventcal/repository"
)

// TestLargeDraftsDoNotHoldSmallWrites queues six drafts with descriptions
// at the limit (200,000 characters), then one small published event: the
// first batch takes the oldest draft and the small event, not the other
// drafts, so the small write is visible after one batch (about one large
// post's indexing) whatever the backlog; the rest follow in later batches.
func TestLargeDraftsDoNotHoldSmallWrites(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	big := strings.Repeat("lorem ipsum dolor sit amet ", 200000/27)
	for range 6 {
		p := s.Post(t, repository.KindEvent, "Draft", repository.StatusDraft, baseTime)
		if _, err := s.store.UpdateRecord(t.Context(), p.ID, func(p *repository.Record) error {
			p.Content = repository.Text{"en": big}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	small := s.Post(t, repository.KindEvent, "Harbour concert", repository.StatusPublish, baseTime)
	reads := &postReads{Store: s.store, reads: map[int64]int{}}
	s.worker.Store = reads

	s.step(t)
	if got := s.Titles(t, "harbour"); !slices.Equal(got, []int64{small.ID}) {
		t.Fatalf("after one batch: search harbour = %v, want [%d]", got, small.ID)
	}
	if n := s.Counts(t)[0]; n != 2 {
		t.Errorf("the first batch indexed %d events, want 2 (the oldest draft and the small event)", n)
	}
	s.flush(t)
	if n := s.Counts(t)[0]; n != 7 {
		t.Errorf("after the backlog: %d events indexed, want 7", n)
	}
	// Each post is read a bounded number of times (for the choice, when
	// taken, and to build its document), not once per batch of the
	// backlog.
	for id, n := range reads.reads {
		if n > 3 {
			t.Errorf("post %d read %d times", id, n)
		}
	}
}

// postReads counts the reads of each post through GetPosts.
type postReads struct {
	repository.Store
	reads map[int64]int
}

func (c *postReads) GetRecords(ctx context.Context, ids []int64) (map[int64]*repository.Record, error) {
	for _, id := range ids {
		c.reads[id]++
	}
	return c.Store.GetRecords(ctx, ids)
}
