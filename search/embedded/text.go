package embedded

import (
	"fmt"
	"sync/atomic"
	"unicode/utf8"

	bleve "github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/calendar/eventcal/search"
)

// This file builds the text part of a place query by the contract's
// text-matching rules (search/text.go): each term of search.ParseQuery
// becomes the disjunction of the index words it matches, and the terms
// are joined by a conjunction within one field (as the original plugin's
// venue and organizer search: one field must hold every word).
//
// Typo and prefix-with-typo terms are expanded here, against the field's
// term dictionary, with search.Term.Matches deciding each candidate; the
// query then holds only exact term lookups. Bleve's own fuzzy query counts
// plain Levenshtein distance (an adjacent transposition costs 2, where
// Meilisearch and the contract count 1), knows nothing of the
// first-letter rule, and stops at distance 2; deciding the candidates with
// the reference's function makes the set, and so the total, the
// reference's by construction. The dictionary walk is bounded: a term with
// one typo reads only the words that start with its first letter (the
// rule demands it), a word that cannot be within the budget by its length
// is rejected before any distance is computed, and only a term of nine or
// more characters (two typos, where another first letter is allowed)
// reads the whole dictionary of the field.

// dictWordsRead counts the dictionary words that typo expansions read:
// the part of a place search's work that grows with the vocabulary (the
// tests compare it before and after adding hidden places).
var dictWordsRead atomic.Uint64

// placeTextQuery returns the query of a place's text: all terms match in
// one field (as the original plugin's place search), one of fields.
func placeTextQuery(idx bleve.Index, fields []string, terms []search.Term) (query.Query, error) {
	if len(terms) == 0 {
		return nil, nil
	}
	var or []query.Query
	for _, f := range fields {
		and := make([]query.Query, 0, len(terms))
		for _, t := range terms {
			q, err := termQuery(idx, f, t)
			if err != nil {
				return nil, err
			}
			if q == nil {
				and = nil
				break
			}
			and = append(and, q)
		}
		if and != nil {
			or = append(or, all(and))
		}
	}
	return anyOf(or), nil
}

// termQuery returns the query of the words of field that match t, nil
// when none does.
func termQuery(idx bleve.Index, field string, t search.Term) (query.Query, error) {
	if len(t.Word) > search.MaxWordBytes {
		return nil, nil // matches nothing (search.Term.Matches)
	}
	if t.Typos == 0 {
		exact := term(field, t.Word)
		if !t.Prefix {
			return exact, nil
		}
		p := query.NewPrefixQuery(t.Word)
		p.SetField(field)
		return query.NewDisjunctionQuery([]query.Query{exact, p}), nil
	}
	// Candidates: the words starting with the term's first letter, or
	// every word when another first letter is allowed (two typos).
	first := ""
	if t.Typos < 2 {
		r, _ := utf8.DecodeRuneInString(t.Word)
		first = string(r)
	}
	dict, err := idx.FieldDictPrefix(field, []byte(first))
	if err != nil {
		return nil, fmt.Errorf("read the words of %s: %w", field, err)
	}
	defer dict.Close()
	var or []query.Query
	for {
		e, err := dict.Next()
		if err != nil {
			return nil, fmt.Errorf("read the words of %s: %w", field, err)
		}
		if e == nil {
			break
		}
		dictWordsRead.Add(1)
		if t.Matches(e.Term) {
			or = append(or, term(field, e.Term))
		}
	}
	if len(or) == 0 {
		return nil, nil
	}
	return anyOf(or), nil
}
