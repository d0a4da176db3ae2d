// Package embedded is the embedded search engine (the default, with no
// search server to run): search/memindex answers the event queries, Bleve
// the venue and organizer queries. Under one directory it keeps, per
// generation, three things:
//
//   - events.db: every event document (one per occurrence of a series),
//     snappy-compressed, in a bbolt file (events.go, codec.go). Nothing queries
//     it: at open its documents fill a search/memindex index, which answers
//     every event query (lists with exact totals and facets, text, geo:
//     see its package documentation for why not Bleve), and every event
//     write goes to both, the file first, under one lock per generation so
//     both apply writes in the same order. The file is there so that a
//     restart does not have to rebuild the index from the store.
//   - venues.bleve and organizers.bleve: Bleve (scorch) indexes, searched
//     by Bleve: the places' text by the contract's text-matching rules
//     (text.go: the words analyzer, typo and prefix terms expanded against
//     the field dictionaries), their filters (query.go) and the newest-first
//     order from doc values. A place search reads few records and needs
//     no exact facets over a large share of them, which is what Bleve's
//     inverted index does well.
//
// Before, the events were kept in a third Bleve index that indexed nothing
// and stored each document's JSON: every write paid Bleve's analysis and
// segment persistence and background merges for documents that were only
// ever read back whole at open. Measured at 2,000 generated events (the
// searchtest fixtures, 250 a batch, then 200 single-event rewrites), the
// bbolt file holds the same documents in about the same space (1.7 MB
// against 1.6 to 3.0 MB for the Bleve index, which depends on its merges)
// and a single-event write costs about 3 ms instead of about 22 ms.
// An events.bleve left by that version is removed at open, and the engine
// starts empty for the sync worker to repopulate, as after a mapping
// change.
//
// A full rebuild (search.Rebuilder, rebuild.go) writes a new generation
// beside the live one (events.db.<n>, venues.bleve.<n>, ...), then records
// n in the manifest file "generation" (written atomically: a temporary
// file renamed over the old one) and swaps the open generation under a
// lock that every search and write holds for reading, so no query fails
// or sees a closed index; the old generation is then closed and removed.
// Open reads the manifest (none: generation 0, the plain names above) and
// deletes every index of another generation: the leftovers of a rebuild
// that was aborted or interrupted, or of a committed one whose old
// generation was not removed yet.
//
// One process per directory: the event store and each Bleve index hold a
// bbolt file lock while open. A second Open of the same directory, from
// another process or from this one, waits for the lock for a second and
// then fails with ErrLocked; it never shares or corrupts the index. Run a
// single service instance per DATA_DIR (use Meilisearch to scale out).
//
// Writes are durable when they return: a batch is applied (searchable)
// and flushed to disk before IndexEvents and the other writes return, so
// the sync worker may clear its marks afterwards.
package embedded
