// Package search defines the index contract of the calendar's read path:
// the documents the sync worker indexes, one query-options type per index
// with explicit optionals, and results with exact totals.
//
// Two engines implement Engine: search/bleve (embedded default, under
// DATA_DIR) and search/meili (Meilisearch, when MEILI_URL is set). Both are
// checked by the shared conformance suite in search/searchtest, which
// generates fixtures and computes the expected results with Match (the
// reference semantics in Go), so an engine can only pass by agreeing with it.
//
// Dates are Unix seconds (UTC instants); geo points are one internal
// GeoPoint converted at each engine's edge.
//
// # How the engines answer text search
//
// The rules are those of app/README.md, "Text search", written in Go in text.go.
//
//   - The embedded engine (search/bleve) stores every event document in
//     Bleve (one stored field, nothing indexed) and answers event queries from
//     search/memindex, an in-memory index it loads from those documents at
//     start and keeps in step with every write (under the same lock, so a
//     write is visible to the next query). Bleve itself answered a list by
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
//     (two typos, where another first letter is allowed). Totals and facet
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
//     rule).
//   - Meilisearch gets typo tolerance on with minWordSizeForTypos
//     {oneTypo: 5, twoTypos: 9} and disableOnNumbers written out, prefix
//     search indexingTime, documents whose text is already plain text, and a
//     query of the first 10 distinct folded words, ending with a space when the
//     last word is not a prefix; matchingStrategy: all. searchCutoffMs is set
//     to 60 s so that a slow server fails a request rather than answering with a
//     half-ranked page and a wrong total. Known differences we accept: Meilisearch
//     also joins two adjacent query words into one (new york finds newyork)
//     and splits a word into two; a query word starting with - is sent as a
//     one-word phrase (else it would negate), so it gets no typo or prefix; and
//     Meilisearch stops deriving typo matches of one query word after 150 words
//     with one typo and 50 with two (crates/milli/src/search/new/limits.rs),
//     so on a very large vocabulary it can find fewer typo matches than the
//     embedded engine.
//     Its tokenizer also segments Chinese and Japanese text into dictionary
//     words, where search.Words keeps a run of letters whole.
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
