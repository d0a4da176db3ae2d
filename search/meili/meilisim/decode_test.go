package meilisim

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// decodeCases are inputs on which decodeJSON must agree with
// json.Unmarshal: the shapes of a document addition, and every kind of
// input fastJSON leaves to json (escapes, invalid UTF-8, control
// characters, bad numbers, bad structure, trailing data, deep nesting).
var decodeCases = []string{
	`[{"id":1,"title_en":"Quay recital","description__base":"harbour harbour ","start":1925000000,"tags":[],"place":null,"geo":{"lat":52.1,"lng":-4.5e-1},"ok":true,"no":false}]`,
	` { "a" : [ 1 , 2.5 , -0 , 0.0 , 1E3 , 1e+3 , 1e-3 , 123456789012345678901234567890 ] } `,
	`{}`, `[]`, `{ }`, `[ ]`, `""`, `"x"`, `0`, `-1`, `true`, `false`, `null`,
	`"Répétition quotidienne — Tägliche Probe"`,
	`"\u003cp\u003eAbout\u003c/p\u003e \"quoted\" \\ \/ \b\f\n\r\t"`,
	`"\ud83d\ude00 \ud83d lone \ude00"`,
	`{"a\"b":1,"a":2,"a":3}`,
	"\"bad \xff utf-8 \xc3\"",
	"\"raw \x01 control\"",
	"\"raw tab\t\"",
	`"\x"`, `"\u12"`, `"unterminated`, `"ends in escape\`,
	`01`, `-`, `1.`, `.5`, `1e`, `1e+`, `+1`, `1e400`, `-1e400`, `0x10`, `NaN`, `Infinity`,
	`tru`, `truex`, `nul`, `[1,]`, `[,1]`, `{"a":1,}`, `{"a"}`, `{"a":}`, `{a:1}`, `{"a":1 "b":2}`,
	`[1] [2]`, `[1]x`, `{"a":1}}`, ``, ` `, `[`, `{`, `{"a":[1,{"b":[]}]}`,
	strings.Repeat("[", 1500) + strings.Repeat("]", 1500),
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	`["` + strings.Repeat("abcdefgh", 1000) + `"]`,
	"[\"" + strings.Repeat("abcdefg\x1f", 10) + "\"]",
}

// checkDecode fails t unless decodeJSON(raw) gives json.Unmarshal's value
// and error.
func checkDecode(t *testing.T, raw []byte) {
	t.Helper()
	var want any
	wantErr := json.Unmarshal(raw, &want)
	got, err := decodeJSON(raw)
	if fmt.Sprint(err) != fmt.Sprint(wantErr) {
		t.Fatalf("decodeJSON(%.80q): error %v, want %v", raw, err, wantErr)
	}
	if wantErr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("decodeJSON(%.80q) = %#v, want %#v", raw, got, want)
	}
}

// TestDecodeJSONAsUnmarshal: the simulator's body decoder gives what
// json.Unmarshal gives, value and error.
func TestDecodeJSONAsUnmarshal(t *testing.T) {
	t.Parallel()
	for _, c := range decodeCases {
		checkDecode(t, []byte(c))
	}
	// The fast path takes the plain inputs itself (not through json).
	for _, c := range []string{decodeCases[0], decodeCases[1], `"Répétition"`} {
		d := fastJSON{b: []byte(c)}
		if _, ok := d.value(0); !ok {
			t.Errorf("fastJSON left %q to json", c)
		}
	}
}

// FuzzDecodeJSON checks decodeJSON against json.Unmarshal on any input.
func FuzzDecodeJSON(f *testing.F) {
	for _, c := range decodeCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, raw []byte) { checkDecode(t, raw) })
}

// TestSprintAsFmt: sprint gives fmt.Sprint's text.
func TestSprintAsFmt(t *testing.T) {
	t.Parallel()
	values := []any{"", "id-7", 0.0, math.Copysign(0, -1), 1.0, -1.0, 7.0, 1e6, 1e20, 1e21, 1e-4, 1e-5, 123456789.0, 0.1, 1.5, -2.25, 3.0e15, 9007199254740993.0,
		math.MaxFloat64, math.SmallestNonzeroFloat64, math.Inf(1), math.Inf(-1), math.NaN(), true, nil, []any{1.0}, map[string]any{"a": 1.0}}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		values = append(values, math.Float64frombits(rng.Uint64()), float64(rng.Int64N(1<<53)), rng.Float64()*1e6)
	}
	for _, v := range values {
		if got, want := sprint(v), fmt.Sprint(v); got != want {
			t.Errorf("sprint(%#v) = %q, want %q", v, got, want)
		}
	}
}
