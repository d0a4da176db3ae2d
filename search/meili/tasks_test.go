package meili

import (
	"errors"
	"maps"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/search/meili/meilisim"
)

// patches counts the settings updates sent to index uid.
func (f *fakeMeili) patches(uid string) int {
	return len(f.Calls("PATCH", "/indexes/"+uid+"/settings"))
}

// TestSettingsTaskWait: a settings update is never sent while another one
// is queued or running on the index, so that retries never stack.
func TestSettingsTaskWait(t *testing.T) {
	t.Parallel()
	t.Run("a pending update is awaited, and its result compared", func(t *testing.T) {
		f := newFakeMeili(t)
		e := f.engine(Options{})
		if err := e.Init(t.Context()); err != nil {
			t.Fatal(err)
		}
		uid := e.IndexUID(EventIndex)
		// The live settings are the defaults again, and an update that
		// brings the declared ones back is still running (sent by another
		// replica, or by an earlier attempt that gave up waiting).
		f.Mu.Lock()
		want := maps.Clone(f.Indexes[uid].Settings)
		f.Indexes[uid].Settings = meilisim.DefaultSettings()
		f.Mu.Unlock()
		f.BusyTasks["settingsUpdate"] = 5
		f.Enqueue(httptest.NewRecorder(), "settingsUpdate", uid, func() *meilisim.APIError {
			maps.Copy(f.Indexes[uid].Settings, want)
			return nil
		})
		f.BusyTasks["settingsUpdate"] = 0
		f.Reset()

		if err := e.Init(t.Context()); err != nil {
			t.Fatalf("Init: %v", err)
		}
		if n := f.patches(uid); n != 0 {
			t.Errorf("%d settings updates sent while one was running that brings the same settings, want 0", n)
		}
		// The wait happens before the settings are read.
		var sawPoll bool
		for _, r := range f.Calls("GET", "") {
			if r.Path == "/indexes/"+uid+"/settings" {
				if !sawPoll {
					t.Error("the live settings were read before the pending update ended")
				}
				break
			}
			if strings.HasPrefix(r.Path, "/tasks/") {
				sawPoll = true
			}
		}
	})

	t.Run("an update that outlasts TaskTimeout is not sent again", func(t *testing.T) {
		f := newFakeMeili(t)
		// The indexes exist with the default settings, so the only task
		// the engine waits for is the settings update, which takes "for
		// ever" (until finishTasks), as on a large index. The engine gives
		// up waiting after 20ms (however slow the machine, it never ends
		// before finishTasks).
		for _, ix := range indexes {
			f.AddIndex(DefaultIndexPrefix+string(ix), nil)
		}
		e := f.engine(Options{TaskTimeout: 20 * time.Millisecond})
		f.BusyTasks["settingsUpdate"] = 1 << 30
		uid := e.IndexUID(EventIndex)
		for attempt := 1; attempt <= 3; attempt++ {
			err := e.Init(t.Context())
			if !errors.Is(err, search.ErrUnavailable) {
				t.Fatalf("attempt %d while the update runs: %v, want ErrUnavailable", attempt, err)
			}
			if n := f.patches(uid); n != 1 {
				t.Fatalf("after attempt %d: %d settings updates sent, want 1 (retries stacked)", attempt, n)
			}
		}
		f.FinishTasks()
		// A patient engine (the same process later, on a quiet server).
		e = f.engine(Options{})
		if err := e.Init(t.Context()); err != nil {
			t.Fatalf("Init once the update ended: %v", err)
		}
		if n := f.patches(uid); n != 1 {
			t.Errorf("%d settings updates of %s in all, want 1", n, uid)
		}
		for _, ix := range []Index{VenueIndex, OrganizerIndex} {
			if n := f.patches(e.IndexUID(ix)); n != 1 {
				t.Errorf("%d settings updates of %s, want 1", n, e.IndexUID(ix))
			}
		}
		f.Mu.Lock()
		sortable, _ := f.Indexes[uid].Settings["sortableAttributes"].([]any)
		f.Mu.Unlock()
		if len(sortable) == 0 {
			t.Error("the update's effect was not applied: no sortable attributes")
		}
	})
}
