package indexing

import "github.com/calendar/eventcal/repository"

// Trashed events stay in the search index (with their status), so that
// callers who may edit events list them with status=trash, alone or among
// other statuses, like any other list (as in the original plugin; issue
// 23). Every
// list names the statuses it shows and no default names the trash, so
// they never show elsewhere. Trashed venues and organizers are still
// removed from the index.

// unindexedStatuses are the statuses of the posts of kind the index does
// not hold: a store query with them as ExcludeStatuses selects what a full
// rebuild indexes.
func unindexedStatuses(kind repository.Kind) []string {
	if kind == repository.KindEvent {
		return nil
	}
	return []string{repository.StatusTrash}
}

// indexedEvent reports whether p is an event the index holds.
func indexedEvent(p *repository.Record) bool {
	return p != nil && p.Kind == repository.KindEvent
}

// IndexedRecords is the store query of the posts of kind the index holds,
// for counts that compare the store with the index.
func IndexedRecords(kind repository.Kind) repository.RecordQuery {
	return repository.RecordQuery{Kind: kind, ExcludeStatuses: unindexedStatuses(kind)}
}
