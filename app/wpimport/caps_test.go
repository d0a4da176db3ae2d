package wpimport

import "testing"

// TestCapsDefaults: Or takes each field that is zero or less from the
// defaults and keeps the others; Run's defaults (withDefaults) hold
// HeldBytes at a quarter of Bytes unless it is set, and leave the caps of
// ReadPublic only (Response, Events) unbounded.
func TestCapsDefaults(t *testing.T) {
	t.Parallel()
	all := Caps{Pages: 1, Requests: 2, Bytes: 3, HeldBytes: 4, NewTerms: 5, Probes: 6, Response: 7, Events: 8}
	cases := []struct {
		name string
		got  Caps
		want Caps
	}{
		{"zero takes every default", Caps{}.Or(all), all},
		{"negative takes the default", Caps{Pages: -1, Bytes: -5, Events: -1}.Or(all), all},
		{"set fields are kept", Caps{Requests: 20, Response: 70}.Or(all),
			Caps{Pages: 1, Requests: 20, Bytes: 3, HeldBytes: 4, NewTerms: 5, Probes: 6, Response: 70, Events: 8}},
		{"Run's defaults", Caps{}.withDefaults(),
			Caps{Pages: DefaultMaxPages, Requests: DefaultMaxRequests, Bytes: DefaultMaxBytes, HeldBytes: DefaultMaxBytes / heldFraction,
				NewTerms: DefaultMaxNewTerms, Probes: DefaultMaxProbes}},
		{"Run's held bytes follow Bytes", Caps{Bytes: 400}.withDefaults(),
			Caps{Pages: DefaultMaxPages, Requests: DefaultMaxRequests, Bytes: 400, HeldBytes: 100,
				NewTerms: DefaultMaxNewTerms, Probes: DefaultMaxProbes}},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, c.got, c.want)
		}
	}
}
