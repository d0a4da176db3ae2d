package app_test

import (
	"bytes"
	"encoding/json"
	"testing"
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
