package meili

import (
	"github.com/calendar/eventcal/search/meili/meilisim"
	"net/http"
	"reflect"
	"slices"
	"testing"
)

// TestEnsureServiceKey: the service's key is created from the master key
// with the engine's actions on its own indexes only, found again on the
// next start, and replaced when its scope differs.
func TestEnsureServiceKey(t *testing.T) {
	t.Parallel()
	f := newFakeMeili(t)
	key, err := EnsureServiceKey(t.Context(), f.srv.URL, "master-key", "")
	if err != nil {
		t.Fatal(err)
	}
	if key != "key-of-"+ServiceKeyUID {
		t.Fatalf("key %q", key)
	}
	creates := f.Calls(http.MethodPost, "/keys")
	if len(creates) != 1 || creates[0].Auth != "Bearer master-key" {
		t.Fatalf("creates %+v", creates)
	}
	body := creates[0].Body.(map[string]any)
	if body["uid"] != ServiceKeyUID || !reflect.DeepEqual(body["indexes"], []any{"calendar_*"}) || body["expiresAt"] != nil {
		t.Errorf("key request %s", meilisim.JSONString(body))
	}
	actions := body["actions"].([]any)
	for _, forbidden := range []string{"*", "keys.create", "keys.get", "keys.delete", "dumps.create", "snapshots.create"} {
		if slices.Contains(actions, any(forbidden)) {
			t.Errorf("the service key allows %s", forbidden)
		}
	}

	// The next start finds it and creates nothing.
	f.Reset()
	if again, err := EnsureServiceKey(t.Context(), f.srv.URL, "master-key", ""); err != nil || again != key {
		t.Fatalf("second start: %q, %v", again, err)
	}
	if n := len(f.Calls(http.MethodPost, "/keys")); n != 0 {
		t.Errorf("second start created %d keys", n)
	}

	// A key with another scope (an older release's) is replaced.
	f.Mu.Lock()
	f.Keys[ServiceKeyUID]["actions"] = []any{"*"}
	f.Mu.Unlock()
	f.Reset()
	if again, err := EnsureServiceKey(t.Context(), f.srv.URL, "master-key", ""); err != nil || again != key {
		t.Fatalf("replacement: %q, %v", again, err)
	}
	if got := f.Writes(); !slices.Equal(got, []string{"DELETE /keys/" + ServiceKeyUID, "POST /keys"}) {
		t.Errorf("replacement writes %q", got)
	}

	// The engine then speaks with the service key only.
	f.Reset()
	e, err := Open(t.Context(), f.srv.URL, key, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := e.Init(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, r := range f.Calls("", "*") {
		if r.Path != "/health" && r.Auth != "Bearer "+key {
			t.Errorf("%s %s with %q", r.Method, r.Path, r.Auth)
		}
	}
}
