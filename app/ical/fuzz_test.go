package ical

import (
	"bytes"
	"strings"
	"testing"
	"time"

	ics "github.com/arran4/golang-ical"
	goical "github.com/emersion/go-ical"
)

// feedBreaks are the characters a hostile value uses to break out of a
// content line, a value or a parameter.
const feedBreaks = "\r\n;,:\\\"\u2028\u2029\u0085\x00\t"

// wantText is what a TEXT value must read back as: every line break one
// LF (CRLF counting once), other control characters and invalid UTF-8
// gone. It restates the rule of textValue independently.
func wantText(s string) string {
	s = strings.ToValidUTF8(s, "")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.Map(func(r rune) rune {
		switch r {
		case '\r', '\n', '\v', '\f', '\u0085', '\u2028', '\u2029':
			return '\n'
		case '\t':
			return r
		}
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return -1
		}
		return r
	}, s)
}

// wantParam is what a parameter value must read back as.
func wantParam(s string) string {
	s = strings.ToValidUTF8(s, "")
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '"':
			return '\''
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '\u2028' || r == '\u2029':
			return ' '
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}

// FuzzWrite renders a feed whose every text field, URL, category,
// organizer name and e-mail is arbitrary, and checks with two independent
// parsers that it holds exactly the two events written (a value can never
// end a VEVENT or start another), that every TEXT value reads back as the
// text given, that the ORGANIZER is written only for a plain address and
// its CN reads back, and that every line is CRLF-terminated, at most 75
// octets and cut only between UTF-8 sequences.
//
// The seed corpus runs in go test; fuzz with
//
//	go test ./app/ical -run XXX -fuzz FuzzWrite -fuzztime 2m
func FuzzWrite(f *testing.F) {
	seeds := [][7]string{
		{"Jazz", "Three bands", "Paradiso", "http://example.test/e/", "Concerts", "Jazz Society", "hello@jazz.example"},
		{"a\r\nEND:VEVENT\r\nBEGIN:VEVENT\r\nUID:forged", "b\rc\nd", "x;y,z:w", "http://example.test/\r\nX:1", "c\\d", `"Q", R;S:T`,
			"a@b.c\r\nEND:VEVENT\r\nBEGIN:VEVENT\r\nUID:forged"},
		{feedBreaks, feedBreaks, feedBreaks, feedBreaks, feedBreaks, feedBreaks, feedBreaks},
		{"line\u2028sep\u2029para\u0085nel", strings.Repeat("é東🎷", 60), strings.Repeat(`\;,`, 40), "https://example.test/" + strings.Repeat("a", 120),
			strings.Repeat(",", 90), strings.Repeat("\"", 80), "x@" + strings.Repeat("a", 90) + ".test"},
		{"\xff\xfe invalid", "\x00\x1b\x7f", "", "javascript:alert(1)", "", "", "Name <a@b.c>"},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1], s[2], s[3], s[4], s[5], s[6])
	}
	f.Fuzz(func(t *testing.T, summary, desc, loc, link, cat, orgName, email string) {
		mod := time.Date(2026, 11, 20, 9, 30, 0, 0, time.UTC)
		ev := Event{UID: "event-1@example.test", Modified: mod, Start: mod, End: mod.Add(time.Hour),
			Summary: summary, Description: desc, Location: loc, URL: link, Categories: []string{cat, "Second"},
			Organizer: &Organizer{Name: orgName, Email: email}, Status: StatusConfirmed}
		sentinel := Event{UID: "event-2@example.test", Modified: mod, Start: mod, End: mod.Add(time.Hour), Summary: "sentinel"}
		var buf bytes.Buffer
		if err := Write(&buf, Calendar{ProdID: "-//test//EN", Name: summary, Events: []Event{ev, sentinel}}); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		if !strings.HasSuffix(out, "\r\n") {
			t.Fatal("feed does not end with CRLF")
		}
		for i, l := range strings.Split(strings.TrimSuffix(out, "\r\n"), "\r\n") {
			if len(l) > maxLineOctets || strings.ContainsAny(l, "\r\n") || !isLineStart(l) {
				t.Fatalf("line %d is not a folded content line: %q", i, l)
			}
		}
		if n := strings.Count(out, "\r\nBEGIN:VEVENT\r\n"); n != 2 {
			t.Fatalf("%d VEVENTs, want 2:\n%s", n, out)
		}

		cal, err := goical.NewDecoder(strings.NewReader(out)).Decode()
		if err != nil {
			t.Fatalf("emersion: %v\n%s", err, out)
		}
		evs := cal.Events()
		if len(evs) != 2 {
			t.Fatalf("emersion reads %d VEVENTs, want 2", len(evs))
		}
		text := func(name string) (string, bool) {
			p := evs[0].Props.Get(name)
			if p == nil {
				return "", false
			}
			v, err := p.Text()
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return v, true
		}
		for name, in := range map[string]string{"SUMMARY": summary, "DESCRIPTION": desc, "LOCATION": loc} {
			got, ok := text(name)
			if want := wantText(in); got != want || (!ok && want != "" && name != "SUMMARY") {
				t.Errorf("%s = %q (present %v), want %q", name, got, ok, want)
			}
		}
		if uid, _ := text("UID"); uid != "event-1@example.test" {
			t.Errorf("UID = %q", uid)
		}
		var cats []string
		for _, p := range evs[0].Props.Values("CATEGORIES") {
			l, err := p.TextList()
			if err != nil {
				t.Fatal(err)
			}
			cats = append(cats, l...)
		}
		wantCats := []string{"Second"}
		if w := wantText(cat); w != "" {
			wantCats = []string{w, "Second"}
		}
		if strings.Join(cats, "\x00") != strings.Join(wantCats, "\x00") {
			t.Errorf("CATEGORIES = %q, want %q", cats, wantCats)
		}
		if p := evs[0].Props.Get("URL"); p != nil {
			if _, ok := uriValue(link); !ok || strings.ContainsAny(p.Value, " \"\t") {
				t.Errorf("URL %q written for %q", p.Value, link)
			}
		}
		addr, okAddr := calAddressValue(email)
		org := evs[0].Props.Get("ORGANIZER")
		switch {
		case okAddr && org == nil:
			t.Errorf("ORGANIZER missing for %q", email)
		case !okAddr && org != nil:
			t.Errorf("ORGANIZER %q written for %q", org.Value, email)
		case org != nil:
			if org.Value != addr {
				t.Errorf("ORGANIZER = %q, want %q", org.Value, addr)
			}
			if got, want := org.Params.Get("CN"), wantParam(orgName); got != want {
				t.Errorf("CN = %q, want %q", got, want)
			}
		}
		if s, _ := evs[1].Props.Text("SUMMARY"); s != "sentinel" {
			t.Errorf("second event's SUMMARY = %q", s)
		}

		// The library that used to write feeds reads them the same way.
		c2, err := ics.ParseCalendar(strings.NewReader(out))
		if err != nil {
			t.Fatalf("arran4: %v", err)
		}
		if n := len(c2.Events()); n != 2 {
			t.Fatalf("arran4 reads %d VEVENTs, want 2", n)
		}
		if p := c2.Events()[0].GetProperty(ics.ComponentPropertySummary); p == nil || ics.FromText(p.Value) != wantText(summary) {
			t.Errorf("arran4 SUMMARY = %v, want %q", p, wantText(summary))
		}
	})
}

// isLineStart reports whether a line (after a continuation's space) starts
// at the beginning of a UTF-8 sequence.
func isLineStart(l string) bool {
	s := strings.TrimPrefix(l, " ")
	return s == "" || s[0]&0xC0 != 0x80
}
