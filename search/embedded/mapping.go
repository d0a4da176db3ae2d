package embedded

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/registry"

	"github.com/calendar/eventcal/search"
)

// wordsAnalyzer names the analyzer of every text field. It produces exactly
// search.Words of the text: the words of the contract's text-matching rules
// (NFKD, combining marks removed, lower case; split at charabia's
// separators, '-' among them). Bleve's own analyzers would be close but
// not equal (the "unicode" tokenizer keeps "don't" or "3.14" whole and
// splits "3°F"; its folding filters differ from NFKD), and the
// suite checks matching against search.Words; sharing the one function makes
// the index and the query agree by construction. HTML is removed before the
// text reaches the analyzer (textFields applies search.PlainText).
const wordsAnalyzer = "eventcal_words"

func init() {
	err := registry.RegisterAnalyzer(wordsAnalyzer, func(map[string]interface{}, *registry.Cache) (analysis.Analyzer, error) {
		return wordAnalyzer{}, nil
	})
	if err != nil {
		panic(err)
	}
}

// wordAnalyzer is the analyzer registered as wordsAnalyzer.
type wordAnalyzer struct{}

// Analyze returns the tokens of search.IndexedWords(input), with their
// positions: the first search.MaxAttributeWords words of a field.
// Offsets are not kept (they would point into the folded text, and
// nothing reads them: highlights are computed from the stored record).
func (wordAnalyzer) Analyze(input []byte) analysis.TokenStream {
	words := search.IndexedWords(string(input))
	tokens := make(analysis.TokenStream, 0, len(words))
	for i, w := range words {
		tokens = append(tokens, &analysis.Token{
			Term: []byte(w), Position: i + 1, Type: analysis.AlphaNumeric,
		})
	}
	return tokens
}

// The field names of the indexes. Text fields are dynamic and flattened by
// language: text.<lang>.title, text.<lang>.description, text.<lang>.excerpt;
// a place's other fields are fields.<name>; a place's latest start per event
// status is last_start.<status>.
const (
	fieldID          = "id"
	fieldStatus      = "status"
	fieldPublishDate = "publish_date"
	fieldSortPublish = "sort_publish"
	fieldHasEvents   = "has_events"
	prefixText       = "text"
	prefixFields     = "fields"
	prefixLastStart  = "last_start"
	// The text and other fields of a place that is not published: kept
	// apart (see placeFields) so that an anonymous search, which sees
	// published places only, never walks their words.
	prefixHiddenText   = "hidden_text"
	prefixHiddenFields = "hidden_fields"
)

// indexKind names one of the engine's indexes: the event store
// (events.db, see events.go) and the Bleve indexes of the places (their
// directories are <kind>.bleve).
type indexKind string

// The engine's indexes.
const (
	eventsIndex     indexKind = "events"
	venuesIndex     indexKind = "venues"
	organizersIndex indexKind = "organizers"
)

// mappingVersion is part of the fingerprint: bump it when the documents'
// shape changes without the mapping changing (for example a new way of
// filling a field, or of cutting words), so existing indexes are rebuilt.
// 4: '-' separates words (search.Words); the place indexes of version 3
// hold hyphenated words whole, which no query word reaches any more.
const mappingVersion = 4

// indexMapping declares the mapping of the place indexes (venues and
// organizers; the events are not in Bleve: see events.go). Every field is explicit except
// the text (and a place's other fields and last starts), whose names depend
// on the configured languages and fields and are indexed dynamically with
// wordsAnalyzer. Only the ID is stored, and no search loads it: a hit's
// document ID is the ID, and sorting reads doc values.
func indexMapping() *mapping.IndexMappingImpl {
	im := mapping.NewIndexMapping()
	im.DefaultAnalyzer = wordsAnalyzer
	im.StoreDynamic = false
	im.DocValuesDynamic = false
	// number: an indexed float64 (dates and IDs are exact up to 2^53).
	number := func() *mapping.FieldMapping {
		return &mapping.FieldMapping{Type: "number", Index: true}
	}
	boolean := func() *mapping.FieldMapping {
		return &mapping.FieldMapping{Type: "boolean", Index: true}
	}
	keywordField := func() *mapping.FieldMapping {
		return &mapping.FieldMapping{Type: "text", Analyzer: keyword.Name, Index: true, SkipFreqNorm: true}
	}
	// The sort key holds (date, ID) encoded so that byte order is the sort
	// order (see sortKeyOf), read from doc values: one short term per
	// document, where sorting on two numeric fields would read every
	// precision-shifted term of both.
	docValueKeyword := func() *mapping.FieldMapping {
		return &mapping.FieldMapping{Type: "text", Analyzer: keyword.Name, Index: true, DocValues: true, SkipFreqNorm: true}
	}
	doc := mapping.NewDocumentStaticMapping()
	add := func(name string, fm *mapping.FieldMapping) {
		doc.AddFieldMappingsAt(name, fm)
	}
	// dynamic is a sub-document whose fields are indexed as they come,
	// with the index's default analyzer (wordsAnalyzer) for strings.
	dynamic := func(name string) {
		sub := mapping.NewDocumentMapping()
		sub.DefaultAnalyzer = wordsAnalyzer
		doc.AddSubDocumentMapping(name, sub)
	}
	// The composite _all field would index every token a second time and
	// no query uses it.
	doc.AddSubDocumentMapping("_all", mapping.NewDocumentDisabledMapping())

	// The ID as a number, stored as well for anyone inspecting the index;
	// searches read the hit's document ID, which is the same number.
	id := number()
	id.Store = true
	add(fieldID, id)
	add(fieldStatus, keywordField())
	add(fieldPublishDate, number())
	add(fieldSortPublish, docValueKeyword())
	add("kind", keywordField())
	add(fieldHasEvents, boolean())
	dynamic(prefixText)
	dynamic(prefixFields)
	dynamic(prefixLastStart)
	dynamic(prefixHiddenText)
	dynamic(prefixHiddenFields)

	im.DefaultMapping = doc
	im.IndexDynamic = true
	return im
}

// fingerprint identifies a mapping; an index built with another one is
// rebuilt on open. encoding/json sorts map keys, so equal mappings give
// equal fingerprints.
func fingerprint(m *mapping.IndexMappingImpl) (string, error) {
	return fingerprintAt(m, mappingVersion)
}

// fingerprintAt is the fingerprint of m under a mapping version.
func fingerprintAt(m *mapping.IndexMappingImpl, version int) (string, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(fmt.Appendf(b, "\nversion %d", version))
	return hex.EncodeToString(sum[:]), nil
}
