package bleve

import (
	"fmt"
	"unicode/utf8"

	bleve "github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/calendar/eventcal/search"
)

// This file builds the text part of a query by the contract's
// text-matching rules (search/text.go): each term of search.ParseQuery
// becomes the disjunction of the index words it matches, and the terms
// are joined by a conjunction.
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

// Boosts of the relevance order (orderby=relevance): a title outweighs
// the description and excerpt, an exact word outweighs a prefix, and a
// prefix outweighs a typo. The ratios are wide so that a record whose
// title holds every word exactly ranks before one that matches only
// through typos in its description, whatever the words' frequencies.
const (
	boostTitle  = 4.0
	boostExact  = 1.0
	boostPrefix = 0.4
	boostTypo   = 0.1
)

// textQuery returns the query of the event text: every term matches in one
// of the language's title, description or excerpt. nil when the query has
// no words.
func textQuery(idx bleve.Index, lang string, terms []search.Term) (query.Query, error) {
	if len(terms) == 0 {
		return nil, nil
	}
	fields := []string{textField(lang, "title"), textField(lang, "description"), textField(lang, "excerpt")}
	and := make([]query.Query, 0, len(terms))
	for _, t := range terms {
		var or []query.Query
		for _, f := range fields {
			q, err := termQuery(idx, f, t)
			if err != nil {
				return nil, err
			}
			if q != nil {
				or = append(or, q)
			}
		}
		if len(or) == 0 {
			return query.NewMatchNoneQuery(), nil
		}
		and = append(and, anyOf(or))
	}
	return all(and), nil
}

// placeTextQuery returns the query of a place's text: all terms match in
// one field (reference 7.1), one of fields.
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
	boost := 1.0
	if isTitle(field) {
		boost = boostTitle
	}
	if t.Typos == 0 {
		exact := boosted(term(field, t.Word), boost*boostExact)
		if !t.Prefix {
			return exact, nil
		}
		p := query.NewPrefixQuery(t.Word)
		p.SetField(field)
		p.SetBoost(boost * boostPrefix)
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
		w := e.Term
		if !t.Matches(w) {
			continue
		}
		b := boostTypo
		switch {
		case w == t.Word:
			b = boostExact
		case t.Prefix && len(w) > len(t.Word) && w[:len(t.Word)] == t.Word:
			b = boostPrefix
		}
		or = append(or, boosted(term(field, w), boost*b))
	}
	if len(or) == 0 {
		return nil, nil
	}
	return anyOf(or), nil
}

func isTitle(field string) bool {
	const suffix = ".title"
	return len(field) > len(suffix) && field[len(field)-len(suffix):] == suffix
}

func boosted(q query.Query, b float64) query.Query {
	if bq, ok := q.(query.BoostableQuery); ok {
		bq.SetBoost(b)
	}
	return q
}
