package api_test

import (
	"strconv"
	"strings"
	"testing"
)

// TestHTMLPolicyByRole (issue 7, finding 8): contributors and authors keep
// what wp_kses_post allows in descriptions and excerpts and no markup in
// plain fields; editors and admins (unfiltered_html) store what they send.
func TestHTMLPolicyByRole(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const desc = `<p onclick="steal()">Hi</p><script>alert(1)</script><a href="javascript:alert(1)">x</a>` +
		`<img src="https://e.test/a.png" onerror="alert(1)"><strong>ok</strong>`
	const cleanDesc = `<p>Hi</p>x<img src="https://e.test/a.png"><strong>ok</strong>`
	const excerpt = `<em>e</em><iframe src="https://evil.test"></iframe>`
	const title = `<b>Jazz</b> Night<script>alert(1)</script>`
	body := map[string]any{"title": title, "description": desc, "excerpt": excerpt, "start_date": "2026-12-01", "end_date": "2026-12-01",
		"cost": `<i>5</i>`, "venue": map[string]any{"venue": `<img src=x onerror=alert(1)>Inline hall`, "address": `<b>1</b> Main St`}}
	for _, role := range []string{"contributor", "author"} {
		t.Run(role, func(t *testing.T) {
			r := e.must(201, "POST", "events", role, body)
			for path, want := range map[string]string{"title": "Jazz Night", "description": cleanDesc, "excerpt": "<em>e</em>",
				"cost": "5", "venue.venue": "Inline hall", "venue.address": "1 Main St"} {
				if got := r.str(path); got != want {
					t.Errorf("%s = %q, want %q", path, got, want)
				}
			}
			// Stored, not only answered: read back.
			got := e.must(200, "GET", "events/"+strconv.FormatInt(r.id(), 10)+"?context=edit", role, nil)
			if got.str("description") != cleanDesc {
				t.Errorf("stored description %q", got.str("description"))
			}
			up := e.must(200, "PATCH", "events/"+strconv.FormatInt(r.id(), 10), role, map[string]any{"excerpt": `<a href="javascript:x()" title="t">l</a>`})
			if up.str("excerpt") != `<a title="t">l</a>` {
				t.Errorf("updated excerpt %q", up.str("excerpt"))
			}
		})
	}
	t.Run("author venue and organizer routes", func(t *testing.T) {
		v := e.must(201, "POST", "venues", "author", map[string]any{"venue": `<svg onload=alert(1)>Cellar`, "description": `<p>ok</p><script>x</script>`})
		if v.str("venue") != "Cellar" || v.str("description") != "<p>ok</p>" {
			t.Errorf("venue %q description %q", v.str("venue"), v.str("description"))
		}
		o := e.must(201, "POST", "organizers", "author", map[string]any{"organizer": `Acme<script>x</script>`, "phone": `<a href=x>1</a>`})
		if o.str("organizer") != "Acme" || o.str("phone") != "1" {
			t.Errorf("organizer %q phone %q", o.str("organizer"), o.str("phone"))
		}
	})
	for _, role := range []string{"editor", "admin"} {
		t.Run(role+" stores any HTML", func(t *testing.T) {
			r := e.must(201, "POST", "events", role, map[string]any{"title": title, "description": desc, "excerpt": excerpt,
				"start_date": "2026-12-01", "end_date": "2026-12-01"})
			if r.str("title") != title || r.str("description") != desc || r.str("excerpt") != excerpt {
				t.Errorf("unfiltered write changed: %s", r.raw)
			}
		})
	}
}

// TestJSONLDEscapesScriptEnd (issue 7, finding 8): a description that
// closes a <script> element cannot break out of one that embeds json_ld:
// every "</" in the JSON is written "<\/", as WordPress writes it.
func TestJSONLDEscapesScriptEnd(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.must(201, "POST", "events", "editor", map[string]any{"title": "T</script>", "start_date": "2026-12-01", "end_date": "2026-12-01",
		"description": `</script><script>alert(1)</script>`}).id()
	r := e.must(200, "GET", "events/"+strconv.FormatInt(id, 10), "", nil)
	if strings.Contains(r.raw, "</") {
		t.Errorf("raw JSON holds </: %.300s", r.raw)
	}
	if !strings.Contains(r.raw, `"description":"<\/script><script>alert(1)<\/script>"`) {
		t.Errorf("json_ld description not escaped: %.300s", r.raw)
	}
	if got := r.str("json_ld.description"); got != `</script><script>alert(1)</script>` {
		t.Errorf("decoded json_ld.description %q", got)
	}
}
