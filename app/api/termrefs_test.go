package api_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/calendar/eventcal/repository"
)

// refStore fails its term look-ups when told to: FindLabels (slugs and
// names) with failFind, GetLabel (IDs) with failGet.
type refStore struct {
	repository.Store
	failFind, failGet *atomic.Bool
}

var errRefStoreDown = errors.New("refstore: down")

func (s refStore) FindLabels(ctx context.Context, q repository.LabelQuery) ([]*repository.Label, error) {
	if s.failFind.Load() {
		return nil, fmt.Errorf("find labels: %w", context.DeadlineExceeded)
	}
	return s.Store.FindLabels(ctx, q)
}

func (s refStore) GetLabel(ctx context.Context, id int64) (*repository.Label, error) {
	if s.failGet.Load() {
		return nil, errRefStoreDown
	}
	return s.Store.GetLabel(ctx, id)
}

// TestTermRefsSeeWrites: list filters' categories= keep their resolved
// references between requests, yet a category renamed, created or deleted
// through the API is seen by the very next list request, a failing store
// answers 503 and is not remembered, and unknown references do not grow
// the kept set without bound. The steps run in order, each on what the
// ones before did.
func TestTermRefsSeeWrites(t *testing.T) {
	t.Parallel()
	var failFind, failGet atomic.Bool
	e := newEnvWith(t, t.TempDir(), envOptions{wrapStore: func(s repository.Store) repository.Store {
		return refStore{Store: s, failFind: &failFind, failGet: &failGet}
	}})
	jazz := e.must(201, "POST", "categories", "editor", map[string]any{"name": "Jazz", "slug": "jazz"}).id()
	ev := e.must(201, "POST", "events", "editor", map[string]any{"title": "E", "start_date": "2026-12-01 10:00", "end_date": "2026-12-01 11:00", "categories": []any{jazz}}).id()
	e.flush()
	var other, blues int64
	ids := func(r *resp) []int64 { return listIDs(r, "events") }
	for _, st := range []struct {
		name   string
		before func()
		query  any // a string, or a *int64 read when the step runs
		status int
		want   []int64
	}{
		{"by slug", nil, "jazz", 200, []int64{ev}},
		{"by slug again (kept)", nil, "jazz", 200, []int64{ev}},
		{"by ID", nil, strconv.FormatInt(jazz, 10), 200, []int64{ev}},
		{"unknown", nil, "swing", 400, nil},
		{"renamed: new slug known at once", func() {
			e.must(200, "PATCH", "categories/"+strconv.FormatInt(jazz, 10), "editor", map[string]any{"name": "Swing", "slug": "swing"})
		}, "swing", 200, []int64{ev}},
		{"renamed: old slug unknown at once", nil, "jazz", 400, nil},
		{"created: known at once", func() {
			other = e.must(201, "POST", "categories", "editor", map[string]any{"name": "Jazz", "slug": "jazz"}).id()
		}, "jazz", 200, []int64{}},
		{"deleted: unknown at once", func() {
			e.must(200, "DELETE", "categories/"+strconv.FormatInt(other, 10)+"?force=true", "editor", nil)
		}, "jazz", 400, nil},
		{"store fails: 503", func() { failFind.Store(true) }, "blues", 503, nil},
		{"store back: not a kept failure", func() {
			failFind.Store(false)
			blues = e.must(201, "POST", "categories", "editor", map[string]any{"name": "Blues", "slug": "blues"}).id()
		}, "blues", 200, []int64{}},
		{"ID read fails: unknown, as before", func() { failGet.Store(true) }, &blues, 400, nil},
		{"ID read back: not kept as unknown", func() {
			failGet.Store(false)
		}, &blues, 200, []int64{}},
	} {
		if st.before != nil {
			st.before()
		}
		e.flush()
		q, _ := st.query.(string)
		if p, ok := st.query.(*int64); ok {
			q = strconv.FormatInt(*p, 10)
		}
		r := e.do("GET", "events?start_date=2026-11-01&categories="+q, "", nil)
		if r.status != st.status {
			t.Fatalf("%s: GET categories=%s: status %d, want %d: %s", st.name, q, r.status, st.status, r.raw)
		}
		if st.status == 200 && !slices.Equal(ids(r), st.want) && !(len(st.want) == 0 && len(ids(r)) == 0) {
			t.Fatalf("%s: GET categories=%s: events %v, want %v", st.name, q, ids(r), st.want)
		}
	}
}
