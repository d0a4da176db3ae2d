package bleve

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
// (NFKD, combining marks removed, lower case; split on every character other
// than letters, digits and '-'). Bleve's own analyzers would be close but
// not equal (the "unicode" tokenizer splits "open-air" in two and keeps
// "don't" or "3.14" whole; its folding filters differ from NFKD), and the
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

// Analyze returns the tokens of search.Words(input), with their positions.
// Offsets are not kept (they would point into the folded text, and
// nothing reads them: highlights are computed from the stored record).
func (wordAnalyzer) Analyze(input []byte) analysis.TokenStream {
	words := search.Words(string(input))
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
	fieldStart       = "start"
	fieldEnd         = "end"
	fieldSortStart   = "sort_start"
	fieldSortPublish = "sort_publish"
	fieldGeo         = "geo"
	fieldPoint       = "point"
	fieldHasGeo      = "has_geo"
	fieldHasEvents   = "has_events"
	prefixText       = "text"
	prefixFields     = "fields"
	prefixLastStart  = "last_start"
)

// facetFields maps each event facet to its keyword field: the facet's
// values (search.FacetValues), whose doc values Bleve's terms facet counts.
var facetFields = map[string]string{
	search.FacetCategories: "facet_categories",
	search.FacetTags:       "facet_tags",
	search.FacetVenue:      "facet_venue",
	search.FacetOrganizer:  "facet_organizer",
	search.FacetFeatured:   "facet_featured",
	search.FacetTicketed:   "facet_ticketed",
}

// indexKind names one of the engine's indexes (its directory is
// <kind>.bleve).
type indexKind string

// The engine's indexes.
const (
	eventsIndex     indexKind = "events"
	venuesIndex     indexKind = "venues"
	organizersIndex indexKind = "organizers"
)

// mappingVersion is part of the fingerprint: bump it when the documents'
// shape changes without the mapping changing (for example a new way of
// filling a field), so existing indexes are rebuilt.
const mappingVersion = 2

// indexMapping declares the mapping of each index. Every field is explicit
// except the text (and a place's other fields and last starts), whose names
// depend on the configured languages and fields and are indexed
// dynamically with wordsAnalyzer. Only the ID is stored, and no search
// loads it: a hit's document ID is the ID, and sorting reads doc values.
// Only the sort keys, the exact point and the geo point keep doc values;
// dates and IDs are indexed numbers for range and equality queries.
func indexMapping(kind indexKind) *mapping.IndexMappingImpl {
	// number: an indexed float64 (dates and IDs are exact up to 2^53).
	number := func(docValues bool) *mapping.FieldMapping {
		return &mapping.FieldMapping{Type: "number", Index: true, DocValues: docValues}
	}
	boolean := func() *mapping.FieldMapping {
		return &mapping.FieldMapping{Type: "boolean", Index: true}
	}
	keywordField := func() *mapping.FieldMapping {
		return &mapping.FieldMapping{Type: "text", Analyzer: keyword.Name, Index: true, SkipFreqNorm: true}
	}
	// docValueKeyword is a keyword read from doc values: one short term
	// per document. The sort keys hold (date, ID) encoded so that byte
	// order is the sort order (see sortKeyOf). Sorting on one reads a
	// single term per hit; sorting on the two numeric fields instead reads
	// every precision-shifted term of both (16 each), and decompressing
	// those doc values was most of a list query's time.
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
	id := number(false)
	id.Store = true
	add(fieldID, id)
	add(fieldStatus, keywordField())
	add(fieldPublishDate, number(false))
	add(fieldSortPublish, docValueKeyword())
	dynamic(prefixText)

	switch kind {
	case eventsIndex:
		add("author", number(false))
		add(fieldStart, number(false))
		add(fieldEnd, number(false))
		add("start_local", number(false))
		add("end_local", number(false))
		for _, name := range []string{"all_day", "featured", "ticketed", "sticky", "hide_from_listings", "has_password", fieldHasGeo} {
			add(name, boolean())
		}
		for _, name := range []string{"category_ids", "tag_ids", "venue_ids", "organizer_ids", "parent_id"} {
			add(name, number(false))
		}
		add("category_slugs", keywordField())
		add("tag_slugs", keywordField())
		// The geo point, [lon, lat] as Bleve wants it, with the doc values
		// its distance filter reads; and the exact coordinates as one
		// keyword, "lat,lng", whose doc value the exact distance check
		// reads (see nearQuery). One short term per document decodes far
		// faster than two numeric fields' sixteen precision terms each.
		// The facets (facetFields): keywords read from doc values.
		for _, field := range facetFields {
			add(field, docValueKeyword())
		}
		add(fieldGeo, &mapping.FieldMapping{Type: "geopoint", Index: true, DocValues: true})
		add(fieldPoint, docValueKeyword())
		add(fieldSortStart, docValueKeyword())
	default:
		add("kind", keywordField())
		add(fieldHasEvents, boolean())
		dynamic(prefixFields)
		dynamic(prefixLastStart)
	}

	im := mapping.NewIndexMapping()
	im.DefaultMapping = doc
	im.DefaultAnalyzer = wordsAnalyzer
	im.IndexDynamic = true
	im.StoreDynamic = false
	im.DocValuesDynamic = false
	return im
}

// fingerprint identifies a mapping; an index built with another one is
// rebuilt on open. encoding/json sorts map keys, so equal mappings give
// equal fingerprints.
func fingerprint(m *mapping.IndexMappingImpl) (string, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(fmt.Appendf(b, "\nversion %d", mappingVersion))
	return hex.EncodeToString(sum[:]), nil
}
