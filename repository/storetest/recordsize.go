package storetest

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/calendar/eventcal/repository"
)

// recordSizeTests check the record size bound (repository.MaxRecordBytes):
// every engine stores a record of exactly the bound and refuses one byte
// more with a *repository.TooLargeError naming the largest field, before
// writing anything.
var recordSizeTests = []storeTest{
	{"CreatePostAtTheBound", testCreatePostAtBound},
	{"UpdatePostPastTheBound", testUpdatePostPastBound},
	{"CreateTermPastTheBound", testCreateTermPastBound},
}

// sizedEvent returns an event with one override whose English description
// pads the record to exactly bytes (repository.RecordSize).
func sizedEvent(t *testing.T, slug string, bytes int) *repository.Record {
	t.Helper()
	p := &repository.Record{
		Kind: repository.KindEvent, Status: repository.StatusPublish, Date: baseTime,
		Title: repository.Text{"en": slug}, Slug: repository.Text{"en": slug},
		Event: &repository.EventFields{Overrides: []repository.OccurrenceOverride{{Key: "20310314T183005", Content: repository.Text{"en": ""}}}},
	}
	pad(t, p, &p.Event.Overrides[0].Content, bytes)
	return p
}

// pad sets (*text)["en"] so that the record v measures exactly bytes.
func pad(t *testing.T, v any, text *repository.Text, bytes int) {
	t.Helper()
	(*text)["en"] = ""
	base, err := repository.RecordSize(v)
	if err != nil {
		t.Fatal(err)
	}
	(*text)["en"] = strings.Repeat("a", bytes-base)
	if n, _ := repository.RecordSize(v); n != bytes {
		t.Fatalf("padded record measures %d bytes, want %d", n, bytes)
	}
}

// wantTooLarge fails t unless err is a *repository.TooLargeError naming
// field.
func wantTooLarge(t *testing.T, err error, field string) {
	t.Helper()
	var tl *repository.TooLargeError
	if !errors.As(err, &tl) || !errors.Is(err, repository.ErrTooLarge) {
		t.Fatalf("error %v, want a *repository.TooLargeError", err)
	}
	if tl.Field != field || tl.Bytes <= repository.MaxRecordBytes {
		t.Errorf("TooLargeError %+v, want field %s and more than %d bytes", tl, field, repository.MaxRecordBytes)
	}
}

func testCreatePostAtBound(t *testing.T, ctx context.Context, s repository.Store) {
	over := sizedEvent(t, "big", repository.MaxRecordBytes+1)
	wantTooLarge(t, s.CreateRecord(ctx, over), "event.overrides")
	if over.ID != 0 {
		t.Errorf("refused create left ID %d on the record", over.ID)
	}
	// Nothing of the refused create remains: not the post, not its slug.
	if n, err := s.CountRecords(ctx, repository.RecordQuery{}); err != nil || n != 0 {
		t.Errorf("CountPosts after a refused create = %d, %v; want 0", n, err)
	}
	at := sizedEvent(t, "big", repository.MaxRecordBytes)
	if err := s.CreateRecord(ctx, at); err != nil {
		t.Fatalf("CreatePost of exactly MaxRecordBytes: %v", err)
	}
	if at.Slug["en"] != "big" {
		t.Errorf("slug %q, want big (the refused create reserved nothing)", at.Slug["en"])
	}
	got, err := s.GetRecord(ctx, at.ID)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(got.Event.Overrides[0].Content["en"]); n != len(at.Event.Overrides[0].Content["en"]) {
		t.Errorf("stored description of %d bytes, want %d", n, len(at.Event.Overrides[0].Content["en"]))
	}
}

func testUpdatePostPastBound(t *testing.T, ctx context.Context, s repository.Store) {
	p := sizedEvent(t, "grow", 1<<10)
	if err := s.CreateRecord(ctx, p); err != nil {
		t.Fatal(err)
	}
	_, err := s.UpdateRecord(ctx, p.ID, func(q *repository.Record) error {
		q.Content = repository.Text{"en": ""}
		pad(t, q, &q.Content, repository.MaxRecordBytes+1)
		q.Slug = repository.Text{"en": "moved"}
		return nil
	})
	wantTooLarge(t, err, "content.en")
	got, err := s.GetRecord(ctx, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Revision != 1 || got.Slug["en"] != "grow" || len(got.Content["en"]) != 0 {
		t.Errorf("after a refused update: revision %d, slug %q, %d bytes of content; want 1, grow, 0", got.Revision, got.Slug["en"], len(got.Content["en"]))
	}
	if _, err := s.GetRecordBySlug(ctx, repository.KindEvent, "en", "moved"); !errors.Is(err, repository.ErrNotFound) {
		t.Errorf("slug of the refused update: %v, want ErrNotFound", err)
	}
}

func testCreateTermPastBound(t *testing.T, ctx context.Context, s repository.Store) {
	term := &repository.Label{Taxonomy: repository.LabelTag, Name: repository.Text{"en": "huge"}, Slug: repository.Text{"en": "huge"}, Description: repository.Text{"en": ""}}
	pad(t, term, &term.Description, repository.MaxRecordBytes+1)
	wantTooLarge(t, s.CreateLabel(ctx, term), "description.en")
	if ts, err := s.FindLabels(ctx, repository.LabelQuery{Taxonomy: repository.LabelTag}); err != nil || len(ts) != 0 {
		t.Errorf("FindTerms after a refused create = %d terms, %v; want none", len(ts), err)
	}
}
