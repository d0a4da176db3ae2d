package memindex

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/search/searchtest"
)

// steppedDocs returns agreeDocs' events with series of four shapes, by
// ID: weekly without overrides and daily without overrides (groups
// evenly spaced: counted by their step, see group.step), weekly with the
// start an hour later from the 50th occurrence on (a clock change: not
// evenly spaced), and agreeDocs' own (overrides leave holes in the
// group); with one series in ten (every series, at least five) so that
// the text, dates and filters of a query cut many groups. And now.
func steppedDocs(n int) ([]search.EventDocument, int64) {
	base, now := agreeDocs(n)
	// More series: every tenth single event becomes a weekly series.
	var docs []search.EventDocument
	for _, d := range base {
		if d.Occurrence != "" || d.ID%10 != 3 {
			docs = append(docs, d)
			continue
		}
		for k := range 105 {
			o := d
			o.Start, o.End = d.Start+int64(k)*7*86400, d.End+int64(k)*7*86400
			o.Occurrence = fmt.Sprintf("k%03d", k)
			docs = append(docs, o)
		}
	}
	first := map[int64]search.EventDocument{}
	shape := map[int64]int{} // by the series' order
	for i := range docs {
		d := &docs[i]
		if d.Occurrence == "" {
			continue
		}
		f, ok := first[d.ID]
		if !ok {
			first[d.ID] = *d
			shape[d.ID] = len(shape) % 4
			continue
		}
		k := int64(0)
		fmt.Sscanf(d.Occurrence, "k%03d", &k)
		dur := f.End - f.Start
		switch shape[d.ID] {
		case 0: // agreeDocs' overrides, if any
			continue
		case 1: // daily
			d.Start = f.Start + k*86400
		case 2: // a clock change at the 50th
			d.Start = f.Start + k*7*86400
			if k >= 50 {
				d.Start += 3600
			}
		default: // weekly
			d.Start = f.Start + k*7*86400
		}
		start, occ := d.Start, d.Occurrence
		*d = f
		d.Start, d.End, d.Occurrence = start, start+dur, occ
	}
	return docs, now
}

// TestSteppedGroupsAgreeWithReference runs generated queries of every
// kind (agreeQuery: words and prefixes over many groups, dates that cut
// groups at either end, statuses, flags, categories and a radius with
// text, collapsed series, deep pages, the total alone) over steppedDocs'
// events, whose evenly spaced groups are counted by their steps, and
// checks each page, total and facets against the reference; half of the
// queries after writes that take occurrences out of groups (the first,
// the last, one from the middle: the step is kept, kept, looked for
// again), change single occurrences (each leaves its group, from the
// middle most often), move series and remove some.
func TestSteppedGroupsAgreeWithReference(t *testing.T) {
	t.Parallel() // sets none of the package's knobs: runs beside the other parallel tests
	all, now := steppedDocs(4000)
	ls := newLiveSeries(all)
	ls.write(ls.order)
	x := ls.x
	stepped := 0
	for _, g := range x.groups {
		if g.step > 0 {
			stepped++
		}
	}
	t.Logf("%d documents, %d groups, %d evenly spaced", len(all), len(x.groups), stepped)
	if stepped < 100 || stepped == len(x.groups) {
		t.Fatalf("%d of %d groups evenly spaced: want many, not all", stepped, len(x.groups))
	}
	r := rand.New(rand.NewPCG(11, 12))
	ref := searchtest.NewReference(all)
	const queries = 400
	for i := range queries {
		if i == queries/2 {
			var changed []int64
			for _, id := range ls.order {
				occ := ls.live[id]
				if len(occ) < 10 || r.IntN(4) > 0 {
					continue
				}
				switch r.IntN(3) {
				case 0:
					occ = occ[1:]
				case 1:
					occ = occ[:len(occ)-1]
				default:
					occ = slices.Delete(slices.Clone(occ), len(occ)/2, len(occ)/2+1)
				}
				ls.live[id] = occ
				changed = append(changed, id)
			}
			ls.write(changed)
			// Occurrences changed alone (another title): each leaves its
			// group, from the middle most often.
			changed = changed[:0]
			for _, id := range ls.order {
				if occ := ls.live[id]; len(occ) > 10 && r.IntN(4) == 0 {
					occ = slices.Clone(occ)
					k := r.IntN(len(occ))
					occ[k].Text = retitled(occ[k].Text, "solo")
					ls.live[id] = occ
					changed = append(changed, id)
				}
			}
			ls.write(changed)
			ref = searchtest.NewReference(agreeWrites(r, ls))
			t.Logf("after the writes: %d documents, %d groups", ref.Len(), len(x.groups))
		}
		if x.Count() != ref.Len() {
			t.Fatalf("Count %d, want %d", x.Count(), ref.Len())
		}
		q, kind := agreeQuery(r, now)
		if r.IntN(3) == 0 && q.Query == "" {
			q.Query = benchWords[r.IntN(len(benchWords))][:1+r.IntN(3)] // text over many groups
		}
		checkAgainstReference(t, x, ref, q, fmt.Sprintf("query %d (%s)", i, kind))
	}
	checkSteps(t, x)
}

// checkSteps fails t unless every group's step (when above 0) is the
// distance between each two of its members in a row, and unless
// repSlots and repAt hold each group's representative, in order, at its
// group's index.
func checkSteps(t *testing.T, x *Index) {
	t.Helper()
	if len(x.repSlots) != len(x.groups) || len(x.repAt) != len(x.groups) || !slices.IsSorted(x.repSlots) {
		t.Fatalf("%d groups, %d representatives' slots (sorted: %v), %d indexes", len(x.groups), len(x.repSlots),
			slices.IsSorted(x.repSlots), len(x.repAt))
	}
	for k, slot := range x.repSlots {
		if at := x.repAt[k]; at < 0 || int(at) >= len(x.groups) || x.groups[at].rep != slot {
			t.Fatalf("representative %d at slot %d: group index %d, not its group's", k, slot, at)
		}
	}
	for _, g := range x.groups {
		if g.step <= 0 {
			continue
		}
		for k := range g.occ {
			if want := g.occ[0].start + int64(k)*g.step; g.occ[k].start != want {
				t.Fatalf("group of series %d: step %d, member %d starts at %d, want %d", g.series, g.step, k, g.occ[k].start, want)
			}
		}
		if x.heads[g.at].step != g.step {
			t.Fatalf("group of series %d: head's step %d, group's %d", g.series, x.heads[g.at].step, g.step)
		}
	}
}

// TestGroupStepFollowsJoinsAndLeaves writes a series' occurrences
// (evenly spaced or not, equal starts; in order or not), then takes its
// group's members out one by one in any order and joins them again in
// any order (the front, the end, the middle), and checks after each step
// that a step above 0 is exact (checkSteps), and that an evenly spaced
// group has its step once whole.
func TestGroupStepFollowsJoinsAndLeaves(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for round := range 200 {
		x := New()
		var docs []search.EventDocument
		step := int64(1 + r.IntN(3))
		for k := range 2 + r.IntN(12) {
			start := 1000 + int64(k)*step*100
			if round%3 == 0 && r.IntN(6) == 0 {
				start += int64(r.IntN(3)) * 50 // off the step
			}
			if round%3 == 0 && k > 0 && r.IntN(8) == 0 {
				start = docs[k-1].Start // on another member
			}
			docs = append(docs, search.EventDocument{ID: 1, Occurrence: fmt.Sprintf("k%03d", k), Status: "publish", Start: start, End: start + 10,
				Text: map[string]search.Text{"en": {Title: "x"}}})
		}
		order := slices.Clone(docs)
		if round%2 == 1 {
			r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		}
		x.Apply(order)
		checkSteps(t, x)
		if round%3 != 0 && round%2 == 0 && len(x.groups) == 1 && x.groups[0].step != step*100 {
			t.Fatalf("round %d: an evenly spaced group written in order has step %d, want %d", round, x.groups[0].step, step*100)
		}
		if len(x.groups) != 1 {
			continue // equal starts may leave too few members alike
		}
		// Take the members out of the group in any order, then put them
		// back in any order (join and leave as a write's holds do).
		g := x.groups[0]
		slots := make([]uint32, len(g.occ))
		for k, m := range g.occ {
			slots[k] = m.slot
		}
		r.Shuffle(len(slots), func(i, j int) { slots[i], slots[j] = slots[j], slots[i] })
		for _, slot := range slots {
			x.leave(slot)
			if g.at >= 0 {
				checkSteps(t, x)
			}
		}
		r.Shuffle(len(slots), func(i, j int) { slots[i], slots[j] = slots[j], slots[i] })
		for _, slot := range slots {
			x.join(slot, g)
			checkSteps(t, x)
		}
		if round%3 != 0 && g.step != step*100 {
			t.Fatalf("round %d: an evenly spaced group has step %d after its members joined again, want %d", round, g.step, step*100)
		}
	}
}

// TestSearchReadsNoMemberOfEvenGroups counts the groups whose members a
// search reads to find those in its dates (Index.searchedGroups), not its
// time, over 400 weekly series of 60 occurrences (a tenth "opera", the
// others "concert") and a window that cuts every group: evenly spaced,
// a search of either word reads no group's members (each group matched
// costs a step in its head, counted by division), so the work per group
// does not grow with its members; with the start an hour later from the
// 30th occurrence on (not evenly spaced) each group matched is searched,
// as before the steps. Every answer is the reference's.
func TestSearchReadsNoMemberOfEvenGroups(t *testing.T) {
	const weeks, week, series = 60, 7 * 86400, 400
	for _, even := range []bool{true, false} {
		var docs []search.EventDocument
		for s := range series {
			title := "concert"
			if s%10 == 0 {
				title = "opera"
			}
			for k := range weeks {
				start := int64(k)*week + int64(s)*60
				if !even && k >= 30 {
					start += 3600
				}
				docs = append(docs, search.EventDocument{ID: int64(s + 1), Occurrence: fmt.Sprintf("k%03d", k), Status: "publish",
					Start: start, End: start + 3600, Text: map[string]search.Text{"en": {Title: fmt.Sprintf("%s %d", title, s)}}})
			}
		}
		x := New()
		x.Apply(docs)
		if len(x.groups) != series {
			t.Fatalf("%d groups, want %d", len(x.groups), series)
		}
		for word, groups := range map[string]uint64{"opera": series / 10, "concert": series - series/10} {
			q := search.EventQuery{Lang: "en", Query: word, Statuses: []string{"publish"}, StartGTE: search.Some(int64(5 * week)),
				EndLTE: search.Some(int64(50 * week)), Limit: 10}
			s0, d0 := x.searchedGroups.Load(), x.decided.Load()
			got, err := x.Search(t.Context(), q)
			if err != nil {
				t.Fatal(err)
			}
			if want := searchtest.ExpectedEvents(docs, q); got.Total != want.Total || !slices.Equal(got.IDs, want.IDs) {
				t.Fatalf("evenly spaced %v, %q: total %d, %v; want %d, %v", even, word, got.Total, got.IDs, want.Total, want.IDs)
			}
			searched, decided := x.searchedGroups.Load()-s0, x.decided.Load()-d0
			t.Logf("evenly spaced %v, %q: %d groups decided, %d searched, %d matches", even, word, decided, searched, got.Total)
			if decided != groups {
				t.Errorf("evenly spaced %v, %q: %d groups decided, want the %d it matches", even, word, decided, groups)
			}
			if want := map[bool]uint64{true: 0, false: groups}[even]; searched != want {
				t.Errorf("evenly spaced %v, %q: the members of %d groups searched, want %d", even, word, searched, want)
			}
		}
	}
}
