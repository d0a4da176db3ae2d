package storetest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/calendar/eventcal/repository"
)

// WriteLabels writes every category, then every tag, of st to b as JSON
// lines, in FindLabels' order: two stores' dumps are equal when they hold
// the same labels. The tests of other packages compare stores with it.
func WriteLabels(t testing.TB, ctx context.Context, st repository.Store, b *strings.Builder) {
	t.Helper()
	for _, tax := range []repository.LabelKind{repository.LabelCategory, repository.LabelTag} {
		ls, err := st.FindLabels(ctx, repository.LabelQuery{Taxonomy: tax})
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range ls {
			j, _ := json.Marshal(l)
			b.Write(j)
			b.WriteByte('\n')
		}
	}
}
