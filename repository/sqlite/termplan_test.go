package sqlite

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calendar/eventcal/repository"
)

// TestTermQueryPlans pins that term look-ups by name and slug use an index
// (issue 7, finding 6): SQLite's plan must not scan term_names or
// term_slugs.
func TestTermQueryPlans(t *testing.T) {
	t.Parallel()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	for _, tc := range []struct {
		name string
		q    repository.LabelQuery
	}{
		{"name", repository.LabelQuery{Taxonomy: repository.LabelCategory, Name: "Jazz", NameLang: "en"}},
		{"slug", repository.LabelQuery{Taxonomy: repository.LabelTag, Slug: "jazz", SlugLang: "en"}},
		{"slug any taxonomy", repository.LabelQuery{Slug: "jazz", SlugLang: "en"}},
		{"name and parent", repository.LabelQuery{Taxonomy: repository.LabelCategory, Name: "Jazz", NameLang: "en", Parent: 3, HasParent: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			query, args := termQuery(tc.q)
			all := queryPlan(t, s, query, args...)
			t.Logf("plan:\n%s", all)
			for _, bad := range []string{"SCAN term_names", "SCAN term_slugs", "SCAN terms"} {
				if strings.Contains(all, bad) {
					t.Errorf("plan scans (%s):\n%s", bad, all)
				}
			}
			if !strings.Contains(all, "SEARCH terms USING INTEGER PRIMARY KEY") {
				t.Errorf("terms are not read by ID from the look-up:\n%s", all)
			}
		})
	}
}

// TestTitleQueryPlan pins that duplicate detection's title look-up reads
// posts by ID from the title index, not every venue.
func TestTitleQueryPlan(t *testing.T) {
	t.Parallel()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	where, args := postFilter(repository.RecordQuery{Kind: repository.KindVenue, Title: "Town Hall", TitleLang: "en",
		ExcludeStatuses: []string{repository.StatusTrash}, Limit: 50}, true)
	all := queryPlan(t, s, "SELECT doc FROM posts"+where+" ORDER BY id LIMIT 50", args...)
	if !strings.Contains(all, "SEARCH posts USING INTEGER PRIMARY KEY") || !strings.Contains(all, "post_titles_by_title") {
		t.Errorf("title look-up plan:\n%s", all)
	}
}

// queryPlan returns the lines of SQLite's plan for query, one per step.
func queryPlan(t *testing.T, s *Store, query string, args ...any) string {
	t.Helper()
	rows, err := s.rdb.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(plan, "\n")
}
