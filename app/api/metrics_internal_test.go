package api

import "testing"

// TestMethodLabel: the known methods are their own label, any other
// method is OTHER.
func TestMethodLabel(t *testing.T) {
	t.Parallel()
	for method, want := range map[string]string{
		"GET": "GET", "HEAD": "HEAD", "POST": "POST", "PUT": "PUT", "PATCH": "PATCH",
		"DELETE": "DELETE", "OPTIONS": "OPTIONS", "TRACE": "OTHER", "BREW": "OTHER", "": "OTHER",
	} {
		if got := methodLabel(method); got != want {
			t.Errorf("methodLabel(%q) = %q, want %q", method, got, want)
		}
	}
}
