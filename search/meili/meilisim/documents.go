package meilisim

// Documents: the document routes and an index's document store.

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
)

// Put stores a document under its primary key value, numbering it.
func (ix *Index) Put(doc map[string]any) {
	pk := ix.PrimaryKey
	if pk == "" {
		pk = "id"
	}
	key := sprint(doc[pk])
	ix.Docs[key] = doc
	if _, ok := ix.Internal[key]; ok {
		return
	}
	for ix.Used[ix.Low] {
		ix.Low++
	}
	ix.Internal[key], ix.Used[ix.Low] = ix.Low, true
}

// Remove deletes the document stored under key.
func (ix *Index) Remove(key string) {
	if n, ok := ix.Internal[key]; ok {
		delete(ix.Used, n)
		ix.Low = min(ix.Low, n)
	}
	delete(ix.Docs, key)
	delete(ix.Internal, key)
}

// KeyOf returns the primary key value of a stored document.
func (ix *Index) KeyOf(doc map[string]any) string {
	pk := ix.PrimaryKey
	if pk == "" {
		pk = "id"
	}
	return sprint(doc[pk])
}

// sprint is fmt.Sprint(v) for a decoded JSON value, without fmt for the
// strings and numbers keys and sort ties are made of (the simulator makes
// one for every document of every search).
func sprint(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64) // fmt's %v of a float64
	}
	return fmt.Sprint(v)
}

// documentRoutes answers the document routes of an index.
type documentRoutes struct{ *Server }

// AddDocuments answers POST /indexes/{uid}/documents with a documentAdditionOrUpdate task.
func (f *documentRoutes) AddDocuments(w http.ResponseWriter, r *http.Request) {
	uid := r.PathValue("uid")
	docs, _ := bodyOf(r).([]any)
	describe := func(t *Task) {
		t.Bytes = r.ContentLength
		for _, d := range docs {
			if doc, ok := d.(map[string]any); ok {
				t.IDs = append(t.IDs, fmt.Sprint(doc["id"]))
			}
		}
	}
	f.enqueueTask(w, "documentAdditionOrUpdate", uid, false, func() *APIError {
		pk := r.URL.Query().Get("primaryKey")
		ix, ok := f.Indexes[uid]
		if !ok {
			ix = f.NewIndex(pk)
			f.Indexes[uid] = ix
		}
		if ix.PrimaryKey == "" {
			ix.PrimaryKey = pk
		}
		if pk != "" && pk != ix.PrimaryKey {
			// Meilisearch refuses a primaryKey parameter that is not the
			// index's (index_primary_key_already_exists).
			e := NewAPIError("index_primary_key_already_exists", fmt.Sprintf("Index `%s`: Index already has a primary key: `%s`.", uid, ix.PrimaryKey))
			return &e
		}
		for _, d := range docs {
			doc := d.(map[string]any)
			id, ok := doc[ix.PrimaryKey]
			if !ok && ix.PrimaryKey != "" {
				e := NewAPIError("missing_document_id", fmt.Sprintf("Document doesn't have a `%s` attribute: `%v`.", ix.PrimaryKey, doc))
				return &e
			}
			if ok && !validDocumentID(id) {
				e := NewAPIError("invalid_document_id", fmt.Sprintf("Document identifier `%s` is invalid. A document identifier can be of type integer or string, only composed of alphanumeric characters (a-z A-Z 0-9), hyphens (-) and underscores (_), and can not be more than 511 bytes.", JSONString(id)))
				return &e
			}
		}
		for _, d := range docs {
			ix.Put(d.(map[string]any))
		}
		ix.Writes++
		return nil
	}, describe)
}

// DeleteByFilter answers POST /indexes/{uid}/documents/delete: a
// documentDeletion task that removes the documents matching the filter
// (filterable attributes only, as Meilisearch requires).
func (f *documentRoutes) DeleteByFilter(w http.ResponseWriter, r *http.Request) {
	uid := r.PathValue("uid")
	body, _ := bodyOf(r).(map[string]any)
	fs, _ := body["filter"].(string)
	// crates/meilisearch/src/routes/indexes/documents.rs
	// (delete_documents_by_filter): the filter is parsed before the task
	// is enqueued; a malformed or empty one is 400 invalid_document_filter
	// at once, and no task is registered. Whether its attributes are
	// filterable is only known when the task runs (then the task fails).
	if _, err := (&filterParser{src: fs, syntaxOnly: true}).parse(); err != nil || strings.TrimSpace(fs) == "" {
		msg := "Sending an empty filter is forbidden."
		if err != nil {
			msg = fmt.Sprintf("%v in %q", err, fs)
		}
		f.Reply(w, 400, NewAPIError("invalid_document_filter", msg))
		return
	}
	f.enqueue(w, "documentDeletion", uid, true, func() *APIError {
		ix, ok := f.Indexes[uid]
		if !ok {
			e := NewAPIError("index_not_found", fmt.Sprintf("Index `%s` not found.", uid))
			return &e
		}
		var filterable []string
		list, _ := ix.Settings["filterableAttributes"].([]any)
		for _, a := range list {
			filterable = append(filterable, fmt.Sprint(a))
		}
		match, err := (&filterParser{src: fs, filterable: filterable, cos: f.GeoCos}).parse()
		if err != nil || fs == "" {
			e := NewAPIError("invalid_document_filter", fmt.Sprintf("%v in %q", err, fs))
			return &e
		}
		for key, doc := range ix.Docs {
			if match(doc) {
				ix.Remove(key)
			}
		}
		ix.Writes++
		return nil
	})
}

// GetDocument answers GET /indexes/{uid}/documents/{id}.
func (f *documentRoutes) GetDocument(w http.ResponseWriter, r *http.Request) {
	_, ix := f.PathIndex(w, r)
	if ix == nil {
		return
	}
	id := r.PathValue("id")
	f.Mu.Lock()
	doc, ok := ix.Docs[id]
	answer := JSONValue(doc)
	f.Mu.Unlock()
	if !ok {
		f.Reply(w, 404, NewAPIError("document_not_found", fmt.Sprintf("Document `%s` not found.", id)))
		return
	}
	f.Reply(w, 200, answer)
}

// DeleteDocuments answers POST /indexes/{uid}/documents/delete-batch with a documentDeletion task.
func (f *documentRoutes) DeleteDocuments(w http.ResponseWriter, r *http.Request) {
	uid := r.PathValue("uid")
	ids, _ := bodyOf(r).([]any)
	f.Enqueue(w, "documentDeletion", uid, func() *APIError {
		ix, ok := f.Indexes[uid]
		if !ok {
			return indexNotFound(uid)
		}
		for _, id := range ids {
			ix.Remove(fmt.Sprint(id))
		}
		ix.Writes++
		return nil
	})
}

// validDocumentID is Meilisearch's rule for a primary key value
// (validate_document_id_value in crates/milli/src/documents/
// primary_key.rs): an integer, or a string of 1 to 511 bytes of ASCII
// letters, digits, '-' and '_'. The task of a document breaking it fails
// with invalid_document_id (the simulator fails that task only, not the
// rest of its batch).
func validDocumentID(v any) bool {
	switch id := v.(type) {
	case float64:
		return id == math.Trunc(id) && math.Abs(id) < 1<<63
	case string:
		if id == "" || len(id) >= 512 {
			return false
		}
		for _, c := range id {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
		return true
	}
	return false
}
