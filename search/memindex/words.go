package memindex

import (
	"cmp"
	"maps"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/calendar/eventcal/search"
)

// This file is the text index: the words of each language and visibility
// (vocabularies), the postings a write builds and merges into them, and
// how a query term finds its words (walk) and their rows (match).

// builtKey names a word of one language and visibility.
type builtKey struct {
	lang string
	vis  visibility
	w    string
}

// wordIndex builds, merges and matches the words of the languages'
// vocabularies.
type wordIndex struct{ *Index }

// build chooses the slot of each document of chunk (as linkChunk will
// take them: its own, or a free one, or a new one, also for a document
// replaced by swapping slots: see replace) and makes, outside the
// lock, the words that no vocabulary holds yet, with their postings of the
// chunk's documents, so that linking them under the lock only puts them in
// their vocabulary. A document whose ID the chunk holds twice gets no
// built words (its first version is unlinked by the second). The caller
// holds writeMu only.
func (x *wordIndex) build(chunk []prepared) ([]uint32, map[builtKey]*word) {
	count := map[docKey]int{}
	for i := range chunk {
		count[keyOf(chunk[i].d)]++
	}
	slots := make([]uint32, len(chunk))
	assigned := map[docKey]uint32{}
	free, next := len(x.free), uint32(len(x.rows))
	built := map[builtKey]*word{}
	fresh := func() uint32 {
		if free > 0 {
			free--
			return x.free[free]
		}
		next++
		return next - 1
	}
	for i := range chunk {
		p := &chunk[i]
		k := keyOf(p.d)
		slot, ok := x.slotOf(k)
		if ok && x.swaps(p, slot) {
			slot = fresh() // replaced by swapping slots (see replace)
		} else if !ok {
			if slot, ok = assigned[k]; !ok {
				slot = fresh()
				assigned[k] = slot
			}
		}
		slots[i] = slot
		if count[k] > 1 || p.shares {
			// A shared word list gets the slot when linked.
			continue
		}
		vis := p.visibility()
		for _, t := range p.texts {
			if t.aliasOf != "" {
				continue
			}
			v := x.existing(t.lang, vis)
			for part, words := range [2][]string{t.title, t.body} {
				for _, w := range words {
					if v != nil && v.byText[w] != nil {
						continue
					}
					k := builtKey{t.lang, vis, w}
					e := built[k]
					if e == nil {
						e = &word{text: w}
						built[k] = e
					}
					b := &e.body
					if part == 0 {
						b = &e.title
					}
					if *b == nil {
						*b = roaring.New()
					}
					(*b).Add(slot)
				}
			}
		}
	}
	return slots, built
}

// merged is the new sorted order of one vocabulary, built outside the
// lock: its live sorted and recent words and added new words (not yet in
// byText).
type merged struct {
	lang   string
	vis    visibility
	sorted []string
	added  map[string]struct{}
}

// premerge returns the new sorted order of every vocabulary whose new
// words (those of chunk not in it yet), with the ones already waiting,
// would exceed recentMax. The caller holds writeMu only: no other writer
// changes the vocabularies it reads.
func (x *wordIndex) premerge(chunk []prepared) []merged {
	type key struct {
		lang string
		vis  visibility
	}
	news := map[key]map[string]struct{}{}
	for i := range chunk {
		p := &chunk[i]
		if p.shares {
			continue // the words of an earlier document
		}
		for _, t := range p.texts {
			if t.aliasOf != "" {
				continue
			}
			k := key{t.lang, p.visibility()}
			v := x.existing(k.lang, k.vis)
			for _, ws := range [][]string{t.title, t.body} {
				for _, w := range ws {
					if v != nil && v.byText[w] != nil {
						continue
					}
					if news[k] == nil {
						news[k] = map[string]struct{}{}
					}
					news[k][w] = struct{}{}
				}
			}
		}
	}
	var out []merged
	for k, set := range news {
		v := x.existing(k.lang, k.vis)
		waiting := 0
		if v != nil {
			waiting = len(v.recent)
		}
		if waiting+len(set) <= x.recentMax {
			continue
		}
		add := slices.Collect(maps.Keys(set))
		var live []string
		if v != nil {
			add = append(add, v.recent...)
			live = v.sorted
			if v.stale > 0 {
				live = make([]string, 0, len(v.sorted)-v.stale)
				for _, w := range v.sorted {
					if v.byText[w] != nil {
						live = append(live, w)
					}
				}
			}
		}
		slices.Sort(add)
		out = append(out, merged{lang: k.lang, vis: k.vis, sorted: mergeSorted(live, add), added: set})
	}
	return out
}

// mergeSorted merges two sorted lists of distinct words.
func mergeSorted(a, b []string) []string {
	out := make([]string, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if a[i] < b[j] {
			out = append(out, a[i])
			i++
		} else {
			out = append(out, b[j])
			j++
		}
	}
	out = append(out, a[i:]...)
	return append(out, b[j:]...)
}

// language returns the words of lang, creating them.
func (x *wordIndex) language(lang string) *language {
	l := x.langs[lang]
	if l == nil {
		l = &language{parts: map[visibility]*vocabulary{}, aliases: map[string]*roaring.Bitmap{}}
		x.langs[lang] = l
	}
	return l
}

// vocabulary returns the vocabulary of lang and vis, creating it.
func (x *wordIndex) vocabulary(lang string, vis visibility) *vocabulary {
	l := x.language(lang)
	v := l.parts[vis]
	if v == nil {
		v = &vocabulary{byText: map[string]*word{}, lang: lang, vis: vis}
		l.parts[vis] = v
	}
	return v
}

// existing returns the vocabulary of lang and vis, or nil.
func (x *wordIndex) existing(lang string, vis visibility) *vocabulary {
	if l := x.langs[lang]; l != nil {
		return l.parts[vis]
	}
	return nil
}

// add records that the row at slot holds words (distinct, in its title or
// body), appending the postings to refs; the slot is in no bitmap of the
// vocabulary yet, except those of the words the writer built for it
// (built: nil when none). A new word not sorted yet waits in recent (the
// writer merges, see premerge).
func (v *vocabulary) add(refs []*word, slot uint32, words []string, title bool, built func(string) *word) []*word {
	for _, w := range words {
		e := v.byText[w]
		if e == nil {
			if e = built(w); e == nil {
				e = &word{text: w}
			}
			e.vocab = v
			v.byText[w] = e
			if _, ok := v.pending[w]; ok {
				delete(v.pending, w) // merged in ahead
				v.stale--
			} else if v.stale > len(v.pending) && sortedHas(v.sorted, w) {
				v.stale-- // left there when it went
			} else {
				v.recent = append(v.recent, w)
			}
		}
		b := &e.body
		if title {
			b = &e.title
		}
		if *b == nil {
			*b = roaring.New()
		}
		(*b).Add(slot)
		v.joinPrefixes(w, slot, title)
		refs = append(refs, e)
	}
	return refs
}

// sortedHas reports whether the sorted words hold w.
func sortedHas(sorted []string, w string) bool {
	_, ok := slices.BinarySearch(sorted, w)
	return ok
}

// textWords returns the words of an indexed text by the contract's rules.
func textWords(s string) []string { return search.IndexedWords(search.PlainText(s)) }

// merge sorts the recent words into sorted and drops the stale ones.
func (v *vocabulary) merge() {
	slices.Sort(v.recent)
	out := make([]string, 0, len(v.byText))
	i := 0
	for _, w := range v.sorted {
		if v.byText[w] == nil {
			continue
		}
		for ; i < len(v.recent) && v.recent[i] < w; i++ {
			out = append(out, v.recent[i])
		}
		out = append(out, w)
	}
	v.sorted, v.recent, v.stale = append(out, v.recent[i:]...), nil, 0
}

// match returns the rows where term t matches a word (in the title or the
// body) of their text in l's language, and, when scored, the same rows
// split by how they match: the words of l, and of each language l aliases
// to for the aliased rows. Only the vocabularies of the visibilities p
// keeps are read, and the rows a writer holds hidden (holds) are left out.
//
// The rows it returns may be a bitmap of the index (a short prefix's
// joined rows: prefixRows.all), which no one may change (shared: the
// caller keeps them read-only, as the match cache's entries are); else
// they are a new bitmap, the caller's.
func (x *wordIndex) match(p *plan, l *language, t search.Term, scored bool) (rows *roaring.Bitmap, classes []scoredClass, shared bool) {
	matched, shared, parts := x.matchParts(p, l, t, scored)
	for lang, rows := range l.aliases {
		if rows.IsEmpty() {
			continue
		}
		m, mShared, cs := x.matchParts(p, x.langs[lang], t, scored)
		whole := x.aliasesAll(rows)
		if !whole {
			x.aliasTested.Add(m.GetCardinality())
		}
		matched, shared = joinAliasedShared(matched, shared, m, mShared, rows, whole)
		if scored {
			for k := range parts {
				parts[k] = joinAliased(parts[k], cs[k], rows, whole)
			}
		}
	}
	if !x.hidden.IsEmpty() {
		// Rows a writer is linking or unlinking word by word (holds).
		if shared {
			matched = roaring.AndNot(matched, x.hidden)
		} else {
			matched.AndNot(x.hidden)
		}
		if scored {
			for _, c := range parts {
				c.AndNot(x.hidden)
			}
		}
	}
	if !scored {
		return matched, nil, shared
	}
	weights := [6]float64{
		scoreTitle * scoreExact, scoreTitle * scorePrefix, scoreTitle * scoreTypo,
		scoreExact, scorePrefix, scoreTypo,
	}
	var out []scoredClass
	for k, b := range parts {
		if !b.IsEmpty() {
			out = append(out, scoredClass{rows: b, score: weights[k]})
		}
	}
	// Best first, so a row's score for this word is its first class.
	slices.SortStableFunc(out, func(a, b scoredClass) int { return cmp.Compare(b.score, a.score) })
	return matched, out, shared
}

// aliasesAll reports whether the alias rows hold every document of the
// index (every event's text in a language is another's: the service's
// seven languages falling back to one text), and so every row a word
// matches: then joinAliased need not test m against them (an
// intersection's count over every row the word matches, a tenth of a
// cold typeahead query's CPU with many series). It holds when no writer
// holds a row hidden (holds): a row is then in the alias rows only while
// it is a document (link adds it in the hold that counts it, unlink
// takes it out in the hold that uncounts it), and a word's rows are
// documents too.
func (x *wordIndex) aliasesAll(rows *roaring.Bitmap) bool {
	return aliasesAllTested && x.hidden.IsEmpty() && rows.GetCardinality() == uint64(x.docs)
}

// aliasesAllTested: match trusts aliasesAll. A variable so that the
// tests can compare with testing every aliased match.
var aliasesAllTested = true

// joinAliased returns into joined with the rows of m (a bitmap of its
// own, which it may change) that rows holds: the rows of an aliased
// language's words whose text is that language's. It copies no bitmap it
// need not: m is not narrowed when rows holds it whole (the rows of every
// document aliased: an intersection with a full container would copy
// each of m's), and is returned itself when into is empty. With whole,
// rows holds every row m may hold (aliasesAll), and m is not tested.
func joinAliased(into, m, rows *roaring.Bitmap, whole bool) *roaring.Bitmap {
	if m.IsEmpty() {
		return into
	}
	if !whole && m.AndCardinality(rows) != m.GetCardinality() {
		m.And(rows)
	}
	if into.IsEmpty() {
		return m
	}
	into.Or(m)
	return into
}

// joinAliasedShared is joinAliased for rows that may be bitmaps of the
// index (shared: into when intoShared, m when mShared), which it copies
// before it changes them and returns as they are otherwise: an aliased
// language's short prefix (the rows of every document aliased) is its
// joined rows themselves. It reports whether the result is shared.
func joinAliasedShared(into *roaring.Bitmap, intoShared bool, m *roaring.Bitmap, mShared bool, rows *roaring.Bitmap, whole bool) (*roaring.Bitmap, bool) {
	if m.IsEmpty() {
		return into, intoShared
	}
	if !whole && m.AndCardinality(rows) != m.GetCardinality() {
		if mShared {
			m, mShared = roaring.And(m, rows), false
		} else {
			m.And(rows)
		}
	}
	if into.IsEmpty() {
		return m, mShared
	}
	if intoShared {
		into = into.Clone()
	}
	into.Or(m)
	return into, false
}

// matchParts returns the rows where t matches a word of l's vocabularies
// of the visibilities p keeps, and when scored the six classes of
// scoredClass (title exact, prefix, typo, then body exact, prefix, typo)
// as bitmaps. The rows are shared (a bitmap of the index, which no one
// may change) when they are one short prefix's joined rows
// (prefixRows.all): a search box's first letters then copy no rows.
func (x *wordIndex) matchParts(p *plan, l *language, t search.Term, scored bool) (*roaring.Bitmap, bool, [6]*roaring.Bitmap) {
	var parts []*roaring.Bitmap
	var classes [6][]*roaring.Bitmap
	checked := 0
	for vis, v := range l.parts {
		if !p.keeps(vis) {
			continue
		}
		if u := v.prefixRows(t); u != nil {
			// A prefix of one or two letters: its words' rows joined,
			// the exact word's apart for the scores (a row that holds
			// it is in the prefix's rows too, but its exact class
			// scores higher: plan.score takes that first).
			checked++
			if u.all != nil {
				parts = append(parts, u.all)
			}
			exact := v.byText[t.Word]
			for g, b := range [2]*roaring.Bitmap{u.title, u.body} {
				if b == nil {
					continue
				}
				if !scored {
					continue
				}
				if exact != nil {
					if eb := [2]*roaring.Bitmap{exact.title, exact.body}[g]; eb != nil {
						classes[3*g] = append(classes[3*g], eb)
					}
				}
				classes[3*g+1] = append(classes[3*g+1], b)
			}
			continue
		}
		checked += v.walk(t, func(e *word) {
			k := 2
			switch {
			case e.text == t.Word:
				k = 0
			case t.Prefix && strings.HasPrefix(e.text, t.Word):
				k = 1
			}
			for g, b := range []*roaring.Bitmap{e.title, e.body} {
				if b != nil {
					parts = append(parts, b)
					if scored {
						classes[3*g+k] = append(classes[3*g+k], b)
					}
				}
			}
		})
	}
	x.checked.Add(uint64(checked))
	var out [6]*roaring.Bitmap
	if scored {
		for k, bs := range classes {
			out[k] = roaring.FastOr(bs...)
		}
	}
	if len(parts) == 1 && joinedShared {
		return parts[0], true, out
	}
	return roaring.FastOr(parts...), false, out
}

// joinedShared: matchParts hands out a short prefix's joined rows
// themselves, not a copy. A variable so that the tests can compare with
// copying them.
var joinedShared = true

// walk calls fn for every word of the vocabulary that t matches
// (search.Term.Matches), each once. The walk reads only the words that can
// match: the one word for an exact term, the words starting with it for a
// prefix, the words with its first letter for one typo. With two typos
// (nine letters or more) another first letter counts as both typos, so
// such a word is within one edit of the term and the edit is at its start:
// the word (or, for a prefix term, a prefix of it) is c+term[1:], c+term,
// term[1:] or term[1]+term[0]+term[2:] for some letter c. The walk then
// reads the words with the term's first letter, and, of every other first
// letter c, those starting with c+term[1] or c+term[0], and those starting
// with term[1:] or term[1]+term[0]. New words not yet sorted are all
// checked. With one typo, when more than typoJumpMin sorted words share
// the term's first letter, the walk reads only the words that can be
// within one typo keeping that letter: those starting with term[:2],
// term[0]+term[2]+term[3] or term[0]+term[2]+term[1], and, of every
// second letter c, those starting with term[0]+c+term[1] or
// term[0]+c+term[2]. It returns the number of words it read (each word it
// compared with the term, each recent word, each first or second letter
// it jumped to).
func (v *vocabulary) walk(t search.Term, fn func(*word)) int {
	return v.walkJumping(t, fn, typoJumpMin)
}

// typoJumpMin is the number of sorted words sharing a one-typo term's
// first letter above which the walk jumps from one second letter to the
// next (two binary searches for each) rather than checking each word: a
// small vocabulary (a small index's) has few words under a letter, and
// checking them costs less than the searches.
const typoJumpMin = 256

// walkJumping is walk, jumping over the second letters of a one-typo
// term's first letter when more than jumpMin sorted words hold it (the
// tests take both ways).
func (v *vocabulary) walkJumping(t search.Term, fn func(*word), jumpMin int) int {
	if len(t.Word) > search.MaxWordBytes {
		return 0
	}
	if t.Typos == 0 && !t.Prefix {
		if e := v.byText[t.Word]; e != nil {
			fn(e)
		}
		return 1
	}
	seen := map[string]bool{}
	checked := 0
	visit := func(w string) {
		checked++
		if e := v.byText[w]; e != nil && !seen[w] && t.Matches(w) {
			seen[w] = true
			fn(e)
		}
	}
	walkPrefix := func(prefix string) {
		for i := sort.SearchStrings(v.sorted, prefix); i < len(v.sorted) && strings.HasPrefix(v.sorted[i], prefix); i++ {
			visit(v.sorted[i])
		}
	}
	r0, n0 := utf8.DecodeRuneInString(t.Word)
	switch {
	case t.Typos == 0:
		walkPrefix(t.Word)
		walkRecent(v, t.Word, visit)
		return checked + len(v.recent)
	case t.Typos < 2:
		first := t.Word[:n0]
		lo := sort.SearchStrings(v.sorted, first)
		n := sort.Search(len(v.sorted)-lo, func(j int) bool { return !strings.HasPrefix(v.sorted[lo+j], first) })
		checked++
		s1, n1 := utf8.DecodeRuneInString(t.Word[n0:])
		s2, n2 := utf8.DecodeRuneInString(t.Word[n0+n1:])
		_, n3 := utf8.DecodeRuneInString(t.Word[n0+n1+n2:])
		if n <= jumpMin || n3 == 0 || s1 == utf8.RuneError || s2 == utf8.RuneError {
			walkPrefix(first)
			walkRecent(v, first, visit)
			return checked + len(v.recent)
		}
		// A word within one typo, the first letter kept, has at least
		// len(term)-1 >= 3 letters, and its first three are term[:2]
		// and any letter, term[0]+term[2]+term[3] (term[1] deleted),
		// term[0]+term[2]+term[1] (swapped), or term[0], any letter and
		// term[1] (one inserted) or term[2] (term[1] replaced).
		c1, c2, c3 := t.Word[n0:n0+n1], t.Word[n0+n1:n0+n1+n2], t.Word[n0+n1+n2:n0+n1+n2+n3]
		walkPrefix(first + c1)
		walkPrefix(first + c2 + c3)
		walkPrefix(first + c2 + c1)
		for i := lo; i < lo+n; {
			_, size := utf8.DecodeRuneInString(v.sorted[i][len(first):])
			if size == 0 {
				i++ // the first letter alone: too short to match
				continue
			}
			second := v.sorted[i][:len(first)+size]
			walkPrefix(second + c1)
			walkPrefix(second + c2)
			i += sort.Search(lo+n-i, func(j int) bool { return !strings.HasPrefix(v.sorted[i+j], second) })
			checked++
		}
		walkRecent(v, first, visit)
		return checked + len(v.recent)
	}
	walkRecent(v, "", visit)
	rest := t.Word[n0:]
	r1, _ := utf8.DecodeRuneInString(rest)
	walkPrefix(string(r0))
	walkPrefix(rest)
	walkPrefix(string(r1) + string(r0))
	// Every other first letter: jump from one to the next.
	for i := 0; i < len(v.sorted); {
		c, n := utf8.DecodeRuneInString(v.sorted[i])
		first := v.sorted[i][:n]
		if c != r0 {
			walkPrefix(first + string(r1))
			walkPrefix(first + string(r0))
		}
		i += sort.Search(len(v.sorted)-i, func(j int) bool { return !strings.HasPrefix(v.sorted[i+j], first) })
		checked++
	}
	return checked + len(v.recent)
}

// walkRecent visits the words not yet sorted that start with prefix.
func walkRecent(v *vocabulary, prefix string, visit func(string)) {
	for _, w := range v.recent {
		if strings.HasPrefix(w, prefix) {
			visit(w)
		}
	}
}

// prefixLetters is the length, in letters, up to which a vocabulary keeps
// the rows of each prefix of its words joined (vocabulary.prefixes): a
// typed prefix that short (search-as-you-type's first letters) expands
// to many words, whose postings a query would otherwise join at a cost
// that grows with the rows that hold them. A row's words leave together
// (unlink), so a row leaves a prefix's rows with its words.
const prefixLetters = 2

// joinedPrefixes: queries read the joined rows of short prefixes. A
// variable so that the tests can compare with walking their words.
var joinedPrefixes = true

// prefixRows is the rows whose title and whose body (description,
// excerpt) hold a word with one prefix (nil: none), and all, the rows of
// either (title or body), which a query's match hands out shared rather
// than join the two again: a one-letter prefix's rows are a large part
// of the index, and joining them cost a copy of them on every query that
// missed the match cache. A row leaves all with its first word that has
// the prefix: its words leave together, in one hold (holds), the row
// hidden from the matches meanwhile.
type prefixRows struct{ title, body, all *roaring.Bitmap }

// shortPrefixes calls fn with each prefix of w of one to prefixLetters
// letters.
func shortPrefixes(w string, fn func(string)) {
	for i, n := 0, 0; n < prefixLetters && i < len(w); n++ {
		_, size := utf8.DecodeRuneInString(w[i:])
		i += size
		fn(w[:i])
	}
}

// joinPrefixes adds slot to the rows of the short prefixes of word w (in
// the title or the body).
func (v *vocabulary) joinPrefixes(w string, slot uint32, title bool) {
	shortPrefixes(w, func(p string) {
		if v.prefixes == nil {
			v.prefixes = map[string]*prefixRows{}
		}
		u := v.prefixes[p]
		if u == nil {
			u = &prefixRows{}
			v.prefixes[p] = u
		}
		b := &u.body
		if title {
			b = &u.title
		}
		if *b == nil {
			*b = roaring.New()
		}
		(*b).Add(slot)
		if u.all == nil {
			u.all = roaring.New()
		}
		u.all.Add(slot)
	})
}

// sharedPrefixes returns the distinct prefix bitmaps (title and body)
// that joinPrefixes adds a row of like's words to, each once, kept in
// likePrefixes for the writer's chunk or load: the occurrences of a
// series share their words, and their prefixes' names were hashed and
// their bitmaps added to once per word (most words of a text share their
// first letter with others). The bitmaps stay those of the prefixes
// while the write lasts: a row of like's body is live and in each of them,
// so none is emptied or dropped (leavePrefixes).
func (x *wordIndex) sharedPrefixes(like *rowBody) []*roaring.Bitmap {
	if bs, ok := x.likePrefixes[like]; ok {
		return bs
	}
	var bs []*roaring.Bitmap
	seen := map[*roaring.Bitmap]struct{}{}
	for i, w := range like.words {
		title := i < int(like.nTitle)
		shortPrefixes(w.text, func(p string) {
			u := w.vocab.prefixes[p]
			b := u.body
			if title {
				b = u.title
			}
			for _, b := range [2]*roaring.Bitmap{b, u.all} {
				if _, ok := seen[b]; !ok {
					seen[b] = struct{}{}
					bs = append(bs, b)
				}
			}
		})
	}
	if x.likePrefixes == nil {
		x.likePrefixes = map[*rowBody][]*roaring.Bitmap{}
	}
	x.likePrefixes[like] = bs
	return bs
}

// leavePrefixes removes slot from the rows of the short prefixes of word
// w (in the title or the body): the row at slot leaves with all its
// words.
func (v *vocabulary) leavePrefixes(w string, slot uint32, title bool) {
	shortPrefixes(w, func(p string) {
		u := v.prefixes[p]
		if u == nil {
			return
		}
		b := &u.body
		if title {
			b = &u.title
		}
		for _, b := range [2]**roaring.Bitmap{b, &u.all} {
			if *b != nil {
				if (*b).Remove(slot); (*b).IsEmpty() {
					*b = nil
				}
			}
		}
		if u.title == nil && u.body == nil {
			delete(v.prefixes, p)
		}
	})
}

// prefixRows returns the joined rows of t's words when t is a prefix term
// of at most prefixLetters letters without typos (nil otherwise, or when
// no word has it: the walk then finds none either).
func (v *vocabulary) prefixRows(t search.Term) *prefixRows {
	if !joinedPrefixes || !t.Prefix || t.Typos != 0 || utf8.RuneCountInString(t.Word) > prefixLetters {
		return nil
	}
	return v.prefixes[t.Word]
}
