package search

import "context"

// Writer is the write side of the index contract. An Engine is a Writer
// for its live indexes; a Rebuild is a Writer for the new indexes it
// fills. The sync worker writes every batch through Writers, so that it can
// write the same batch to both while a rebuild runs (dual write).
type Writer interface {
	// IndexEvents adds or replaces event documents.
	IndexEvents(ctx context.Context, docs []EventDocument) error
	// IndexPlaces adds or replaces venue or organizer documents.
	IndexPlaces(ctx context.Context, docs []PlaceDocument) error
	// DeleteEvents removes events; missing IDs are not an error.
	DeleteEvents(ctx context.Context, ids []int64) error
	// DeletePlaces removes venues or organizers.
	DeletePlaces(ctx context.Context, kind PlaceKind, ids []int64) error
}

// Rebuilder is implemented by engines that can rebuild their indexes
// without downtime: new, empty indexes are filled beside the live ones,
// which keep answering every search, then replace them in one atomic swap.
// Both engines implement it (search/embedded with index generations in
// DATA_DIR, search/meili with SwapIndexes).
type Rebuilder interface {
	// BeginRebuild creates the new, empty indexes (with the live indexes'
	// settings) and returns the rebuild that fills them. An engine runs at
	// most one rebuild at a time; leftovers of an earlier rebuild that
	// neither committed nor aborted (the process died) are removed first.
	BeginRebuild(ctx context.Context) (Rebuild, error)
}

// Rebuild is a set of new indexes being filled beside the live ones. Its
// writes go to the new indexes only; searches keep reading the live ones
// until Commit.
//
// Exactly one of Commit and Abort ends a rebuild; writes after that fail.
type Rebuild interface {
	Writer
	// Commit atomically replaces the live indexes with the new ones (a
	// search sees either all old or all new indexes, and never fails
	// because of the swap), then removes the old ones. When Commit fails
	// before the swap, the live indexes are untouched and the caller
	// should Abort; an error after the swap (removing the old indexes)
	// says so, and the new indexes are live.
	Commit(ctx context.Context) error
	// Abort removes the new indexes; the live ones are untouched.
	Abort(ctx context.Context) error
}
