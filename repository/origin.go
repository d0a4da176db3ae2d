package repository

import "time"

// Origin says where an imported record came from (eventcal import): the
// source site, the record's ID there, its modification time there and a
// hash of its content as imported. A record with an Origin is the same
// record as the one at the source with that site and ID; the importer uses
// it to tell its own earlier imports (to update or leave unchanged) from
// other records that happen to hold an imported ID (collisions).
//
// The API never writes it and never shows it; a local edit of an imported
// record keeps it (the next import overwrites the edit only when the
// record also changed at the source).
type Origin struct {
	// Site is the REST namespace root the record was imported from
	// (https://example.org/wp-json/tribe/events/v1), without credentials.
	Site string `json:"site" bson:"site"`
	// ID is the record's ID at the source (the same as the local ID).
	ID int64 `json:"id" bson:"id"`
	// Modified is the source's modification time (UTC); zero for labels,
	// which have none.
	Modified time.Time `json:"modified,omitzero" bson:"modified,omitempty"`
	// Hash is a digest of the record as imported (hex); a change at the
	// source changes it.
	Hash string `json:"hash" bson:"hash"`
}

// SameSource reports whether o and other name the same source record.
func (o *Origin) SameSource(other *Origin) bool {
	return o != nil && other != nil && o.Site == other.Site && o.ID == other.ID
}
