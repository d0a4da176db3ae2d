package repository

import "testing"

// TestTextGetFallback pins the language fallback (docs/decisions.md,
// "Languages"): the requested language, the default language, then the
// record's first language in the configured order (alphabetical when no
// order is given or none of it has text).
func TestTextGetFallback(t *testing.T) {
	order := []string{"nl", "en", "fr", "de"}
	tests := []struct {
		name      string
		text      Text
		lang, def string
		order     []string
		want      string
	}{
		{"requested", Text{"fr": "Fête", "en": "Party"}, "fr", "en", order, "Fête"},
		{"default", Text{"en": "Party", "nl": "Feest"}, "de", "en", order, "Party"},
		{"empty requested falls back", Text{"fr": "", "en": "Party"}, "fr", "en", order, "Party"},
		{"first language only", Text{"fr": "Fête"}, "en", "en", order, "Fête"},
		{"first in order, not alphabetical", Text{"fr": "Fête", "nl": "Feest"}, "en", "en", order, "Feest"},
		{"alphabetical without order", Text{"fr": "Fête", "nl": "Feest"}, "en", "en", nil, "Fête"},
		{"language outside the order", Text{"xx": "Iets"}, "en", "en", order, "Iets"},
		{"empty values skipped", Text{"nl": "", "fr": "Fête"}, "en", "en", order, "Fête"},
		{"nothing", Text{}, "en", "en", order, ""},
		{"nil", nil, "en", "en", order, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.text.Get(tt.lang, tt.def, tt.order...); got != tt.want {
				t.Errorf("Get = %q, want %q", got, tt.want)
			}
		})
	}
}
