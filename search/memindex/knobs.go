package memindex

// knobs are the sizes and thresholds that choose how an index counts its
// facets and walks its collapsed lists. Each index has its own (New takes
// defaultKnobs; the tests set others on their indexes before the first
// write), so that tests taking other ways run in parallel with the rest.
// An index's facetIndex and collapseState share its knobs. Queries and
// writes read them; a test writes them only while none runs.
type knobs struct {
	// facetWidth is the span of start dates of one bucket, in seconds (a
	// week). The tests take small buckets.
	facetWidth int64
	// spanShift gives the buckets of a span (facetIndex.spans):
	// 1<<spanShift consecutive bucket numbers. The tests take other spans.
	spanShift uint
	// bucketListMin is the number of candidates per bucket of a list's
	// window from which the list is read by the buckets (facetIndex.each).
	// The tests read every list by them.
	bucketListMin int
	// bucketBlocks is how many blocks of the date order a bucket read by
	// facetIndex.each costs about as much as, for a list without
	// candidates. The tests read every such list by the buckets.
	bucketBlocks int
	// parallelFacetMin is the number of documents from which addSorted
	// builds the buckets on several goroutines. The tests take the
	// parallel build at small sizes.
	parallelFacetMin int
	// builtInParts, when set (by the tests), is called with the number of
	// parts of each build of addSorted (1: one by one).
	builtInParts func(parts int)
	// collapsedPageMax bounds the page (offset plus limit) of a collapsed
	// list read by the buckets from the start of its dates
	// (walkCollapsed); a deeper page is found by its start
	// (deepCollapsed). The tests take either path.
	collapsedPageMax int
	// dirtyMax bounds the groups changed since the spans were built that
	// collapseState keeps (past it, the next build reads every group).
	// The tests drop the spans.
	dirtyMax int
}

// defaultKnobs are the knobs of the indexes that New makes.
var defaultKnobs = knobs{
	facetWidth:       7 * 86400,
	spanShift:        3,
	bucketListMin:    16,
	bucketBlocks:     4,
	parallelFacetMin: 1 << 15,
	collapsedPageMax: 2048,
	dirtyMax:         1 << 14,
}

// bucketOf returns the number of the bucket of a start.
func (k *knobs) bucketOf(start int64) int64 {
	b := start / k.facetWidth
	if start%k.facetWidth < 0 {
		b--
	}
	return b
}
