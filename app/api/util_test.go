package api_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/calendar/eventcal/config/testdeadline"
)

// keysOf returns the top-level keys of a JSON object in document order.
func keysOf(t *testing.T, raw string) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader([]byte(raw)))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %s", raw)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// httpClient sends raw requests to a live server.
type httpClient struct{ c *http.Client }

// newHTTPClient returns a client whose requests give up only at the
// test's deadline (testdeadline): a busy machine may answer slowly.
func newHTTPClient(t testing.TB) *httpClient {
	return &httpClient{c: &http.Client{Timeout: testdeadline.Timeout(t)}}
}

// send performs a request with a bearer token and returns status and body.
func (h *httpClient) send(method, url, token, body string) (int, string) {
	var rdr io.Reader
	if body != "" {
		rdr = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rdr)
	if err != nil {
		return 0, err.Error()
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := h.c.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(out)
}

// jsonID reads "id" from a JSON body.
func jsonID(t *testing.T, body string) int64 {
	t.Helper()
	var v struct {
		ID int64 `json:"id"`
	}
	if err := json.Unmarshal([]byte(body), &v); err != nil || v.ID == 0 {
		t.Fatalf("no id in %s", body)
	}
	return v.ID
}
