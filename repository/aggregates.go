package repository

import "context"

// PlaceEvents is what the events linked to one venue or organizer say about
// it, for its search document.
type PlaceEvents struct {
	// HasEvents is true when at least one linked event is neither a draft
	// nor pending (trashed events count), as the original plugin defines
	// the has_events filter.
	HasEvents bool
	// LatestStart maps each registered status (Statuses) held by at least
	// one linked event to the latest start among those events, as Unix
	// seconds of StartUTC.
	LatestStart map[string]int64
}

// CountsForHasEvents reports whether an event with this status makes its
// venues and organizers "have events" (as in the original plugin: drafts
// and pending events do not; trashed ones do).
func CountsForHasEvents(status string) bool {
	return status != StatusDraft && status != StatusPending
}

// PlaceEventsOf computes PlaceEvents for the venue or organizer id (kind
// says which link list counts) from its linked events: the definition the
// engines' PlaceEvents must match. Events that do not link id, and statuses
// that are not registered, are ignored.
func PlaceEventsOf(kind Kind, id int64, events []*Record) PlaceEvents {
	out := PlaceEvents{LatestStart: map[string]int64{}}
	for _, e := range events {
		if e == nil || e.Event == nil || !IsStatus(e.Status) {
			continue
		}
		links := e.Event.Venues
		if kind == KindOrganizer {
			links = e.Event.Organizers
		}
		linked := false
		for _, l := range links {
			linked = linked || l == id
		}
		if !linked {
			continue
		}
		if CountsForHasEvents(e.Status) {
			out.HasEvents = true
		}
		s := e.Event.StartUTC.Unix()
		if cur, ok := out.LatestStart[e.Status]; !ok || s > cur {
			out.LatestStart[e.Status] = s
		}
	}
	return out
}

// EventLinks are the queries over the links of events that the sync worker
// runs without reading event documents. Store includes it.
type EventLinks interface {
	// PlaceEvents returns, for each of ids that events link as kind
	// (KindVenue or KindOrganizer), the aggregate of those events. IDs no
	// event links are absent from the result. One query for the whole
	// list; on SQLite its cost does not grow with the number of events
	// linked to a place (MongoDB reads them inside the server).
	PlaceEvents(ctx context.Context, kind Kind, ids []int64) (map[int64]PlaceEvents, error)
	// FindRecordIDs returns the IDs of the records matching q, ascending (use
	// AfterID and Limit to page), without reading their documents.
	FindRecordIDs(ctx context.Context, q RecordQuery) ([]int64, error)
}

// LabelEventCounter is implemented by stores that count the published
// events of several labels in one query (the MongoDB engine: one command
// instead of one count per label). Renderers use it when the store has it
// and CountPosts per label otherwise.
type LabelEventCounter interface {
	// CountLabelEvents returns, for each of ids (categories and tags
	// alike) that at least one published event uses, how many published
	// events use it.
	CountLabelEvents(ctx context.Context, ids []int64) (map[int64]int, error)
}
