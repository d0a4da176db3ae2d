package memindex

// knobs are the sizes and thresholds that choose how an index counts its
// facets, walks its lists and cuts its writes, and the tests' hooks. Each index has its own (New takes
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

	// recentMax bounds the unsorted new words of a vocabulary: a merge
	// (O(vocabulary), outside the lock) once recentMax new words wait,
	// and at most recentMax words checked one by one in a walk. The tests
	// merge often.
	recentMax int
	// chunkWords bounds the words a writer prepares at a time
	// (tokenized, built and merged outside the lock): a write of many
	// documents is prepared and linked in chunks of about this many
	// words (one document at least). The tests take small chunks.
	chunkWords int
	// holdWords bounds the words a writer links or unlinks in one hold
	// of the lock, the work a query may wait for (about a millisecond):
	// the writer releases it between documents once it linked this many,
	// and a document of more words (a 200,000-character description holds
	// about 23,000 distinct words) is linked and unlinked in pieces of at
	// most this many, hidden from the word matches until done (see link).
	// The tests take small pieces.
	holdWords int
	// yieldHook, when set (tests), is called by a writer each time it
	// releases the lock between pieces of one document's words (yield),
	// holding writeMu but not mu.
	yieldHook func()
	// preparedHook, when set (tests), is called by a writer after it
	// prepared a chunk, holding writeMu but not mu.
	preparedHook func()
	// parallelSortMin is the number of entries from which sortEntries
	// sorts two halves on two goroutines and merges them. The tests take
	// the parallel sort at small sizes.
	parallelSortMin int
	// fewValues: see fewMax. The tests take both ways.
	fewValues int
	// deepOffset is the offset past which a merged page is found by its
	// start (pageStart) rather than by merging every match before it: a
	// page at offset n would otherwise cost n steps of the merge (300,000
	// matches into a page: 130 ms), where pageStart costs about 30 counts
	// of the matches up to a date, each reading the date order's block
	// summaries and one binary search per group. The tests find every
	// page by its start.
	deepOffset int
	// minCounted is the number of candidates from which a query's page
	// and total are found by firstCounted: below it, sorting the
	// candidates (plan.each) costs little. The tests take every query
	// through firstCounted.
	minCounted int
	// countedMode makes firstCounted count one way (tests): 0 chooses by
	// the costs, countFromKinds from the kinds' cardinalities,
	// countInside inside the dates (neither declining).
	countedMode int
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
	recentMax:        1024,
	chunkWords:       8192,
	holdWords:        1024,
	parallelSortMin:  1 << 16,
	fewValues:        64,
	deepOffset:       2048,
	minCounted:       1024,
}

// bucketOf returns the number of the bucket of a start.
func (k *knobs) bucketOf(start int64) int64 {
	b := start / k.facetWidth
	if start%k.facetWidth < 0 {
		b--
	}
	return b
}
