package calendar_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/calendar/eventcal/app/apierr"
	"github.com/calendar/eventcal/app/calendar"
	"github.com/calendar/eventcal/repository"
)

// TestLabelsLoad: a whole label is created under its ID with its
// revision, every language and its origin; replaced in place (its text
// in every language now the load's); and refused, with nothing written,
// when a rule is broken: an ID out of range, a tag with a parent, no
// name, a blank or too long text in one language, a parent that is not
// a category, a parent that would make a cycle.
func TestLabelsLoad(t *testing.T) {
	t.Parallel()
	_, st := newService(t)
	ctx := t.Context()
	labels := calendar.NewLabels(calendar.LabelsDeps{Store: st})
	root := &repository.Label{ID: 40, Taxonomy: repository.LabelCategory, Revision: 7, Name: repository.Text{"en": "Music", "fr": "Musique"},
		Slug: repository.Text{"en": "music", "fr": "musique"}, Origin: &repository.Origin{Site: "https://wp.example.org", ID: 40, Hash: "h"}}
	got, err := labels.Load(ctx, root, false)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != 40 || got.Revision != 7 || got.Name["fr"] != "Musique" || got.Origin == nil {
		t.Errorf("created %+v", got)
	}
	child := &repository.Label{ID: 41, Taxonomy: repository.LabelCategory, Parent: 40, Revision: 2, Name: repository.Text{"en": "Jazz"}, Slug: repository.Text{"en": "jazz"}}
	if _, err := labels.Load(ctx, child, false); err != nil {
		t.Fatal(err)
	}
	replaced := *root
	replaced.Name = repository.Text{"de": "Musik"}
	replaced.Slug = repository.Text{"de": "musik"}
	got, err = labels.Load(ctx, &replaced, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Name) != 1 || got.Name["de"] != "Musik" || got.Revision != 8 {
		t.Errorf("replaced %+v", got)
	}

	tests := []struct {
		name    string
		label   repository.Label
		replace bool
		says    string
	}{
		{"an ID out of range", repository.Label{ID: repository.MaxExplicitID + 1, Taxonomy: repository.LabelTag, Name: repository.Text{"en": "x"}}, false, "id: must be from 1"},
		{"a tag with a parent", repository.Label{ID: 50, Taxonomy: repository.LabelTag, Parent: 40, Name: repository.Text{"en": "x"}}, false, "parent: a tag has no parent"},
		{"no name", repository.Label{ID: 50, Taxonomy: repository.LabelTag}, false, "name: a label has a name"},
		{"a blank name", repository.Label{ID: 50, Taxonomy: repository.LabelTag, Name: repository.Text{"en": "x", "fr": " "}}, false, "name.fr: blank"},
		{"a long slug", repository.Label{ID: 50, Taxonomy: repository.LabelTag, Name: repository.Text{"en": "x"}, Slug: repository.Text{"en": strings.Repeat("s", 201)}}, false, "slug.en: 201 characters, at most 200"},
		{"an unknown taxonomy", repository.Label{ID: 50, Taxonomy: "genre", Name: repository.Text{"en": "x"}}, false, `"genre" is not category or tag`},
		{"a parent that is not there", repository.Label{ID: 50, Taxonomy: repository.LabelCategory, Parent: 99, Name: repository.Text{"en": "x"}}, false, "There is no category with ID 99"},
		{"a cycle", repository.Label{ID: 40, Taxonomy: repository.LabelCategory, Parent: 41, Name: repository.Text{"en": "x"}}, true, "A category cannot be its own ancestor."},
		{"a category turned into a tag", repository.Label{ID: 41, Taxonomy: repository.LabelTag, Name: repository.Text{"en": "x"}}, true, "a load does not change a label's taxonomy"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, err := st.FindLabels(ctx, repository.LabelQuery{Taxonomy: repository.LabelCategory})
			if err != nil {
				t.Fatal(err)
			}
			l := tt.label
			_, err = labels.Load(ctx, &l, tt.replace)
			var fe *calendar.FieldError
			var ae *apierr.Error
			if err == nil || !(errors.As(err, &fe) || errors.As(err, &ae) || strings.Contains(err.Error(), "taxonomy")) || !strings.Contains(err.Error(), tt.says) {
				t.Fatalf("error %v, want one saying %q", err, tt.says)
			}
			after, err := st.FindLabels(ctx, repository.LabelQuery{Taxonomy: repository.LabelCategory})
			if err != nil {
				t.Fatal(err)
			}
			if len(after) != len(before) || after[0].Revision != before[0].Revision || after[1].Revision != before[1].Revision {
				t.Errorf("a refused load wrote: %+v", after)
			}
			if _, err := st.GetLabel(ctx, 50); !errors.Is(err, repository.ErrNotFound) {
				t.Errorf("label 50: %v", err)
			}
		})
	}
}
