package htmlpolicy

import "testing"

func TestRich(t *testing.T) {
	for _, tt := range []struct{ name, in, want string }{
		{"no markup unchanged", `Tom & Jerry "live" > 3`, `Tom & Jerry "live" > 3`},
		{"allowed formatting kept", `<p><strong>Big</strong> <em>night</em></p>`, `<p><strong>Big</strong> <em>night</em></p>`},
		{"lists and headings kept", `<h2>Line-up</h2><ul><li>One</li></ul><ol><li>Two</li></ol>`, `<h2>Line-up</h2><ul><li>One</li></ul><ol><li>Two</li></ol>`},
		{"link with https kept", `<a href="https://example.test/x" target="_blank" title="T">x</a>`, `<a href="https://example.test/x" target="_blank" title="T">x</a>`},
		{"mailto and tel kept", `<a href="mailto:a@b.test">m</a><a href="tel:+331">t</a>`, `<a href="mailto:a@b.test">m</a><a href="tel:+331">t</a>`},
		{"image kept", `<img src="https://example.test/a.png" alt="A">`, `<img src="https://example.test/a.png" alt="A">`},
		{"class and data attributes kept", `<div class="c" data-x="1">d</div>`, `<div class="c" data-x="1">d</div>`},
		{"figure kept", `<figure><figcaption>c</figcaption></figure>`, `<figure><figcaption>c</figcaption></figure>`},
		{"script removed with its content", `a<script>alert(1)</script>b`, `ab`},
		{"onerror removed", `<img src="https://example.test/a.png" onerror="alert(1)">`, `<img src="https://example.test/a.png">`},
		{"onclick removed", `<p onclick="x()">p</p>`, `<p>p</p>`},
		{"javascript URL removed", `<a href="javascript:alert(1)">x</a>`, `x`},
		{"javascript URL with entities removed", `<a href="jav&#x09;ascript:alert(1)">x</a>`, `x`},
		{"data URL removed", `<img src="data:image/png;base64,AAAA">`, ``},
		{"iframe removed", `<iframe src="https://evil.test"></iframe>ok`, `ok`},
		{"style element removed", `<style>p{}</style>ok`, `ok`},
		{"form removed", `<form action="https://evil.test"><input name="p"></form>ok`, `ok`},
		{"svg removed", `<svg onload="alert(1)"><circle/></svg>ok`, `ok`},
		{"style attribute removed", `<p style="background:url(javascript:x)">p</p>`, `<p>p</p>`},
		{"closing script in text escaped", `<p>a</script>b</p>`, `<p>ab</p>`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Rich(tt.in); got != tt.want {
				t.Errorf("Rich(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestPlain(t *testing.T) {
	for _, tt := range []struct{ name, in, want string }{
		{"no markup unchanged", `Rock & Roll &amp; "more"`, `Rock & Roll &amp; "more"`},
		{"less-than sign kept", `a < b`, `a < b`},
		{"tags stripped", `<b>Jazz</b> <i>Night</i>`, `Jazz Night`},
		{"script removed with its content", `<script>alert(1)</script>Title`, `Title`},
		{"entities decoded after stripping", `<b>Tom</b> &amp; Jerry`, `Tom & Jerry`},
		{"encoded tag cannot survive", `<b>x</b>&lt;script&gt;alert(1)&lt;/script&gt;`, `x`},
		{"doubly encoded tag stays text", `<b>x</b>&amp;lt;img src=x onerror=alert(1)&amp;gt;`, `x&lt;img src=x onerror=alert(1)&gt;`},
		{"img with onerror removed", `<img src=x onerror=alert(1)>Name`, `Name`},
		{"dangling end-tag opener removed (fuzz)", `0000</`, `0000/`},
		{"bogus comments removed", `a <! b <? c </`, `a `},
		{"stacked openers removed (fuzz)", `<</`, `/`},
		{"math kept", `1 < 2 and 3 <= 4`, `1 < 2 and 3 <= 4`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Plain(tt.in); got != tt.want {
				t.Errorf("Plain(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
