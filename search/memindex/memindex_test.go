package memindex

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/search/searchtest"
)

// TestAgreesWithReferenceAfterChanges indexes generated events, then
// replaces, moves and removes many of them in batches of several sizes
// (the postings and date orders must follow every change), and checks
// generated queries of every filter, order, page and facet against the
// reference (searchtest) after each round.
func TestAgreesWithReferenceAfterChanges(t *testing.T) {
	t.Parallel() // its knobs are its indexes' own
	d := defaultKnobs
	for _, c := range []struct{ recent, fewValues, chunk, counted, mode int }{
		{d.recentMax, d.fewValues, d.chunkWords, d.minCounted, d.countedMode}, {2, 0, 1, d.minCounted, d.countedMode},
		// Every page with candidates walked and counted by firstCounted,
		// from the kinds' cardinalities, or else inside the dates.
		{d.recentMax, d.fewValues, d.chunkWords, 0, countFromKinds},
		{d.recentMax, d.fewValues, d.chunkWords, 0, countInside},
	} {
		t.Run(fmt.Sprintf("merge after %d new words, facets by match above %d values, chunks of %d words, counted from %d candidates, counting mode %d", c.recent, c.fewValues, c.chunk, c.counted, c.mode), func(t *testing.T) {
			t.Parallel()
			agreesAfterChanges(t, func(k *knobs) {
				// Holds of the lock as small as the chunks: every document
				// of more than one word linked and unlinked in pieces.
				k.recentMax, k.fewValues, k.chunkWords, k.holdWords, k.minCounted, k.countedMode = c.recent, c.fewValues, c.chunk, min(k.holdWords, c.chunk), c.counted, c.mode
			})
		})
	}
}

func agreesAfterChanges(t *testing.T, tune func(*knobs)) {
	f := searchtest.Generate(7, 600, 30, 12)
	r := rand.New(rand.NewPCG(11, 12))
	x := newWith(tune)
	live := map[int64]search.EventDocument{}
	apply := func(docs []search.EventDocument) {
		x.Apply(docs)
		for _, d := range docs {
			live[d.ID] = d
		}
	}
	remove := func(ids []int64) {
		x.Remove(ids)
		for _, id := range ids {
			delete(live, id)
		}
	}
	// Loaded in one call (one sort), with a repeated ID whose later
	// document wins.
	loaded := newWith(tune)
	first := f.Events[0]
	first.Start -= 1e6
	loaded.Apply(append([]search.EventDocument{first}, f.Events...))
	byID := map[int64]search.EventDocument{}
	for _, d := range f.Events {
		byID[d.ID] = d
	}
	check(t, "loaded", loaded, byID, f, r)

	// Round 0: everything, in batches of 1, 7 and the rest.
	apply(f.Events[:1])
	apply(f.Events[1:8])
	apply(f.Events[8:])
	check(t, "indexed", x, live, f, r)

	for round := 1; round <= 3; round++ {
		var changed []search.EventDocument
		for _, d := range f.Events {
			cur, ok := live[d.ID]
			if !ok || r.IntN(3) > 0 {
				continue
			}
			other := f.Events[r.IntN(len(f.Events))]
			cur.Text = other.Text // other words: the old postings must go
			if r.IntN(3) == 0 {
				// Untranslated: every language falls back to one text
				// (indexed once, the other languages aliased to it).
				one := other.Text[f.Langs[r.IntN(len(f.Langs))]]
				cur.Text = map[string]search.Text{}
				for _, l := range f.Langs {
					cur.Text[l] = one
				}
			}
			cur.Start += int64(r.IntN(200000)) - 100000
			cur.End = cur.Start + int64(r.IntN(10000))
			cur.PublishDate = other.PublishDate
			cur.Status = other.Status
			cur.Featured, cur.Ticketed = !cur.Featured, other.Ticketed
			cur.CategoryIDs, cur.VenueIDs, cur.Geo, cur.HasGeo = other.CategoryIDs, other.VenueIDs, other.Geo, other.HasGeo
			changed = append(changed, cur)
		}
		// The same event twice in one batch: the later one wins.
		if len(changed) > 1 {
			dup := changed[0]
			dup.Start++
			changed = append(changed, dup)
		}
		apply(changed)
		var gone []int64
		for id := range live {
			if r.IntN(8) == 0 {
				gone = append(gone, id)
			}
		}
		remove(append(gone, 999999999)) // an unknown ID is ignored
		// Some come back, under the same IDs.
		var back []search.EventDocument
		for _, id := range gone[:len(gone)/2] {
			for _, d := range f.Events {
				if d.ID == id {
					back = append(back, d)
				}
			}
		}
		apply(back)
		aliased := uint64(0)
		for _, v := range x.langs {
			for _, a := range v.aliases {
				aliased += a.GetCardinality()
			}
		}
		if aliased == 0 {
			t.Fatal("no event has a language aliased to another: the test does not exercise aliases")
		}
		check(t, fmt.Sprintf("round %d", round), x, live, f, r)
	}
	remove(slices.Collect(func(yield func(int64) bool) {
		for id := range live {
			if !yield(id) {
				return
			}
		}
	}))
	if x.Count() != 0 {
		t.Fatalf("Count after removing everything: %d", x.Count())
	}
	for lang, l := range x.langs {
		for vis, v := range l.parts {
			if len(v.byText) != 0 || len(v.sorted)-v.stale != 0 || len(v.recent) != 0 {
				t.Errorf("language %s, %+v keeps %d words after every event is gone", lang, vis, len(v.byText))
			}
			if len(v.prefixes) != 0 {
				t.Errorf("language %s, %+v keeps the rows of %d prefixes after every event is gone", lang, vis, len(v.prefixes))
			}
		}
		for to, a := range l.aliases {
			if !a.IsEmpty() {
				t.Errorf("language %s keeps %d events aliased to %s", lang, a.GetCardinality(), to)
			}
		}
	}
	if len(x.order) != 0 {
		t.Errorf("the date order keeps %d blocks", len(x.order))
	}
	for k, b := range x.kinds {
		if !b.IsEmpty() {
			t.Errorf("the date order's kind %+v keeps %d slots", k, b.GetCardinality())
		}
	}
	for l, m := range x.lists {
		if len(m) != 0 {
			t.Errorf("list filter %d keeps %d values", l, len(m))
		}
	}
	if len(x.pointOf) != 0 || len(x.freePts) != len(x.points) {
		t.Errorf("points: %d shared, %d free of %d", len(x.pointOf), len(x.freePts), len(x.points))
	}
}

// check runs generated queries against x and the reference over live.
func check(t *testing.T, round string, x *Index, live map[int64]search.EventDocument, f *searchtest.Fixtures, r *rand.Rand) {
	t.Helper()
	docs := make([]search.EventDocument, 0, len(live))
	for _, d := range live {
		docs = append(docs, d)
	}
	if x.Count() != len(docs) {
		t.Fatalf("%s: Count %d, want %d", round, x.Count(), len(docs))
	}
	// The kinds' slots are the date order's entries, each under its
	// status and flags.
	kinds := 0
	for _, blk := range x.order {
		for _, e := range blk.e {
			if b := x.kinds[kindKey{e.status, e.flags}]; b == nil || !b.Contains(e.slot) {
				t.Fatalf("%s: the entry of slot %d is not in its kind's slots", round, e.slot)
			}
			kinds++
		}
	}
	for _, b := range x.kinds {
		kinds -= int(b.GetCardinality())
	}
	if kinds != 0 {
		t.Fatalf("%s: the kinds hold %d slots more than the date order", round, -kinds)
	}
	// A short prefix's rows are its words' rows joined (all: the title's
	// and the body's).
	for lang, l := range x.langs {
		for vis, v := range l.parts {
			want := map[string]*prefixRows{}
			for w, e := range v.byText {
				shortPrefixes(w, func(p string) {
					u := want[p]
					if u == nil {
						u = &prefixRows{title: roaring.New(), body: roaring.New(), all: roaring.New()}
						want[p] = u
					}
					for _, b := range [][2]*roaring.Bitmap{{u.title, e.title}, {u.body, e.body}, {u.all, e.title}, {u.all, e.body}} {
						if b[1] != nil {
							b[0].Or(b[1])
						}
					}
				})
			}
			if len(want) != len(v.prefixes) {
				t.Fatalf("%s: language %s, %+v: %d prefixes, want %d", round, lang, vis, len(v.prefixes), len(want))
			}
			for p, u := range want {
				got := v.prefixes[p]
				if got == nil {
					t.Fatalf("%s: language %s, %+v: no rows for prefix %q", round, lang, vis, p)
				}
				for _, b := range [][2]*roaring.Bitmap{{u.title, got.title}, {u.body, got.body}, {u.all, got.all}} {
					if g := b[1]; g == nil && !b[0].IsEmpty() || g != nil && !g.Equals(b[0]) {
						t.Fatalf("%s: language %s, %+v: the rows of prefix %q differ from its words'", round, lang, vis, p)
					}
				}
			}
		}
	}
	ref := searchtest.NewReference(docs)
	for i := 0; i < 400; i++ {
		q := randomQuery(r, f, docs)
		wp, got, err := searchAlongside(t.Context(), x, ref, q)
		if err != nil {
			t.Fatalf("%s: %+v: %v", round, q, err)
		}
		want, wantF := wp.res, wp.facets
		if got.Total != want.Total {
			t.Fatalf("%s: %+v: total %d, want %d", round, q, got.Total, want.Total)
		}
		if q.Relevance {
			// Same set; the order is checked by the engine suite.
			whole := q
			whole.Offset, whole.Limit = 0, len(docs)
			all, _ := x.Search(t.Context(), whole)
			wantAll := ref.Events(whole)
			if !slices.Equal(slices.Sorted(slices.Values(all.IDs)), slices.Sorted(slices.Values(wantAll.IDs))) {
				t.Fatalf("%s: %+v: relevance set differs", round, q)
			}
			if want := searchtest.Page(all.IDs, q.Offset, q.Limit); !slices.Equal(got.IDs, want) {
				t.Fatalf("%s: %+v: page %v is not the order's page %v", round, q, got.IDs, want)
			}
		} else if !slices.Equal(got.IDs, want.IDs) {
			t.Fatalf("%s: %+v: IDs %v, want %v", round, q, got.IDs, want.IDs)
		}
		if fmt.Sprint(got.Facets) != fmt.Sprint(wantF) {
			t.Fatalf("%s: %+v: facets %v, want %v", round, q, got.Facets, wantF)
		}
	}
}

// randomQuery draws a query: each filter set with some probability, with
// values taken from the fixtures (so that most filters match something).
func randomQuery(r *rand.Rand, f *searchtest.Fixtures, docs []search.EventDocument) search.EventQuery {
	q := search.EventQuery{Lang: f.Langs[r.IntN(len(f.Langs))], Offset: r.IntN(20), Limit: r.IntN(15)}
	if r.IntN(3) == 0 {
		// A page past whole blocks, which are then counted from their
		// summaries.
		q.Offset = r.IntN(len(docs))
	}
	pick := func() search.EventDocument { return docs[r.IntN(len(docs))] }
	maybe := func(p int) bool { return r.IntN(p) == 0 }
	if maybe(3) {
		d := pick()
		words := searchtest.TextWords(d.Text[q.Lang].Title, d.Text[q.Lang].Description)
		if len(words) > 0 {
			w := words[r.IntN(len(words))]
			switch r.IntN(4) {
			case 0: // a prefix
				w = w[:1+r.IntN(len(w))]
			case 1: // a typo (a transposition after the first letter)
				if len(w) > 4 {
					b := []byte(w)
					b[2], b[3] = b[3], b[2]
					w = string(b)
				}
			case 2: // two words, the first whole
				if len(words) > 1 {
					w = words[r.IntN(len(words))] + " " + w
				}
			}
			q.Query = w
			if maybe(3) {
				q.Query += " "
			}
		}
		q.Relevance = maybe(2)
	}
	if maybe(2) {
		q.Statuses = []string{"publish"}
		if maybe(2) {
			q.Statuses = append(q.Statuses, "future", "private")
		}
	}
	if maybe(2) {
		q.StartGTE = search.Some(pick().Start)
	}
	if maybe(4) {
		q.StartGT = search.Some(pick().Start)
	}
	if maybe(3) {
		q.StartLT = search.Some(pick().Start + 500000)
	}
	if maybe(3) {
		q.EndGT = search.Some(pick().End)
	}
	if maybe(4) {
		q.EndLTE = search.Some(pick().End + 800000)
	}
	if maybe(6) {
		q.EndLT = search.Some(pick().End + 800000)
	}
	if maybe(3) {
		if c := pick().CategoryIDs; len(c) > 0 {
			q.CategoryIDs = []int64{c[0], 424242}
		}
	}
	if maybe(5) {
		if v := pick().TagIDs; len(v) > 0 {
			q.TagIDs = v[:1]
		}
	}
	if maybe(5) {
		if v := pick().VenueIDs; len(v) > 0 {
			q.VenueIDs = v
		}
	}
	if maybe(6) {
		if v := pick().OrganizerIDs; len(v) > 0 {
			q.OrganizerIDs = v[:1]
		}
	}
	if maybe(4) {
		q.Featured = search.Some(maybe(2))
	}
	if maybe(5) {
		q.Ticketed = search.Some(maybe(2))
	}
	if maybe(6) {
		q.HasGeo = search.Some(maybe(2))
	}
	if maybe(4) {
		c := f.Cities[r.IntN(len(f.Cities))]
		q.Near = search.Some(search.GeoCircle{Center: c, RadiusKm: []float64{0, 1, 5, 25, 200}[r.IntN(5)]})
	}
	if maybe(8) {
		q.ParentID = search.Some(pick().ParentID)
	}
	if maybe(3) {
		q.ExcludeHidden = true
	}
	if maybe(3) {
		q.ExcludeProtected = true
	}
	if maybe(5) {
		q.IDs = []int64{pick().ID, pick().ID, pick().ID, 31337}
	}
	if maybe(4) {
		q.Sort = search.ByPublishDate
	}
	if maybe(3) {
		q.Facets = search.EventFacets[:1+r.IntN(len(search.EventFacets))]
	}
	return q
}

// TestNearBoundary checks the circle at its edge: a point at exactly the
// radius is inside, one a float step beyond it is outside, at the equator,
// at high latitudes and across the antimeridian.
func TestNearBoundary(t *testing.T) {
	t.Parallel()
	centres := []search.GeoPoint{{Lat: 0, Lng: 0}, {Lat: 78.2, Lng: 15.6}, {Lat: -33.9, Lng: 179.99}, {Lat: 89.9, Lng: -45}}
	offsets := []search.GeoPoint{{Lat: 0.3, Lng: 0}, {Lat: 0, Lng: 0.3}, {Lat: -0.2, Lng: 0.25}}
	x := New()
	var docs []search.EventDocument
	id := int64(1)
	for _, c := range centres {
		for _, o := range offsets {
			lng := c.Lng + o.Lng
			if lng > 180 {
				lng -= 360
			}
			p := search.GeoPoint{Lat: c.Lat + o.Lat, Lng: lng}
			docs = append(docs, search.EventDocument{ID: id, Start: id, Status: "publish", HasGeo: true, Geo: &p})
			id++
		}
	}
	x.Apply(docs)
	for _, c := range centres {
		for _, d := range docs {
			dist := search.DistanceKm(*d.Geo, c)
			for _, radius := range []float64{dist, nextBelow(dist)} {
				q := search.EventQuery{Near: search.Some(search.GeoCircle{Center: c, RadiusKm: radius}), Limit: 100}
				got, err := x.Search(t.Context(), q)
				if err != nil {
					t.Fatal(err)
				}
				if want := searchtest.ExpectedEvents(docs, q); !slices.Equal(got.IDs, want.IDs) {
					t.Errorf("centre %v radius %v: %v, want %v", c, radius, got.IDs, want.IDs)
				}
			}
		}
	}
}

func nextBelow(f float64) float64 {
	if f == 0 {
		return -1
	}
	return f * (1 - 1e-15)
}

// TestBounds pins the conversion of the date bounds to inclusive ranges,
// at the ends of int64 above all.
func TestBounds(t *testing.T) {
	t.Parallel()
	some := search.Some[int64]
	var none search.Opt[int64]
	for _, tc := range []struct {
		name             string
		gte, gt, lte, lt search.Opt[int64]
		lo, hi           int64
	}{
		{"none", none, none, none, none, math.MinInt64, math.MaxInt64},
		{">= and <=", some(5), none, some(9), none, 5, 9},
		{"> and <", none, some(5), none, some(9), 6, 8},
		{"the tighter of >= and >", some(7), some(5), none, none, 7, math.MaxInt64},
		{"the tighter of <= and <", none, none, some(9), some(9), math.MinInt64, 8},
		{"> the largest: empty", none, some(math.MaxInt64), none, none, 1, 0},
		{"< the smallest: empty", none, none, none, some(math.MinInt64), 1, 0},
		{">= the largest", some(math.MaxInt64), none, none, none, math.MaxInt64, math.MaxInt64},
		{"crossed", some(10), none, some(9), none, 10, 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lo, hi := bounds(tc.gte, tc.gt, tc.lte, tc.lt)
			if lo != tc.lo || hi != tc.hi {
				t.Errorf("bounds = [%d, %d], want [%d, %d]", lo, hi, tc.lo, tc.hi)
			}
		})
	}
}

// TestWalkFindsEveryMatch checks the vocabulary walk against every word
// tried with search.Term.Matches, for terms of every typo budget, whole and
// as prefixes, with edits at the first letters (where the two-typo walk
// reads only some ranges, as does the one-typo walk that jumps over
// second letters), on words sorted and not yet sorted.
func TestWalkFindsEveryMatch(t *testing.T) {
	t.Parallel()
	base := []string{"exhibition", "xhibition", "axhibition", "aexhibition", "xehibition", "exhibitions",
		"exhibitionist", "éxhibition", "exhibtion", "exibition", "zexhibition", "ehxibition", "concert", "koncert",
		"onconcert", "festival", "festivals", "vestival", "estival", "efstival", "jazz", "jaz", "12345678901", "2345678901"}
	r := rand.New(rand.NewPCG(3, 4))
	letters := []rune("abcdefghijklmnopqrstuvwxyzé0")
	mutate := func(w string) string {
		rs := []rune(w)
		switch i := r.IntN(len(rs)); r.IntN(4) {
		case 0:
			rs[i] = letters[r.IntN(len(letters))]
		case 1:
			rs = append(rs[:i], append([]rune{letters[r.IntN(len(letters))]}, rs[i:]...)...)
		case 2:
			if len(rs) > 1 {
				rs = append(rs[:i], rs[i+1:]...)
			}
		default:
			if i+1 < len(rs) {
				rs[i], rs[i+1] = rs[i+1], rs[i]
			}
		}
		return string(rs)
	}
	words := slices.Clone(base)
	for range 300 {
		words = append(words, mutate(mutate(base[r.IntN(len(base))])))
	}
	for _, sortedShare := range []int{0, 1, 2} { // none, half, all sorted
		v := &vocabulary{byText: map[string]*word{}}
		for i, w := range words {
			if v.byText[w] != nil {
				continue
			}
			v.byText[w] = &word{text: w, vocab: v}
			if sortedShare == 2 || sortedShare == 1 && i%2 == 0 {
				v.sorted = append(v.sorted, w)
			} else {
				v.recent = append(v.recent, w)
			}
		}
		slices.Sort(v.sorted)
		for _, q := range append(slices.Clone(base), words[:80]...) {
			for _, prefix := range []bool{false, true} {
				term := search.Term{Word: q, Prefix: prefix, Typos: search.MaxTypos(q)}
				var want []string
				for w := range v.byText {
					if term.Matches(w) {
						want = append(want, w)
					}
				}
				slices.Sort(want)
				for _, jumpMin := range []int{0, math.MaxInt} { // jumping over second letters, and not
					var got []string
					v.walkJumping(term, func(e *word) { got = append(got, e.text) }, jumpMin)
					slices.Sort(got)
					if !slices.Equal(got, want) {
						t.Fatalf("walk(%+v) with %d of %d words sorted, jumpMin %d:\n got %q\nwant %q", term, len(v.sorted), len(v.byText), jumpMin, got, want)
					}
				}
			}
		}
	}
}

// TestSortFirst checks the partial sort against a full sort: the k first
// slots in the date order, in order, for every k, with repeated starts.
func TestSortFirst(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(5, 6))
	x := New()
	var docs []search.EventDocument
	for i := range 200 {
		docs = append(docs, search.EventDocument{ID: int64(1000 - i), Status: "publish", Start: int64(r.IntN(40))})
	}
	x.Apply(docs)
	var all []uint32
	for slot := range x.byID.slots() {
		all = append(all, slot)
	}
	want := slices.Clone(all)
	slices.SortFunc(want, func(a, b uint32) int { return x.compare(x.ents[a], x.ents[b]) })
	for k := 0; k <= len(all)+1; k++ {
		c := slices.Clone(all)
		r.Shuffle(len(c), func(i, j int) { c[i], c[j] = c[j], c[i] })
		x.sortFirst(c, k)
		n := min(k, len(c))
		if !slices.Equal(c[:n], want[:n]) {
			t.Fatalf("k=%d: first %v, want %v", k, c[:n], want[:n])
		}
		rest := slices.Clone(c)
		slices.Sort(rest)
		if sorted := slices.Sorted(slices.Values(all)); !slices.Equal(rest, sorted) {
			t.Fatalf("k=%d: the slots changed", k)
		}
	}
}

// TestOneTypoWalkJumps: the one-typo walk that jumps over second letters
// finds every word one edit (at any position, the first letter's too)
// from the term or from a prefix of it, as checking each word does; and
// where many words share the term's first letter (the load benchmark's
// lag probes, lagprobe1 to lagprobe3000, under "l" with "lecture"), it
// reads a few of them, not all (counted in Index.Checked, not timed).
func TestOneTypoWalkJumps(t *testing.T) {
	t.Parallel()
	letters := []string{"a", "c", "e", "l", "r", "t", "u", "é"}
	edits := func(w string) []string {
		rs := []rune(w)
		var out []string
		for i := 0; i <= len(rs); i++ {
			for _, l := range letters {
				c := []rune(l)[0]
				out = append(out, string(slices.Insert(slices.Clone(rs), i, c)))
				if i < len(rs) {
					sub := slices.Clone(rs)
					sub[i] = c
					out = append(out, string(sub))
				}
			}
			if i < len(rs) {
				out = append(out, string(slices.Delete(slices.Clone(rs), i, i+1)))
			}
			if i+1 < len(rs) {
				sw := slices.Clone(rs)
				sw[i], sw[i+1] = sw[i+1], sw[i]
				out = append(out, string(sw))
			}
		}
		return out
	}
	x := New()
	var docs []search.EventDocument
	add := func(title string) {
		id := int64(len(docs) + 1)
		docs = append(docs, search.EventDocument{ID: id, Status: "publish", Start: 1_800_000_000 + id, End: 1_800_003_600 + id,
			Text: map[string]search.Text{"en": {Title: title}}})
	}
	for i := range 3000 {
		add(fmt.Sprintf("Probe lagprobe%d", i+1))
	}
	var words []string
	for _, w := range edits("lecture") {
		words = append(words, w, w+"s", w+"x")
	}
	words = append(words, "l", "le", "lec", "lect", "lecture", "lectures", "electure", "llecture")
	for _, w := range words {
		add(w)
	}
	x.Apply(docs)
	v := x.langs["en"].parts[visibility{status: "publish"}]
	if v == nil {
		t.Fatal("no vocabulary of published English text")
	}
	if len(v.recent) > 0 {
		v.merge()
	}
	for _, q := range append([]string{"lecture", "lectrue", "lcture", "leture", "lexture", "lecturr"}, edits("lecture")[:40]...) {
		for _, prefix := range []bool{false, true} {
			term := search.Term{Word: q, Prefix: prefix, Typos: search.MaxTypos(q)}
			if term.Typos != 1 {
				continue
			}
			var want []string
			for w := range v.byText {
				if term.Matches(w) {
					want = append(want, w)
				}
			}
			slices.Sort(want)
			var got []string
			v.walkJumping(term, func(e *word) { got = append(got, e.text) }, 0)
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Fatalf("walk(%+v), jumping:\n got %q\nwant %q", term, got, want)
			}
		}
	}
	// The work: the words of the query's walk, through Search.
	before := x.Checked()
	res, err := x.Search(t.Context(), search.EventQuery{Lang: "en", Query: "lecture", Statuses: []string{"publish"}, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	read := x.Checked() - before
	if res.Total == 0 {
		t.Fatal("lecture matched nothing: the test measures nothing")
	}
	if most := uint64(len(words)) + 200; read > most {
		t.Errorf("searching lecture read %d vocabulary words, want at most %d (not the 3,000 lag probes)", read, most)
	}
}

// TestOneTypoWalkSmallVocabulary: under typoJumpMin words with the term's
// first letter, as in a small index, the walk checks each word (it reads
// no more than doing so: the jumps' searches would cost more there).
func TestOneTypoWalkSmallVocabulary(t *testing.T) {
	t.Parallel()
	v := &vocabulary{byText: map[string]*word{}}
	for _, w := range []string{"lecture", "lectures", "lagprobe1", "lagprobe2", "lamp", "late", "lexture", "lcture", "market", "lunch", "lecturer"} {
		v.byText[w] = &word{text: w, vocab: v}
		v.sorted = append(v.sorted, w)
	}
	slices.Sort(v.sorted)
	for _, q := range []string{"lecture", "lectrue", "lxcture"} {
		for _, prefix := range []bool{false, true} {
			term := search.Term{Word: q, Prefix: prefix, Typos: search.MaxTypos(q)}
			var got, want []string
			read := v.walk(term, func(e *word) { got = append(got, e.text) })
			plain := v.walkJumping(term, func(e *word) { want = append(want, e.text) }, math.MaxInt)
			slices.Sort(got)
			slices.Sort(want)
			if read > plain || !slices.Equal(got, want) {
				t.Errorf("walk(%+v) read %d words and found %q; checking each reads %d and finds %q", term, read, got, plain, want)
			}
		}
	}
}
