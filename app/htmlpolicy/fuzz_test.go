package htmlpolicy

import (
	"regexp"
	"testing"
)

// tagOpener is what Plain's output must never hold.
var tagOpener = regexp.MustCompile(`<[a-zA-Z/!?]`)

// unsafe matches a script element, an event handler attribute or a
// javascript:/data: URL in an attribute.
var unsafe = regexp.MustCompile(`(?i)<script|<[^>]*\son[a-z]+\s*=|<[^>]*(href|src|action)\s*=\s*["']?\s*(javascript|data|vbscript):`)

// FuzzPolicies checks the two guarantees of the package on any input:
// Plain keeps no markup, Rich keeps no script, handler or script URL, and
// both are stable when applied again.
func FuzzPolicies(f *testing.F) {
	for _, s := range []string{"", "plain", `<b>x</b>`, `<script>alert(1)</script>`, `<img src=x onerror=alert(1)>`,
		`<a href="javascript:alert(1)">x</a>`, `&lt;script&gt;`, `<b>x</b>&lt;script&gt;`, `0000</`, `a < b`, `<svg/onload=alert(1)>`,
		`<a href="jav&#x09;ascript:x">y</a>`, `<p style="x:expression(alert(1))">p</p>`, `<!--<script>-->`, `<<script>script>`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p := Plain(s)
		if tagOpener.MatchString(p) {
			t.Fatalf("Plain(%q) = %q keeps markup", s, p)
		}
		if Plain(p) != p {
			t.Fatalf("Plain not stable on %q: %q then %q", s, p, Plain(p))
		}
		r := Rich(s)
		if unsafe.MatchString(r) {
			t.Fatalf("Rich(%q) = %q keeps a script", s, r)
		}
	})
}
