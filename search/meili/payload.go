package meili

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Meilisearch refuses a request body larger than its
// http_payload_size_limit (100 MB by default) with payload_too_large, 413
// (crates/meilisearch/src/extractors/payload.rs at v1.18.0), before any
// task is registered. Additions are therefore cut by the size of their
// JSON encoding, not only by count: each document is encoded once, on its
// own, and appended to the body of the current request while the body
// stays within Options.MaxRequestBytes; the body is sent as those bytes
// (the client does not encode it again) and its buffer reused for the
// next request. The memory an addition holds is thus about one request
// body and one document, whatever the number of documents or the size of
// their text (a daily two-year series with a description at its limit in
// three languages is about 1 GB of JSON when held whole).
//
// A document whose encoding alone is over the budget can never be sent:
// it is left out with a *DocumentTooLargeError, the other documents are
// still sent, and the error is returned once they are (so one event at
// the limit does not keep the rest of its batch out of the index).

// DefaultMaxRequestBytes is the default of Options.MaxRequestBytes
// (MEILI_MAX_REQUEST_BYTES): a fifth of Meilisearch's default payload
// limit.
const DefaultMaxRequestBytes = 20 << 20

// DocumentTooLargeError is a document whose JSON encoding alone is larger
// than the request budget (Options.MaxRequestBytes): it was not sent.
type DocumentTooLargeError struct {
	// IndexUID is the index the document was meant for.
	IndexUID string
	// Key is the document's primary key value (for events, the
	// occurrence key search.DocumentKey).
	Key string
	// Bytes is the size of the document's encoding; Limit the budget.
	Bytes, Limit int
}

// Error names the document, its size and the setting that bounds it.
func (e *DocumentTooLargeError) Error() string {
	return fmt.Sprintf("meili: document %s of %s is %d bytes encoded, over the request budget of %d bytes (MEILI_MAX_REQUEST_BYTES): not indexed",
		e.Key, e.IndexUID, e.Bytes, e.Limit)
}

// cutDocuments encodes n documents, built one at a time by doc, into JSON
// array bodies of at most maxDocs documents and maxBytes bytes each, and
// calls send with each body and the indexes of its first and last
// documents. The body passed to send is reused afterwards: send must not
// keep it. pk names the primary key attribute, for error messages.
//
// A document over maxBytes on its own is skipped; the *DocumentTooLargeError
// values of the skipped documents are returned (joined) after every other
// document was sent. An error of send is returned at once.
func cutDocuments(uid, pk string, n, maxDocs, maxBytes int, doc func(int) map[string]any, send func(body []byte, first, last int) error) error {
	var (
		body    bytes.Buffer
		one     bytes.Buffer
		count   int
		first   int
		last    int
		skipped []error
	)
	enc := json.NewEncoder(&one)
	// Plain text holds '<', '>' and '&'; escaping them as \u003c would
	// make the body up to six times the text.
	enc.SetEscapeHTML(false)
	flush := func() error {
		if count == 0 {
			return nil
		}
		body.WriteByte(']')
		err := send(body.Bytes(), first, last)
		body.Reset()
		count = 0
		return err
	}
	for i := range n {
		m := doc(i)
		one.Reset()
		if err := enc.Encode(m); err != nil {
			return fmt.Errorf("meili: encode document %d for %s: %w", i, uid, err)
		}
		raw := bytes.TrimSuffix(one.Bytes(), []byte{'\n'})
		// '[' + raw + ']' is the smallest body holding the document.
		if len(raw)+2 > maxBytes {
			skipped = append(skipped, &DocumentTooLargeError{IndexUID: uid, Key: fmt.Sprint(m[pk]), Bytes: len(raw), Limit: maxBytes})
			continue
		}
		// The body grows by ',' (or '[') and raw, and closes with ']'.
		if count > 0 && (count >= maxDocs || body.Len()+1+len(raw)+1 > maxBytes) {
			if err := flush(); err != nil {
				return err
			}
		}
		if count == 0 {
			body.WriteByte('[')
			first = i
		} else {
			body.WriteByte(',')
		}
		body.Write(raw)
		count++
		last = i
	}
	if err := flush(); err != nil {
		return err
	}
	return errors.Join(skipped...)
}

// tooLarge reports whether err is made only of *DocumentTooLargeError
// values: the documents that fit were sent.
func tooLarge(err error) bool {
	var one *DocumentTooLargeError
	if errors.As(err, &one) {
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				if !tooLarge(e) {
					return false
				}
			}
		}
		return true
	}
	return false
}
