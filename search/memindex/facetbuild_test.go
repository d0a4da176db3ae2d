package memindex

import (
	"fmt"
	"math"
	"reflect"
	"runtime"
	"testing"
)

// TestParallelFacetBuild: the facet buckets built on several goroutines
// (addSorted's parts) are the same, field for field (buckets and their
// postings, cells and kinds, spans, the values' and points' numbers and
// refs, the local numbers), as those built by adding the documents one
// by one, whether loaded into an empty index (Apply), built by Finish
// (NewBulk), or loaded again after every event was removed (the values'
// numbers then come from their free lists), at several bucket widths and
// span sizes (many parts, or one span: a single part).
func TestParallelFacetBuild(t *testing.T) {
	docs, _ := agreeDocs(1000)
	ids := make([]int64, 0, len(docs))
	for _, d := range docs {
		if len(ids) == 0 || ids[len(ids)-1] != d.ID {
			ids = append(ids, d.ID)
		}
	}
	writes := []struct {
		name  string
		build func(tune func(*knobs)) *Index
	}{
		{"load", func(tune func(*knobs)) *Index {
			x := newWith(tune)
			x.Apply(docs)
			return x
		}},
		{"bulk", func(tune func(*knobs)) *Index {
			x := NewBulk()
			tune(x.knobs)
			for _, b := range eventBatches(docs, 400) {
				x.Apply(b)
			}
			x.Finish()
			return x
		}},
		{"load after removals", func(tune func(*knobs)) *Index {
			x := newWith(tune)
			x.Apply(docs[len(docs)/2:])
			x.Remove(ids)
			x.Apply(docs)
			return x
		}},
	}
	if runtime.GOMAXPROCS(0) < 2 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	}
	// The builds run in parallel (each index has its own knobs); the
	// group returns when all are done, before GOMAXPROCS is restored.
	t.Run("builds", func(t *testing.T) {
		for _, c := range []struct {
			width int64
			shift uint
		}{{7 * 86400, 3}, {86400, 0}, {3600, 2}, {1 << 50, 3}} {
			for _, w := range writes {
				t.Run(fmt.Sprintf("%s, buckets of %d s, spans of %d", w.name, c.width, 1<<c.shift), func(t *testing.T) {
					t.Parallel()
					one := w.build(func(k *knobs) { k.facetWidth, k.spanShift, k.parallelFacetMin = c.width, c.shift, math.MaxInt })
					most := 0
					parts := w.build(func(k *knobs) {
						k.facetWidth, k.spanShift, k.parallelFacetMin = c.width, c.shift, 1
						k.builtInParts = func(n int) { most = max(most, n) } // (called by the writer: this goroutine)
					})
					if err := sameFacets(one.facets, parts.facets); err != nil {
						t.Fatal(err)
					}
					if len(parts.facets.buckets) == 0 {
						t.Fatal("no buckets")
					}
					// One bucket is one span, one part; the others are cut.
					if c.width < 1<<50 && most < 2 {
						t.Fatalf("built in %d part(s): the parallel build was not taken", most)
					}
				})
			}
		}
	})
}

// sameFacets returns an error naming the first field of got that differs
// from want's (but for the counters of the queries' work).
func sameFacets(want, got *facetIndex) error {
	for _, f := range []struct {
		name      string
		want, got any
	}{
		{"nums", want.nums, got.nums},
		{"buckets", want.buckets, got.buckets},
		{"spans", want.spans, got.spans},
		{"local", want.local, got.local},
		{"values", want.values, got.values},
		{"points", want.points, got.points},
		{"inverted", want.inverted, got.inverted},
		{"numbered", want.numbered, got.numbered},
	} {
		if w, ok := f.want.(map[int64]*fbucket); ok {
			g := f.got.(map[int64]*fbucket)
			for num, b := range w {
				if !reflect.DeepEqual(b, g[num]) {
					return fmt.Errorf("the parallel build's %s differ from those built one by one at %d:\n%v\nwant\n%v", f.name, num, brief(g[num]), brief(b))
				}
			}
		}
		if !reflect.DeepEqual(f.want, f.got) {
			return fmt.Errorf("the parallel build's %s differ from those built one by one:\n%v\nwant\n%v", f.name, brief(f.got), brief(f.want))
		}
	}
	return nil
}

// brief prints v, at most 2,000 bytes of it.
func brief(v any) string {
	s := fmt.Sprintf("%+v", v)
	if len(s) > 2000 {
		s = s[:2000] + "..."
	}
	return s
}
