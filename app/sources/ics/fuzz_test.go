package ics

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse: no input panics, and what Parse returns keeps its promises
// (an error or a calendar; events with a UID, End never before Start).
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.ics")
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{
		"",
		"BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n",
		"BEGIN:VCALENDAR\nBEGIN:VEVENT\nUID:a\nDTSTART;TZID=\"x\"y:20260101T000000\nEND:VEVENT\nEND:VCALENDAR\n",
		"BEGIN:VCALENDAR\nBEGIN:VEVENT\nUID:a\nDTSTART;VALUE=DATE:20260101\nRRULE:FREQ=DAILY\nRECURRENCE-ID:20260102\nEND:VEVENT\nEND:VCALENDAR\n",
		"BEGIN:VCALENDAR\nBEGIN:VTIMEZONE\nTZID:X\nBEGIN:STANDARD\nDTSTART:16010101T000000\nTZOFFSETTO:+0100\nRRULE:FREQ=YEARLY\nEND:STANDARD\nEND:VTIMEZONE\nBEGIN:VEVENT\nUID:a\nDTSTART;TZID=X:20260101T000000\nDURATION:P1W2DT3H\nEND:VEVENT\nEND:VCALENDAR\n",
		"BEGIN:VCALENDAR\nBEGIN:VEVENT\nBEGIN:VALARM\nEND:VEVENT\nEND:VCALENDAR\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		cal, err := Parse(bytes.NewReader(body), Options{MaxEvents: 100, MaxBytes: 1 << 20})
		if (cal == nil) == (err == nil) {
			t.Fatalf("Parse = %v, %v", cal, err)
		}
		if err != nil {
			msg := err.Error()
			for _, prefix := range []string{"not a calendar", "truncated: ", "too many events: ", "too large: "} {
				if strings.HasPrefix(msg, prefix) {
					return
				}
			}
			t.Fatalf("unexpected error %q", msg)
		}
		for _, ev := range cal.Events {
			if ev.UID == "" || ev.End.Before(ev.Start) {
				t.Fatalf("event %+v", ev)
			}
			_ = ev.Digest()
		}
	})
}
