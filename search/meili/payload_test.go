package meili

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/calendar/eventcal/search"
)

// TestCutDocuments: bodies are JSON arrays of whole documents, each within
// the byte budget and the count, filled greedily in order (the next
// document would not have fit); a document over the budget alone is left
// out and named in the error, after the others were sent.
func TestCutDocuments(t *testing.T) {
	t.Parallel()
	// doc i has a text of sizes[i] bytes; its encoding is
	// {"key":"<i>","t":"<text>"}.
	tests := []struct {
		name      string
		sizes     []int
		maxDocs   int
		maxBytes  int
		wantSends [][]int
		wantSkip  []string
	}{
		{"one body", []int{10, 10, 10}, 100, 1000, [][]int{{0, 1, 2}}, nil},
		{"cut by count", []int{1, 1, 1, 1, 1}, 2, 1000, [][]int{{0, 1}, {2, 3}, {4}}, nil},
		{"cut by bytes", []int{300, 300, 300, 300}, 100, 700, [][]int{{0, 1}, {2, 3}}, nil},
		{"exactly at the budget", []int{100}, 10, 100 + len(`[{"key":"0","t":""}]`), [][]int{{0}}, nil},
		{"one byte over alone", []int{101}, 10, 100 + len(`[{"key":"0","t":""}]`), nil, []string{"0"}},
		{"oversized in the middle", []int{10, 5000, 10, 10}, 100, 1000, [][]int{{0, 2, 3}}, []string{"1"}},
		{"HTML characters not escaped", []int{-300}, 10, 400, [][]int{{0}}, nil},
		{"nothing", nil, 10, 1000, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := func(i int) map[string]any {
				text := strings.Repeat("a", max(tt.sizes[i], 0))
				if tt.sizes[i] < 0 {
					text = strings.Repeat("<", -tt.sizes[i])
				}
				return map[string]any{"key": fmt.Sprint(i), "t": text}
			}
			var sends [][]int
			err := cutDocuments("calendar_events", "key", len(tt.sizes), tt.maxDocs, tt.maxBytes, doc, func(body []byte, first, last int) error {
				if len(body) > tt.maxBytes {
					t.Errorf("body of %d bytes, over %d", len(body), tt.maxBytes)
				}
				var docs []map[string]string
				if err := json.Unmarshal(body, &docs); err != nil {
					t.Fatalf("body is not a JSON array: %v", err)
				}
				var keys []int
				for _, d := range docs {
					var k int
					fmt.Sscan(d["key"], &k)
					keys = append(keys, k)
				}
				if keys[0] != first || keys[len(keys)-1] != last {
					t.Errorf("send(first %d, last %d) with documents %v", first, last, keys)
				}
				sends = append(sends, keys)
				return nil
			})
			if !slices.EqualFunc(sends, tt.wantSends, slices.Equal) {
				t.Errorf("sends %v, want %v", sends, tt.wantSends)
			}
			var skipped []string
			if err != nil {
				if !tooLarge(err) {
					t.Fatalf("error %v is not only documents too large", err)
				}
				for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
					var d *DocumentTooLargeError
					if !errors.As(e, &d) || d.IndexUID != "calendar_events" || d.Limit != tt.maxBytes || d.Bytes+2 <= tt.maxBytes {
						t.Errorf("error %#v", e)
					}
					skipped = append(skipped, d.Key)
				}
			}
			if !slices.Equal(skipped, tt.wantSkip) {
				t.Errorf("skipped %v (%v), want %v", skipped, err, tt.wantSkip)
			}
		})
	}
}

// TestCutDocumentsSendError: an error of a request stops the cut at once.
func TestCutDocumentsSendError(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	calls := 0
	err := cutDocuments("ix", "id", 10, 1, 1000, func(i int) map[string]any { return map[string]any{"id": i} },
		func([]byte, int, int) error { calls++; return boom })
	if !errors.Is(err, boom) || tooLarge(err) || calls != 1 {
		t.Errorf("err %v, %d calls; want boom after 1 call", err, calls)
	}
}

// TestOversizedDocumentDoesNotBlockOthers: through the engine, against
// the simulator, an event whose document alone is over MaxRequestBytes is
// not indexed and named in a *DocumentTooLargeError; the other events of
// the same write are indexed, in additions within the budget.
func TestOversizedDocumentDoesNotBlockOthers(t *testing.T) {
	t.Parallel()
	const budget = 64 << 10
	f := newFakeMeili(t)
	f.Emulate = true
	e := f.engine(Options{Languages: []string{"en"}, MaxRequestBytes: budget})
	if err := e.Init(t.Context()); err != nil {
		t.Fatal(err)
	}
	ev := func(id int64, desc string) search.EventDocument {
		return search.EventDocument{ID: id, Status: "publish", Text: map[string]search.Text{"en": {Title: "jazz", Description: desc}}}
	}
	var docs []search.EventDocument
	for id := int64(1); id <= 20; id++ {
		docs = append(docs, ev(id, strings.Repeat("tune ", 2000))) // 10 KB each
	}
	docs = append(docs, ev(99, strings.Repeat("long ", 20000))) // 100 KB
	err := e.IndexEvents(t.Context(), docs)
	var big *DocumentTooLargeError
	if !errors.As(err, &big) || big.Key != "99" || big.Limit != budget || !strings.Contains(err.Error(), "MEILI_MAX_REQUEST_BYTES") {
		t.Fatalf("IndexEvents = %v, want a DocumentTooLargeError for document 99", err)
	}
	if n, err := e.CountEvents(t.Context()); err != nil || n != 20 {
		t.Errorf("CountEvents = %d, %v; want the 20 others", n, err)
	}
	f.Mu.Lock()
	defer f.Mu.Unlock()
	adds := 0
	for _, r := range f.Requests {
		if r.Method != "POST" || !strings.HasSuffix(r.Path, "/documents") || !strings.Contains(r.Path, "events") {
			continue
		}
		adds++
		raw, _ := json.Marshal(r.Body)
		if len(raw) > budget {
			t.Errorf("an addition of %d bytes, over the budget %d", len(raw), budget)
		}
	}
	if adds < 4 {
		t.Errorf("%d additions for 200 KB of documents under a 64 KiB budget", adds)
	}
}
