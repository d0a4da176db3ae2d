package wpimport_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/calendar/eventcal/app/wpimport/replay"
)

// statusSite is a site whose events have the source's event-status meta
// (_tribe_events_status and _tribe_events_status_reason, which
// WordPress's route shows in the edit context): a cancelled event with a
// reason, a postponed one, a hidden cancelled one, one with a status the
// calendar does not know, one with a reason too long to keep, and a plain
// one.
func statusSite() *replay.Site {
	hidden := replay.Event(905, "Hidden and off")
	hidden["hide_from_listings"] = true
	return &replay.Site{
		Events: []map[string]any{replay.Event(901, "Storm night"), replay.Event(902, "Later night"),
			replay.Event(903, "Plain night"), replay.Event(904, "Odd night"), replay.Event(906, "Long night")},
		Hidden: []map[string]any{hidden},
		Meta: map[int64]map[string]any{
			901: {"_tribe_events_status": "canceled", "_tribe_events_status_reason": "Storm warning: <b>stay home</b> &amp; safe"},
			902: {"_tribe_events_status": "postponed"},
			904: {"_tribe_events_status": "rescheduled", "_tribe_events_status_reason": "New date soon"},
			905: {"_tribe_events_status": "canceled", "_tribe_events_status_reason": "Sold to nobody"},
			906: {"_tribe_events_status": "canceled", "_tribe_events_status_reason": strings.Repeat("é", 1200)},
		},
	}
}

// TestImportEventStatus (issue 34, finding 7): the source's event status
// and reason arrive with each event (hidden ones included), a status the
// calendar does not know is kept as scheduled and a reason too long is
// cut (both listed as changed values), a second run changes nothing, and
// a status changed at the source is carried by the next run.
func TestImportEventStatus(t *testing.T) {
	site := statusSite()
	src := replay.NewSite(t, site)
	var logs bytes.Buffer
	s := openSQLite(t)
	rep := runImport(t, s, adminOptions(src, &logs))
	ctx := t.Context()
	for _, c := range []struct {
		id             int64
		status, reason string
	}{
		{901, "canceled", "Storm warning: stay home & safe"},
		{902, "postponed", ""},
		{903, "scheduled", ""},
		{904, "scheduled", "New date soon"},
		{905, "canceled", "Sold to nobody"},
		{906, "canceled", strings.Repeat("é", 1000)},
	} {
		p, err := s.GetRecord(ctx, c.id)
		if err != nil {
			t.Fatalf("event %d: %v", c.id, err)
		}
		if got := p.Event.Status(); got != c.status || p.Event.EventStatusReason != c.reason {
			t.Errorf("event %d: status %q reason %.40q, want %q %.40q", c.id, got, p.Event.EventStatusReason, c.status, c.reason)
		}
	}
	changed := map[string]bool{}
	for _, c := range rep.Sanitized {
		changed[c.Field] = true
	}
	if !changed["event_status"] || !changed["event_status_reason"] {
		t.Errorf("changed values listed: %+v", rep.Sanitized)
	}
	if again := runImport(t, s, adminOptions(src, &logs)); again.Changes() != 0 {
		var out bytes.Buffer
		again.Print(&out)
		t.Errorf("a second run changed %d records:\n%s", again.Changes(), out.String())
	}
	site.Meta[902] = map[string]any{"_tribe_events_status": "", "_tribe_events_status_reason": ""}
	site.Meta[903] = map[string]any{"_tribe_events_status": "moved_online"}
	runImport(t, s, adminOptions(src, &logs)) // the server reads site as it is now
	for id, want := range map[int64]string{902: "scheduled", 903: "moved_online", 901: "canceled"} {
		if p, err := s.GetRecord(ctx, id); err != nil || p.Event.Status() != want {
			t.Errorf("after the source changed: event %d status %v (%v), want %s", id, p.Event.Status(), err, want)
		}
	}
}

// TestImportEventStatusWithoutEditContext: a user the source refuses the
// edit context gets no meta, so events arrive scheduled (the summary
// already says what the edit context would have carried).
func TestImportEventStatusWithoutEditContext(t *testing.T) {
	site := statusSite()
	site.NoEditContext = true
	var logs bytes.Buffer
	s := openSQLite(t)
	rep := runImport(t, s, adminOptions(replay.NewSite(t, site), &logs))
	p, err := s.GetRecord(t.Context(), 901)
	if err != nil {
		t.Fatal(err)
	}
	if p.Event.Status() != "scheduled" {
		t.Errorf("event 901 status %q without the edit context", p.Event.Status())
	}
	var out bytes.Buffer
	rep.Print(&out)
	if !strings.Contains(out.String(), "edit context") {
		t.Errorf("the summary does not say the edit context was refused:\n%s", out.String())
	}
}
