package meilisim

import (
	"sync"
	"unsafe"
)

// textAt names a text by its tokenizer and the address and length of its
// bytes: a stored document's attribute is the same string from one search
// to the next, so its words are found without hashing or comparing the
// whole text (which the memos keyed by the text itself do, a cost per
// document and attribute of every search).
type textAt struct {
	tok *simTokenizer
	p   *byte
	n   int
}

// wordsOfText is a text and its words. The text is kept so that a hit is
// checked (the same bytes, most often at the same address: the comparison
// is then immediate), and so that its address is not reused while the
// entry is held.
type wordsOfText struct {
	text  string
	words []string
}

// wordsByAddress remembers the words of texts by their address (textAt),
// in front of a memo keyed by the text, which computes them.
type wordsByAddress struct {
	of  func(*simTokenizer, string) []string
	mu  sync.Mutex
	max int
	m   map[textAt]wordsOfText
}

// get returns of(tok, text), remembered by text's address.
func (c *wordsByAddress) get(tok *simTokenizer, text string) []string {
	k := textAt{tok, unsafe.StringData(text), len(text)}
	c.mu.Lock()
	e, ok := c.m[k]
	c.mu.Unlock()
	if ok && e.text == text {
		return e.words
	}
	w := c.of(tok, text)
	c.mu.Lock()
	if c.m == nil || len(c.m) >= max(c.max, 1) {
		c.m = make(map[textAt]wordsOfText)
	}
	c.m[k] = wordsOfText{text, w}
	c.mu.Unlock()
	return w
}
