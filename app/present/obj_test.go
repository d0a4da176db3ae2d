package present

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestWriteJSON checks the direct encoder against encoding/json on the
// value shapes responses use, strings with every escape included.
func TestWriteJSON(t *testing.T) {
	nested := NewObj().Set("b", 1).Set("a", []any{"x", true, nil, int64(7), 1.5, NewObj().Set("z", []string{"q"})})
	cases := []struct {
		name string
		v    any
		want string
	}{
		{"order kept", NewObj().Set("z", 1).Set("a", 2), `{"z":1,"a":2}`},
		{"nested", nested, `{"b":1,"a":["x",true,null,7,1.5,{"z":["q"]}]}`},
		{"html not escaped but closing slash is", "<p>Rock & Roll</p>", `"<p>Rock & Roll<\/p>"`},
		{"script end escaped", "</script><script>x</script>", `"<\/script><script>x<\/script>"`},
		{"other slashes kept", "a/b </ c", `"a/b <\/ c"`},
		{"slash first", "/x", `"/x"`},
		{"escapes", "quote \" backslash \\ nl \n tab \t cr \r ctl \x01", `"quote \" backslash \\ nl \n tab \t cr \r ctl \u0001"`},
		{"unicode kept", "Fête – 日本 😀", `"Fête – 日本 😀"`},
		{"line separators", "a\u2028b\u2029c", `"a\u2028b\u2029c"`},
		{"invalid utf8", "a\xffb", `"a\ufffdb"`},
		{"empty list", []any{}, `[]`},
		{"nil Obj", (*Obj)(nil), `null`},
		{"struct falls back", struct {
			A string `json:"a"`
		}{"<x>"}, `{"a":"<x>"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteJSON(&buf, c.v); err != nil {
				t.Fatal(err)
			}
			if buf.String() != c.want {
				t.Errorf("got %s, want %s", buf.String(), c.want)
			}
			if !json.Valid(buf.Bytes()) {
				t.Errorf("invalid JSON: %s", buf.String())
			}
		})
	}
}
