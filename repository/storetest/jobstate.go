package storetest

import (
	"context"
	"testing"

	"github.com/calendar/eventcal/repository"
)

// jobStateTests cover GetJobState and SetJobState.
var jobStateTests = []storeTest{
	{"SetAndGet", testJobState},
}

// jobStateValue is what GetJobState returns for one key.
type jobStateValue struct {
	value string
	found bool
}

// testJobState runs its steps in order on one store: each step stores
// its values, then checks what GetJobState returns for the keys named.
func testJobState(t *testing.T, ctx context.Context, s repository.Store) {
	const rolled = "recurrence.horizon.rolled" // dots, as the sync schedule's key has
	exact := "2026-11-25T23:31:28.123456789Z \"quoted\" \\ back\nslash\t ünïcode 日本 $field.name  "
	steps := []struct {
		name string
		set  [][2]string // key, value
		want map[string]jobStateValue
	}{
		{"a missing key is not found", nil,
			map[string]jobStateValue{rolled: {}, "": {}}},
		{"a set value is found", [][2]string{{rolled, "2026-11-20T01:00:00Z"}},
			map[string]jobStateValue{rolled: {"2026-11-20T01:00:00Z", true}}},
		{"setting again overwrites", [][2]string{{rolled, "2026-11-25T01:00:00.5Z"}},
			map[string]jobStateValue{rolled: {"2026-11-25T01:00:00.5Z", true}}},
		{"two keys are independent", [][2]string{{"other:job", "first"}},
			map[string]jobStateValue{rolled: {"2026-11-25T01:00:00.5Z", true}, "other:job": {"first", true}, "other": {}}},
		{"overwriting one key leaves the other", [][2]string{{"other:job", "second"}},
			map[string]jobStateValue{rolled: {"2026-11-25T01:00:00.5Z", true}, "other:job": {"second", true}}},
		{"a value round-trips exactly", [][2]string{{"exact", exact}},
			map[string]jobStateValue{"exact": {exact, true}}},
		{"an empty value is found", [][2]string{{"empty", ""}},
			map[string]jobStateValue{"empty": {"", true}}},
	}
	for _, st := range steps {
		for _, kv := range st.set {
			if err := s.SetJobState(ctx, kv[0], kv[1]); err != nil {
				t.Fatalf("%s: SetJobState(%q, %q): %v", st.name, kv[0], kv[1], err)
			}
		}
		for key, want := range st.want {
			value, found, err := s.GetJobState(ctx, key)
			if err != nil {
				t.Fatalf("%s: GetJobState(%q): %v", st.name, key, err)
			}
			if got := (jobStateValue{value, found}); got != want {
				t.Errorf("%s: GetJobState(%q) = %q, %v; want %q, %v", st.name, key, value, found, want.value, want.found)
			}
		}
	}
}
