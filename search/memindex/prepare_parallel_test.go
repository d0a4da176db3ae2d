package memindex

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/search/searchtest"
)

// TestPrepareAllAsSerial: preparing in runs on several goroutines
// (startPrepare) gives
// what preparing one document after the other gives (tokens, reuse of a
// series' shared tokens and its like, groups), whatever the run size,
// also when runs end next to a series, when an event's documents are
// not together, and for the documents of an event that has one
// occurrence with a text of its own.
func TestStartPrepareAsSerial(t *testing.T) {
	t.Parallel()
	f := searchtest.Generate(21, 80, 4, 3)
	var docs []search.EventDocument
	for i, d := range f.Events {
		if i%3 == 0 {
			occ := searchtest.Occurrences(d, 1+i%6, 86400)
			if len(occ) > 3 {
				occ[2].Text = map[string]search.Text{"en": {Title: fmt.Sprintf("own %d", i)}}
			}
			docs = append(docs, occ...)
			continue
		}
		docs = append(docs, d)
	}
	// One event's documents apart: an occurrence moved to the end.
	docs = append(docs, docs[1])
	docs = append(docs[:1], docs[2:]...)
	grps := groupsOf(docs)
	want := make([]prepared, len(docs))
	for i := range docs {
		var prev *prepared
		if i > 0 {
			prev = &want[i-1]
		}
		want[i] = prepare(&docs[i], prev)
		want[i].grp = grps[i]
	}
	shared := 0
	for _, p := range want {
		if p.shares {
			shared++
		}
	}
	if shared == 0 {
		t.Fatal("no document reuses another's tokens: the test shows nothing")
	}
	for _, run := range []int{1, 2, 3, 5, 64, len(docs) + 1} {
		t.Run(fmt.Sprintf("runs of %d", run), func(t *testing.T) {
			p := startPrepare(docs, grps, run)
			for i := range docs {
				p.wait(i) // in order, as load asks
			}
			got := p.all()
			if !reflect.DeepEqual(got, want) {
				for i := range got {
					if !reflect.DeepEqual(got[i], want[i]) {
						t.Fatalf("document %d (%d %q): prepared %+v, want %+v", i, docs[i].ID, docs[i].Occurrence, got[i], want[i])
					}
				}
			}
		})
	}
}
