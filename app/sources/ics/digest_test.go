package ics

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

func TestDigestStableAndSensitive(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("testdata/dst.ics")
	if err != nil {
		t.Fatal(err)
	}
	digest := func(body []byte) string {
		t.Helper()
		cal, err := Parse(bytes.NewReader(body), Options{})
		if err != nil || len(cal.Events) != 1 {
			t.Fatalf("Parse: %v, %+v", err, cal)
		}
		return cal.Events[0].Digest()
	}
	first := digest(raw)
	if again := digest(raw); again != first {
		t.Fatalf("two parses of the same bytes: %s and %s", first, again)
	}
	// The same feed written with CRLF and a BOM is the same event.
	if crlf := digest(append(append([]byte(nil), bom...), bytes.ReplaceAll(raw, []byte("\n"), []byte("\r\n"))...)); crlf != first {
		t.Errorf("CRLF and BOM change the digest")
	}
	changes := []struct{ name, old, new string }{
		{"title", "SUMMARY:Choir rehearsal\nDTSTART;TZID=Europe/Amsterdam:20260311", "SUMMARY:Choir practice\nDTSTART;TZID=Europe/Amsterdam:20260311"},
		{"start", "DTSTART;TZID=Europe/Amsterdam:20260311T190000", "DTSTART;TZID=Europe/Amsterdam:20260311T193000"},
		{"end", "DTEND;TZID=Europe/Amsterdam:20260311T210000", "DTEND;TZID=Europe/Amsterdam:20260311T213000"},
		{"zone", "DTSTART;TZID=Europe/Amsterdam:20260311T190000\nDTEND;TZID=Europe/Amsterdam:20260311T210000", "DTSTART;TZID=Europe/Brussels:20260311T190000\nDTEND;TZID=Europe/Brussels:20260311T210000"},
		{"rule", "UNTIL=20261118T180000Z", "UNTIL=20261125T180000Z"},
		{"exclusion", "EXDATE;TZID=Europe/Amsterdam:20260729T190000", "EXDATE;TZID=Europe/Amsterdam:20260722T190000"},
		{"addition", "RDATE;TZID=Europe/Amsterdam:20260627T140000", "RDATE;TZID=Europe/Amsterdam:20260627T150000"},
		{"place", "LOCATION:De Duif\\, Prinsengracht 756\\, Amsterdam\nEND:VEVENT\nBEGIN:VEVENT\nUID:choir-weekly-2026@example.org\nRECURRENCE-ID;TZID=Europe/Amsterdam:20260325", "LOCATION:De Duif\\, Prinsengracht 758\\, Amsterdam\nEND:VEVENT\nBEGIN:VEVENT\nUID:choir-weekly-2026@example.org\nRECURRENCE-ID;TZID=Europe/Amsterdam:20260325"},
		{"description", "SEQUENCE:4\n", "SEQUENCE:4\nDESCRIPTION:Bring your scores\n"},
		{"categories", "SEQUENCE:4\n", "SEQUENCE:4\nCATEGORIES:Music\n"},
		{"url", "SEQUENCE:4\n", "SEQUENCE:4\nURL:https://example.org/choir\n"},
		{"organizer", "SEQUENCE:4\n", "SEQUENCE:4\nORGANIZER;CN=Ann:mailto:ann@example.org\n"},
		{"status", "SEQUENCE:4\n", "SEQUENCE:4\nSTATUS:TENTATIVE\n"},
		{"an override's title", "SUMMARY:Choir rehearsal: concert run-through", "SUMMARY:Choir rehearsal: dress rehearsal"},
		{"an override's times", "DTSTART;TZID=Europe/Amsterdam:20261029T193000", "DTSTART;TZID=Europe/Amsterdam:20261029T191500"},
		{"an override cancelled", "SUMMARY:Choir rehearsal: concert run-through\n", "SUMMARY:Choir rehearsal: concert run-through\nSTATUS:CANCELLED\n"},
		{"an override removed", "RECURRENCE-ID;TZID=Europe/Amsterdam:20261021T190000", "RECURRENCE-ID;TZID=Europe/Amsterdam:20261021T180000"},
	}
	for _, c := range changes {
		if !bytes.Contains(raw, []byte(c.old)) {
			t.Fatalf("%s: the fixture has no %q", c.name, c.old)
		}
		changed := strings.Replace(string(raw), c.old, c.new, 1)
		if d := digest([]byte(changed)); d == first {
			t.Errorf("changing the %s keeps the digest", c.name)
		}
	}
}
