// Package search defines the index contract of the calendar's read path:
// the documents the sync worker indexes, one query-options type per index
// with explicit optionals, and results with exact totals.
//
// Two engines implement Engine: search/embedded (embedded default, under
// DATA_DIR) and search/meili (Meilisearch, when MEILI_URL is set). Both are
// checked by the shared conformance suite in search/searchtest, which
// generates fixtures and computes the expected results with Match (the
// reference semantics in Go), so an engine can only pass by agreeing with it.
//
// Dates are Unix seconds (UTC instants); geo points are one internal
// GeoPoint converted at each engine's edge.
//
// # Recurring events
//
// A series is indexed as one document per occurrence
// (EventDocument.Occurrence, named by DocumentKey): every filter, order,
// total and facet is per document, and Result.Occurrences says which
// occurrence each hit is. IndexEvents replaces all the documents of each
// event ID it is given (so a writer keeps an event's documents in one
// call), DeleteEvents removes them all, and EventQuery.CollapseSeries keeps
// each series' first match in the query's order. How each engine does it:
//
//   - search/memindex: one row per document; the IDs map to their rows (a
//     write first removes the rows of its IDs that it does not hold). The
//     occurrences of a series with the series' text reuse its tokens and
//     share its word list, so an occurrence costs its postings and a row.
//     A collapsed list reads the matches in order and skips the later ones
//     of a series (no block is counted from its summary).
//   - search/embedded: each document is stored under its key; a write deletes
//     in the same transaction the stored keys of its IDs that it does not
//     hold (known from memindex, which holds exactly the stored documents).
//     An occurrence with the text of an earlier one of the same write is
//     stored with a reference to it instead of the text, so a series' text
//     is stored (and decoded at start) once.
//   - search/meili: primary key "key" (the document key), "id" the series
//     ID (filterable, the distinct attribute), "occurrence" sortable as the
//     orders' last tie-break. A write asks each event index which of its IDs
//     it holds, enqueues a deletion by filter "id IN [...]" there and then
//     the additions, in this order (Meilisearch runs an index's tasks in
//     order; from v1.45.0 its autobatcher also joins a deletion by filter
//     with the additions that follow it into one batch). CollapseSeries is
//     distinct: "id" with page/hitsPerPage, whose totalHits Meilisearch
//     computes after distinct (exact); facets are asked for in a second
//     request without distinct, because Meilisearch counts them over one
//     document per series chosen by internal document order. An editor's
//     collapsed list over both event indexes is merged in Go (collapse.go):
//     a series with occurrences of both kinds of status is in both.
//
// # How the engines answer text search
//
// The rules are those of docs/frontend.md, "Text search", written in Go in text.go.
//
//   - The embedded engine (search/embedded) stores every event document in
//     a bbolt file (nothing indexed) and answers event queries from
//     search/memindex, an in-memory index it loads from those documents at
//     start and keeps in step with every write (a write is visible to the next
//     query once it returns). A write tokenizes its documents, builds the
//     postings of the words they bring and re-sorts the vocabularies they grow
//     without the index lock, then holds the lock only to link them, about
//     8,192 words at a time, so queries keep answering while a large batch is
//     indexed (TestReadersProceedWhileIndexing pauses a writer there and
//     runs queries). Bleve itself answered a list by
//     visiting every hit (its collector reads each hit's sort key, its range and
//     geo searchers walk their postings), so a list cost O(matches): 19 ms at
//     p50 for the default list at 10,000 events, 357 ms for a search at
//     100,000. search/memindex holds every event as a 32-byte entry in date
//     order (blocks of at most 256 entries, so a write moves one block), bitmaps
//     (roaring) of the events of each category, tag, venue and organizer and of
//     each word of each language (title and body apart), and a table of the
//     distinct geo points. A query turns its list filters and words into one
//     bitmap of candidates, then reads the date order from its start bound,
//     deciding the other filters on each entry; a radius query measures each
//     distinct point once with search.DistanceKm (after a latitude band no
//     point inside can leave), so the circle is the reference's, boundary
//     included. Words follow the rules above by construction: each query term
//     is the union of the words of the language's vocabulary that
//     search.Term.Matches accepts, walking only the words with the term as
//     prefix (prefix terms), with its first letter (one typo) or all of them
//     (two typos, where another first letter is allowed). Each language has
//     one vocabulary per visibility (status, hidden from listings, password
//     protected) of the events holding its words, and a query walks only those
//     its filters can match: words that only drafts, pending, private, hidden
//     or protected events hold cost an anonymous search nothing (60 drafts of
//     3,500 random words made its walks read 371,505 words instead of 374
//     before this split; TestHiddenWordFloodCostsAnonymousSearchesNothing
//     asserts the count does not change). Totals and facet
//     counts are exact (an event counts once per value it has). A list counts
//     the blocks its dates hold whole from a summary kept with each block (the
//     range of its ends, the number of entries of each status and flags), so
//     the default list at 100,000 events costs about 10 µs in the engine; a
//     page of few candidates is a partial sort. Memory: 93 MB of Go heap for
//     100,000 events in seven languages (go test ./search/memindex, events
//     shaped as the benchmark's); an event whose text is the same in several
//     languages (the documents fall back to the default language) is indexed
//     once, the other languages aliased to it. Start-up reads the stored
//     documents back: 100,000 events took 4.6 s (measured while other work
//     shared the machine). Venue and organizer queries
//     (a few thousand records) are answered by Bleve: search.Words through a
//     custom analyzer, typo terms expanded against the field's term dictionary
//     with search.Term.Matches deciding each candidate (Bleve's own fuzzy
//     query counts a transposition as 2 and knows nothing of the first-letter
//     rule). A place that is not published is indexed under other field names
//     (hidden_text, hidden_fields), which only a search that may match it
//     reads, so hidden places never lengthen an anonymous search's expansion
//     (TestHiddenPlacesCostAnonymousSearchesNothing: 562 dictionary words
//     read with or without 90 hidden venues of 300 random words, 166,522 with
//     them when they shared the fields); this changed the mapping, so the
//     index rebuilds itself once on the first start after upgrading.
//   - Meilisearch gets typo tolerance on with minWordSizeForTypos
//     {oneTypo: 5, twoTypos: 9} and disableOnNumbers written out, prefix
//     search indexingTime, documents whose text is already plain text, and a
//     query of the first 10 distinct folded words, ending with a space when the
//     last word is not a prefix; matchingStrategy: all. searchCutoffMs is set
//     to 60 s so that a slow server fails a request rather than answering with a
//     half-ranked page and a wrong total. Known differences we accept: Meilisearch
//     also joins two adjacent query words into one (new york finds newyork)
//     and splits a word into two ("latenight" finds "late-night" there, not
//     in the embedded engine); and Meilisearch stops deriving typo matches of
//     one query word after 150 words with one typo and 50 with two
//     (crates/milli/src/search/new/limits.rs),
//     so on a very large vocabulary it can find fewer typo matches than the
//     embedded engine.
//     Its tokenizer also segments Chinese and Japanese text into dictionary
//     words, where search.Words keeps a run of letters whole.
//   - Meilisearch: tokenizer. search.Words cuts words at charabia's
//     DEFAULT_SEPARATORS (charabia v0.9.6, the tokenizer of Meilisearch
//     v1.18.0; v0.9.9 in v1.50.0 adds only U+200C), '-' among them, as
//     Meilisearch does with no nonSeparatorTokens: a hyphenated word is its
//     parts in every engine, in the text and in the query, so "night" and
//     "late-night" both find "Late-night Comedy Club". Releases before this
//     one kept '-' inside words (nonSeparatorTokens ["-"]); Init resets the
//     setting and Meilisearch re-indexes, the embedded place indexes rebuild
//     (mapping version 4), and the embedded events are cut again when loaded.
//     The list is generated from charabia's source (search/separators.go, by
//     go run ./search/internal/gensep, see its comment), not written by hand. Differences that remain: charabia
//     also cuts where the script changes between letters (abcδεζ) and segments
//     Chinese, Japanese, Thai, Khmer and German compounds with dictionaries.
//   - Meilisearch: venue and organizer search with several words ("all in one
//     field") is one federated multi-search: one query per searchable
//     attribute with attributesToSearchOn: [that attribute] and
//     matchingStrategy: all; Meilisearch merges them in the sort order, keeps
//     each place once, cuts the page with the federation's offset/limit, and
//     counts the union exactly. One request and a page's worth of hits,
//     whatever the number of places (TestPlaceWordsInOneFieldCost).
//   - Meilisearch: hidden statuses and anonymous search speed. Meilisearch
//     derives a query word's typo and prefix matches from the word list of the
//     whole index, whatever the filter, and caps them (1,000 prefix words,
//     150 + 50 typo words); a prefix word with typos walks every word that starts
//     with it. So events are kept in two indexes: calendar_events holds the
//     published ones, calendar_events_hidden every other status (future,
//     draft, pending, private, trash). An anonymous search (statuses
//     [publish]) reads the published index only: hidden text neither lengthens
//     its walk nor uses up its caps
//     (TestHiddenTextDoesNotReachAnonymousSearch: 1,100 draft words sorted
//     before the one published word). A search over statuses of both kinds (an
//     editor's) is one federated multi-search: Meilisearch merges the two hit
//     lists in the sort order, cuts the page, adds the two exact totals and
//     merges the facet counts (mergeFacets). A write asks the other index
//     which of the batch's events it holds (one search) and deletes those
//     before adding the batch to its own index. Indexes written by an older
//     release (attribute scheme 2, one events index) are migrated at start by
//     the zero-downtime rebuild (lists stay correct meanwhile: every search
//     filters by status).
//   - Meilisearch: filters are checked against Meilisearch's own filter parser
//     (crates/filter-parser of v1.18.0 and v1.50.0, built as commands and
//     named by MEILI_FILTER_PARSER) by TestFiltersParseAsMeant (skipped
//     when the variable is not set).
//   - Upgrading. The Bleve index rebuilds itself on start (its mapping
//     fingerprint changed) and the sync worker refills it from the store. Meilisearch keeps the
//     documents it has, whose text may still hold HTML: run a rebuild
//     (reindex) once after upgrading so that every document is plain text.
//   - Settings reconciliation never shrinks the live index. At start and
//     when a document brings a new language, field or status, the process merges
//     the live searchable, filterable and sortable attributes with its own (live
//     order first, new ones appended) and only writes when something is missing
//     or differs; a replica with another vocabulary (or an older release) keeps
//     its attributes, so its searches never fail with
//     invalid_search_attributes_to_search_on.
package search
