package repository

import "testing"

// TestSlugify pins Slugify to WordPress's sanitize_title, folded to ASCII
// (a deliberate difference: docs/decisions.md, "Identifiers and slugs").
func TestSlugify(t *testing.T) {
	cases := []struct{ in, want string }{
		{"Food & Wine", "food-wine"},
		{"Café Crème & Co", "cafe-creme-co"},
		{"Food &amp; Wine", "food-wine"},
		{"Tom &#038; Jerry", "tom-jerry"},
		{"Caf&eacute; Society", "cafe-society"},
		{"Fête d'été", "fete-dete"},
		{"Rock ’n’ Roll", "rock-n-roll"},
		{"“Quoted” «title»", "quoted-title"},
		{`Say "hi"`, "say-hi"},
		{"Jazz – Blues — Soul", "jazz-blues-soul"},
		{"Jazz&nbsp;Night", "jazz-night"},
		{"Jazz\u00a0Night", "jazz-night"},
		{"Summer Jazz Night", "summer-jazz-night"},
		{"  spaced   out  ", "spaced-out"},
		{"--dashes--everywhere--", "dashes-everywhere"},
		{"snake_case stays", "snake_case-stays"},
		{"Version 2.0", "version-2-0"},
		{"AC/DC tribute", "ac-dc-tribute"},
		{"50% off", "50-off"},
		{"caf%C3%A9", "cafe"},
		{"caf%c3%a9-au-lait", "cafe-au-lait"},
		{"Size 3×4", "size-3x4"},
		{"Brand™ Night©", "brand-night"},
		{"Wait…", "wait"},
		{"¿Qué pasa?", "que-pasa"},
		{"Straße", "strasse"},
		{"Łódź", "lodz"},
		{"Ærø", "aero"},
		{"e\u0301cole", "ecole"},
		{"<b>Bold</b> move", "bold-move"},
		{"Москва", "moskva"},
		{"!!!", ""},
		{"", ""},
		{"already-a-slug", "already-a-slug"},
		{"UPPER", "upper"},
		{"soft\u00adhyphen", "softhyphen"},
		{"zero\u200bwidth", "zerowidth"},
	}
	for _, c := range cases {
		if got := Slugify(c.in); got != c.want {
			t.Errorf("Slugify(%q) = %q, want %q", c.in, got, c.want)
		}
		if got := Slugify(c.want); got != c.want {
			t.Errorf("Slugify is not idempotent on %q: %q", c.want, got)
		}
	}
}

// TestNormalizeSlug checks that client slugs are cleaned the same way.
func TestNormalizeSlug(t *testing.T) {
	for in, want := range map[string]string{" my-slug ": "my-slug", "My Slug": "my-slug", "food-&-wine": "food-wine", "caf%C3%A9": "cafe"} {
		if got := NormalizeSlug(in); got != want {
			t.Errorf("NormalizeSlug(%q) = %q, want %q", in, got, want)
		}
	}
}
