package meili

import (
	"context"
	"fmt"
	"sync/atomic"
)

// attributeScheme numbers the ways attr has named the flattened
// attributes of a key (a language, place field or status):
//
//  1. the key lower-cased, every character other than a-z, 0-9, '_' and
//     '-' replaced with '_': "pt-BR" and "pt-br" shared one attribute, and
//     so did two non-Latin keys of the same length;
//  2. the injective encoding of attr: no two keys share an attribute;
//  3. events of every status but publish in their own index (hidden.go);
//  4. one event document per occurrence of a recurring event, under the
//     primary key key (search.DocumentKey), id the series' ID. An index of
//     scheme 3 has primary key id: writes of the new documents to it fail
//     (the sync worker keeps their marks and retries) until the rebuild
//     that Outdated asks for swaps the new indexes in.
//  5. the editor index (<prefix>events_hidden) holds every event,
//     published included, and every event document carries its write
//     generation (hidden.go). Until the rebuild's swap, writes to live
//     indexes of an older scheme keep to that scheme's layout (hidden.go)
//     and searches read them as that scheme did.
//  6. an event document carries each distinct text once: the base text
//     (title__base, …) and the languages the event has a text of its own
//     in, named in langs (documents.go), instead of every configured
//     language's text with the missing translations filled in. A search
//     with words in a language is then two searches (Engine.runPair).
//     Until the swap, live indexes of scheme 5 are written and searched
//     with one text attribute per language, as before.
//  7. every event document carries event_status (filterable); the
//     layout is scheme 6's otherwise. Documents written before it lack
//     the attribute: until the rebuild's swap, a list filtered on
//     event_status misses them (lists without that filter are not
//     affected).
//
// The live indexes record the scheme their documents were written under in
// the metadata index. Init finds indexes that hold documents under an older
// scheme (or under no record at all: written before the record existed) and
// reports them through Outdated; the service then runs a full rebuild, the
// zero-downtime one (rebuild.go), whose Commit records the current scheme.
// Lists keep answering from the old indexes meanwhile; only keys outside
// a-z, 0-9 and '-', whose attribute names changed, miss until the swap.
const attributeScheme = 7

// metaIndex holds one document, metaDocID, describing the live indexes:
// {"id": 1, "attribute_scheme": 2}. It is not one of the swapped indexes.
const (
	metaIndex Index = "meta"
	metaDocID int   = 1
)

// metaDoc is the document of the metadata index.
type metaDoc struct {
	ID              int `json:"id"`
	AttributeScheme int `json:"attribute_scheme"`
}

// outdatedFlag is set by Init when the live indexes need a rebuild.
type outdatedFlag struct{ atomic.Bool }

// schemeStore records and checks the attribute scheme of the live
// indexes.
type schemeStore struct{ *core }

// Outdated reports whether the live indexes hold documents written under
// an older attribute scheme (as found by the last Init): they need a full
// rebuild, after which it reports false.
func (e *schemeStore) Outdated(context.Context) (bool, error) {
	return e.outdated.Load(), nil
}

// checkScheme reads the scheme recorded for the live indexes. Indexes
// recorded under attributeScheme are current. Otherwise, empty indexes
// (a new installation) are recorded as current at once, and indexes with
// documents are marked outdated.
func (e *schemeStore) checkScheme(ctx context.Context) error {
	scheme, err := e.recordedScheme(ctx)
	if err != nil {
		return err
	}
	e.liveScheme.Store(int64(scheme))
	if scheme >= attributeScheme {
		e.outdated.Store(false)
		return nil
	}
	docs := 0
	for _, ix := range indexes {
		n, err := e.count(ctx, e.IndexUID(ix))
		if err != nil {
			return err
		}
		docs += n
	}
	if docs == 0 {
		e.outdated.Store(false)
		return e.recordScheme(ctx)
	}
	e.outdated.Store(true)
	return nil
}

// recordedScheme returns the attribute scheme of the metadata document, 0
// when there is none.
func (e *schemeStore) recordedScheme(ctx context.Context) (int, error) {
	var doc metaDoc
	err := e.client.Index(e.IndexUID(metaIndex)).GetDocumentWithContext(ctx, fmt.Sprint(metaDocID), nil, &doc)
	switch code := apiCode(err); {
	case code == "document_not_found" || code == "index_not_found":
		return 0, nil
	case err != nil:
		return 0, e.fail("read the attribute scheme", err)
	}
	return doc.AttributeScheme, nil
}

// recordScheme records attributeScheme as the scheme of the live indexes.
func (e *schemeStore) recordScheme(ctx context.Context) error {
	err := e.addDocuments(ctx, e.IndexUID(metaIndex), 1, func(int) map[string]any {
		return map[string]any{"id": metaDocID, "attribute_scheme": attributeScheme}
	})
	if err != nil {
		return err
	}
	e.current()
	return nil
}

// current records that the live indexes are of the current scheme: writes
// and searches use its layout from now on.
func (e *schemeStore) current() {
	e.liveScheme.Store(attributeScheme)
	e.outdated.Store(false)
}
