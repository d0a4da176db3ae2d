package api_test

import (
	"fmt"
	"testing"
)

// TestTagParentIgnored: tags have no parent, and their write routes do not
// declare one, so a parent sent to them is ignored as every undeclared
// parameter is. It used to leak into the writes: a create with a parent
// skipped the duplicate-name check (a second "Free" tag was made), and an
// update naming the tag's own ID was refused as a category made its own
// ancestor.
func TestTagParentIgnored(t *testing.T) {
	e := newEnv(t)
	free := e.must(201, "POST", "tags", "editor", map[string]any{"name": "Free"}).id()
	e.run(t, []scenario{
		{name: "duplicate name with a parent", method: "POST", url: "tags", as: "editor", body: map[string]any{"name": "Free", "parent": free},
			status: 400, want: map[string]any{"code": "term_exists", "data.term_id": free}},
		{name: "own ID as parent", method: "PATCH", url: fmt.Sprintf("tags/%d", free), as: "editor", body: map[string]any{"name": "Gratis", "parent": free},
			status: 200, want: map[string]any{"name": "Gratis"}},
		{name: "still one tag", method: "GET", url: "tags?hide_empty=false", status: 200, want: map[string]any{"total": 1}},
	})
}
