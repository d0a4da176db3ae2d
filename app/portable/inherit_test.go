package portable

import (
	"testing"

	"github.com/calendar/eventcal/repository"
)

// TestImagesInherit: images as the API and the importer register them,
// with WordPress's attachment status "inherit", are exported and loaded
// (the load refused them as having no status), with the event linking
// one.
func TestImagesInherit(t *testing.T) {
	t.Parallel()
	src := newStore(t)
	img := &repository.Record{Kind: repository.KindImage, Status: "inherit", Date: t0, Modified: t0,
		Title: repository.Text{"en": "opening"}, Slug: repository.Text{"en": "opening"},
		Image: &repository.ImageFields{URL: "https://images.example.org/opening.jpg", Extension: "jpg"}}
	must(t, src.CreateRecord(t.Context(), img))
	e := event(repository.StatusPublish, "Opening", 4)
	e.ImageID = img.ID
	must(t, src.CreateRecord(t.Context(), e))
	file := export(t, src, ExportOptions{})
	dst := newStore(t)
	if _, err := load(t, dst, file); err != nil {
		t.Fatalf("load: %v", err)
	}
	if got, want := dump(t, dst), dump(t, src); got != want {
		t.Errorf("the loaded store differs:\n--- exported\n%s\n--- loaded\n%s", want, got)
	}
}
