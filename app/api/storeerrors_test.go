package api_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/calendar/eventcal/app/api"
	"github.com/calendar/eventcal/repository"
)

// failingStore is a store whose CreatePost and GetPost fail with err, as
// an engine reports a conflict or a failure.
type failingStore struct {
	repository.Store
	err error
}

func (s failingStore) CreateRecord(context.Context, *repository.Record) error { return s.err }

func (s failingStore) GetRecord(context.Context, int64) (*repository.Record, error) {
	return nil, s.err
}

// TestStoreErrorStatuses: a duplicate key of the store (a unique key the
// write needs was taken meanwhile) answers 409 rest_conflict, which a retry
// cannot change; a store that fails or runs out of time answers 503
// store_unavailable, which a retry may; a record over the stores' size
// bound answers 413 rest_document_too_large naming the largest field.
func TestStoreErrorStatuses(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.must(201, "POST", "events", "editor", map[string]any{"title": "E", "start_date": "2026-12-01", "end_date": "2026-12-01"}).id()
	event := "events/" + strconv.FormatInt(id, 10)
	create := map[string]any{"title": "New", "start_date": "2026-12-02", "end_date": "2026-12-02"}
	for _, tc := range []struct {
		name   string
		err    error
		method string
		url    string
		body   any
		status int
		code   string
		extra  map[string]any
	}{
		{"duplicate key on create", fmt.Errorf("mongo: create post 9: post 9 exists: %w", repository.ErrDuplicate), "POST", "events", create, 409, "rest_conflict", nil},
		{"duplicate key on read", fmt.Errorf("mongo: update user 3: %w", repository.ErrDuplicate), "GET", event, nil, 409, "rest_conflict", nil},
		{"deadline exceeded", fmt.Errorf("mongo: get post %d: %w", id, context.DeadlineExceeded), "GET", event, nil, 503, "store_unavailable", nil},
		{"cancelled", fmt.Errorf("mongo: create post: %w", context.Canceled), "POST", "events", create, 503, "store_unavailable", nil},
		{"record too large", fmt.Errorf("sqlite: create post: %w", &repository.TooLargeError{Bytes: 17 << 20, Field: "event.overrides", FieldBytes: 16 << 20}), "POST", "events", create, 413, "rest_document_too_large",
			map[string]any{"data.field": "overrides", "data.size": float64(17 << 20), "data.limit": float64(repository.MaxRecordBytes)}},
		{"description too large", fmt.Errorf("mongo: update post 3: %w", &repository.TooLargeError{Bytes: 17 << 20, Field: "content.en", FieldBytes: 16 << 20}), "GET", event, nil, 413, "rest_document_too_large",
			map[string]any{"data.field": "description.en"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := api.New(api.Options{Config: e.cfg, Store: failingStore{Store: e.store, err: tc.err}, Search: e.engine})
			if err != nil {
				t.Fatal(err)
			}
			e.app = a
			want := map[string]any{"code": tc.code, "data.status": tc.status}
			for k, v := range tc.extra {
				want[k] = v
			}
			e.run(t, []scenario{{name: tc.name, method: tc.method, url: tc.url, as: "editor", body: tc.body, status: tc.status, want: want}})
		})
	}
}
