package api_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/calendar/eventcal/config/limits"
	"github.com/calendar/eventcal/repository"
)

// TestRecordSizeBound: a series whose changed occurrences are allowed more
// text than a record may hold (MAX_SERIES_OVERRIDE_TEXT raised) grows
// through the API, one occurrence description of limits.MaxDescription
// four-byte characters at a time, until the write that would take its
// record past repository.MaxRecordBytes: that one answers 413
// rest_document_too_large naming the overrides and stores nothing. The
// first change and the last two (the last one stored, within one
// description of the bound, and the one refused) go through the API; the
// ones between are the first one's override copied in the store (each
// through the API would rewrite the whole growing record: one stored
// change near the bound takes the same path as two, at a 16 MB rewrite
// each). It
// runs on SQLite: the MongoDB engine refuses the same record with the same
// error (storetest's RecordSize group, run on both engines), and twenty
// 16 MB rewrites through the embedded FerretDB take minutes. The sync
// worker does not run: indexing each of the twenty growing series is not
// what the test checks, and cost a third of its time.
func TestRecordSizeBound(t *testing.T) {
	t.Parallel()
	testRecordSizeBound(t, newEnvWith(t, t.TempDir(), envOptions{noWorker: true}, "MAX_SERIES_OVERRIDE_TEXT", "1073741824"))
}

func testRecordSizeBound(t *testing.T, e *env) {
	const count = 40
	id := e.must(201, "POST", "events", "editor", weekly(map[string]any{
		"recurrence": map[string]any{"rules": []any{fmt.Sprintf("FREQ=WEEKLY;COUNT=%d", count)}},
	})).id()
	desc := strings.Repeat("😀", limits.MaxDescription) // 4 bytes each
	first := time.Date(2027, 3, 18, 0, 0, 0, 0, time.UTC)
	stored := 0
	// The change the bound must refuse: earlier ones must be stored
	// (counted below), so the store is compared from this one on.
	refused := repository.MaxRecordBytes / len(desc)
	keyOf := func(i int) string { return first.AddDate(0, 0, 7*i).Format("20060102") + "T190000" }
	for i := 0; i < count; i++ {
		key := keyOf(i)
		before := ""
		if i >= refused {
			before = storeSnapshot(t, e)
		}
		r := e.do("PATCH", fmt.Sprintf("events/%d/occurrences/%s", id, key), "editor", map[string]any{"description": desc})
		if r.status == 200 {
			stored++
			if i == 0 {
				// The changes up to the last one before the bound are
				// the first one's override (as the API stored it) under
				// their own keys, written to the store at once: through
				// the API each would rewrite the growing record. The
				// last one stored goes through the API.
				seeded := max(refused-2, 0)
				if _, err := e.store.UpdateRecord(context.Background(), id, func(p *repository.Record) error {
					if len(p.Event.Overrides) != 1 || p.Event.Overrides[0].Key != key {
						return fmt.Errorf("overrides after the first change: %+v", p.Event.Overrides)
					}
					for j := 1; j <= seeded; j++ {
						o := p.Event.Overrides[0]
						o.Key = keyOf(j)
						p.Event.Overrides = append(p.Event.Overrides, o)
					}
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				stored += seeded
				i += seeded
			}
			continue
		}
		if r.status != 413 || r.str("code") != "rest_document_too_large" || r.str("data.field") != "overrides" ||
			!strings.Contains(r.str("message"), "overrides") {
			t.Fatalf("change %d: %d %.400s", i, r.status, r.raw)
		}
		if before != "" {
			if after := storeSnapshot(t, e); after != before {
				t.Errorf("the refused write changed the store:\n before %s\n after  %s", before, after)
			}
		}

		p := mustPost(t, e, id)
		size, err := repository.RecordSize(p)
		if err != nil {
			t.Fatal(err)
		}
		// The refused change would have added one description: the
		// stored record is within one description of the bound.
		if size > repository.MaxRecordBytes || size+len(desc) <= repository.MaxRecordBytes {
			t.Errorf("refused at a record of %d bytes, bound %d, change %d bytes", size, repository.MaxRecordBytes, len(desc))
		}
		if stored != refused {
			t.Errorf("%d changes stored, want %d", stored, refused)
		}
		return
	}
	t.Fatalf("%d changes of %d bytes each all stored: no bound", count, len(desc))
}
