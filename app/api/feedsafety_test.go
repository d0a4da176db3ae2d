package api_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	goical "github.com/emersion/go-ical"

	"github.com/calendar/eventcal/app/ical"
	"github.com/calendar/eventcal/repository"
)

// Issue 19, items 5 and 6: every output format shows a linked venue or
// organizer only to a reader who may read it, and every value a feed
// writes is escaped, whatever was stored.

// feedRoles are the readers: anonymous, then each role.
var feedRoles = []string{"", "contributor", "author", "editor", "admin"}

// setStatus sets a post's status in the store directly (for statuses no
// write route sets, and to skip write-time rules).
func setStatus(t *testing.T, e *env, id int64, status string) {
	t.Helper()
	if _, err := e.store.UpdateRecord(context.Background(), id, func(p *repository.Record) error {
		p.Status = status
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestLinkedVisibilityInEveryFormat links published events to venues and
// organizers of every status and reads each event as every role in every
// format: the single and list iCalendar feeds, the JSON item (json_ld
// included) and the JSON list. A linked record shows exactly when the
// reader may read it on its own.
func TestLinkedVisibilityInEveryFormat(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	type linkedCase struct {
		status  string
		author  string   // who wrote the venue and organizer
		visible []string // roles that may see them
	}
	cases := []linkedCase{
		{"publish", "editor", feedRoles},
		{"draft", "editor", []string{"editor", "admin"}},
		{"pending", "editor", []string{"editor", "admin"}},
		{"private", "editor", []string{"editor", "admin"}},
		{"future", "editor", []string{"editor", "admin"}},
		{"trash", "editor", []string{"editor", "admin"}},
		// A contributor's own draft: the contributor may read it.
		{"draft", "contributor", []string{"contributor", "editor", "admin"}},
	}
	type made struct {
		linkedCase
		event        int64
		venue, email string
	}
	var all []made
	for i, c := range cases {
		n := strconv.Itoa(i)
		venue := "Hall" + n + "x" + c.status
		email := "org" + n + "@" + c.status + ".test"
		st := c.status
		if st == "future" || st == "trash" || (c.author == "contributor" && st != "draft") {
			st = "draft"
		}
		v := e.must(201, "POST", "venues", c.author, map[string]any{"venue": venue, "status": st, "city": "Town" + n,
			"geo_lat": 10 + float64(i), "geo_lng": 20}).id()
		o := e.must(201, "POST", "organizers", c.author, map[string]any{"organizer": "Org" + n + "x" + c.status, "status": st, "email": email}).id()
		ev := e.must(201, "POST", "events", "editor", map[string]any{"title": "Linked " + n, "status": "publish",
			"start_date": "2027-05-0" + strconv.Itoa(i+1) + " 10:00", "end_date": "2027-05-0" + strconv.Itoa(i+1) + " 11:00",
			"venue": v, "organizer": []int64{o}}).id()
		if c.status != st {
			setStatus(t, e, v, c.status)
			setStatus(t, e, o, c.status)
		}
		all = append(all, made{c, ev, venue, email})
	}
	e.flush()
	window := "start_date=2027-01-01&end_date=2027-12-31&per_page=50"
	for _, role := range feedRoles {
		list := e.do("GET", "events.ics?"+window, role, nil)
		jsonList := e.must(200, "GET", "events?"+window, role, nil)
		byUID := parseStrict(t, list.raw, len(cases))
		for _, m := range all {
			id := strconv.FormatInt(m.event, 10)
			want := contains(m.visible, role)
			single := e.do("GET", "events/"+id+".ics", role, nil)
			if single.status != 200 {
				t.Fatalf("%s.ics as %q: %d %s", id, role, single.status, single.raw)
			}
			one := parseStrict(t, single.raw, 1)
			item := e.must(200, "GET", "events/"+id, role, nil)
			for _, out := range []struct {
				name, raw string
			}{{"single .ics", single.raw}, {"list .ics", list.raw}, {"JSON item", item.raw}, {"JSON list", jsonList.raw}} {
				for _, marker := range []string{m.venue, m.email, strings.Replace(m.venue, "Hall", "Org", 1)} {
					if got := strings.Contains(out.raw, marker); got != want {
						t.Errorf("%s venue/organizer as %q in %s: %q shown %v, want %v", m.status, role, out.name, marker, got, want)
					}
				}
			}
			if ld, _ := item.path("json_ld.location.name").(string); (ld == m.venue) != want {
				t.Errorf("%s venue as %q: json_ld location %q", m.status, role, ld)
			}
			for _, ev := range []*goical.Event{one[uidOf(m.event)], byUID[uidOf(m.event)]} {
				if ev == nil {
					t.Fatalf("event %s missing from a feed as %q", id, role)
				}
				loc, _ := ev.Props.Text("LOCATION")
				org := ev.Props.Get("ORGANIZER")
				geo := ev.Props.Get("GEO")
				if want {
					if !strings.HasPrefix(loc, m.venue+", ") || org == nil || org.Value != "mailto:"+m.email || geo == nil {
						t.Errorf("%s as %q: LOCATION %q, ORGANIZER %v, GEO %v; want them shown", m.status, role, loc, org, geo)
					}
				} else if loc != "" || org != nil || geo != nil {
					t.Errorf("%s as %q: LOCATION %q, ORGANIZER %v, GEO %v leak a hidden record", m.status, role, loc, org, geo)
				}
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func uidOf(id int64) string { return "event-" + strconv.FormatInt(id, 10) + "@example.test" }

// parseStrict checks a feed's lines (CRLF, at most 75 octets, folds only
// between UTF-8 sequences), parses it with github.com/emersion/go-ical and
// checks it holds exactly n VEVENTs, which it returns by UID.
func parseStrict(t *testing.T, raw string, n int) map[string]*goical.Event {
	t.Helper()
	if !strings.HasSuffix(raw, "\r\n") {
		t.Fatalf("feed does not end with CRLF: %q", raw)
	}
	for i, l := range strings.Split(strings.TrimSuffix(raw, "\r\n"), "\r\n") {
		s := strings.TrimPrefix(l, " ")
		if len(l) > 75 || strings.ContainsAny(l, "\r\n") || (s != "" && s[0]&0xC0 == 0x80) {
			t.Fatalf("line %d is not a folded content line: %q", i, l)
		}
	}
	if got := strings.Count(raw, "\r\nBEGIN:VEVENT\r\n"); got != n {
		t.Fatalf("%d BEGIN:VEVENT lines, want %d:\n%s", got, n, raw)
	}
	cal, err := goical.NewDecoder(strings.NewReader(raw)).Decode()
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, raw)
	}
	evs := cal.Events()
	if len(evs) != n {
		t.Fatalf("%d VEVENTs parsed, want %d", len(evs), n)
	}
	out := map[string]*goical.Event{}
	for i := range evs {
		u, _ := evs[i].Props.Text("UID")
		out[u] = &evs[i]
	}
	return out
}

// hostileTexts break out of a content line, a value or a parameter in
// every way iCalendar knows.
var hostileTexts = []string{
	"A\r\nEND:VEVENT\r\nBEGIN:VEVENT\r\nUID:forged@evil.test\r\nSUMMARY:forged",
	"semi;colon,comma:colon\\back\"quote",
	"line\u2028separator\u2029paragraph\u0085next\rcr\nlf",
	strings.Repeat("é東🎷;,\\", 20),
}

// feedText is what a feed's TEXT value must read back as for a stored
// text without markup: spaces around it trimmed, every line break one LF
// (CRLF counting once), control characters gone.
func feedText(s string) string {
	s = strings.ReplaceAll(strings.TrimSpace(s), "\r\n", "\n")
	return strings.Map(func(r rune) rune {
		switch r {
		case '\r', '\n', '\v', '\f', '\u0085', '\u2028', '\u2029':
			return '\n'
		}
		if r < 0x20 && r != '\t' || r == 0x7f {
			return -1
		}
		return r
	}, s)
}

// TestFeedEscapesEveryField stores hostile text in every field a feed
// renders (title, description, venue name and address, category, organizer
// name), and, in the store directly as data from before write validation,
// an organizer e-mail that tries to forge an event; both feeds then hold
// exactly the events written, every TEXT value reads back as stored, the
// forged address is left out and no line breaks the 75-octet rule.
func TestFeedEscapesEveryField(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	forged := "a@b.c\r\nEND:VEVENT\r\nBEGIN:VEVENT\r\nUID:forged@evil.test"
	var ids []int64
	for i, h := range hostileTexts {
		v := e.must(201, "POST", "venues", "editor", map[string]any{"venue": "V" + h, "address": "Street " + h, "city": "City" + h,
			"zip": "Z" + h, "country": "C" + h, "stateprovince": "S" + h}).id()
		o := e.must(201, "POST", "organizers", "editor", map[string]any{"organizer": "O" + h, "email": "ok@example.test"}).id()
		if _, err := e.store.UpdateRecord(context.Background(), o, func(p *repository.Record) error {
			p.Organizer.Email = forged
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		day := strconv.Itoa(10 + i)
		ids = append(ids, e.must(201, "POST", "events", "editor", map[string]any{"title": "T" + h, "description": "D" + h,
			"start_date": "2027-06-" + day + " 10:00", "end_date": "2027-06-" + day + " 12:00", "timezone": "Europe/Amsterdam",
			"venue": v, "organizer": []int64{o}, "categories": []string{"K" + strconv.Itoa(i) + h}}).id())
	}
	e.flush()
	list := e.do("GET", "events.ics?start_date=2027-01-01&end_date=2027-12-31", "", nil)
	feed := parseStrict(t, list.raw, len(ids))
	if strings.Contains(list.raw, "forged@evil.test\r\n") || strings.Contains(list.raw, "\r\nUID:forged") {
		t.Errorf("a forged line reached the feed:\n%s", list.raw)
	}
	for _, id := range ids {
		sid := strconv.FormatInt(id, 10)
		single := e.do("GET", "events/"+sid+".ics", "", nil)
		if single.status != 200 {
			t.Fatalf("%d %s", single.status, single.raw)
		}
		one := parseStrict(t, single.raw, 1)
		item := e.must(200, "GET", "events/"+sid, "", nil)
		wantLoc := []string{}
		for _, k := range []string{"venue", "address", "city", "stateprovince", "zip", "country"} {
			wantLoc = append(wantLoc, feedText(ical.PlainText(item.str("venue."+k))))
		}
		want := map[string]string{
			"SUMMARY":     feedText(item.str("title")),
			"DESCRIPTION": feedText(item.str("description")),
			"LOCATION":    strings.Join(wantLoc, ", "),
			"CATEGORIES":  feedText(item.str("categories.0.name")),
		}
		for _, ev := range []*goical.Event{one[uidOf(id)], feed[uidOf(id)]} {
			if ev == nil {
				t.Fatalf("event %d missing", id)
			}
			for name, w := range want {
				if w == "" {
					t.Fatalf("%s: nothing stored", name)
				}
				got, err := ev.Props.Text(name)
				if err != nil || got != w {
					t.Errorf("event %d %s = %q (%v), want %q", id, name, got, err, w)
				}
			}
			if org := ev.Props.Get("ORGANIZER"); org != nil {
				t.Errorf("event %d: ORGANIZER %q written for a stored address with CR/LF", id, org.Value)
			}
			if len(ev.Props.Values("UID")) != 1 || len(ev.Props.Values("SUMMARY")) != 1 {
				t.Errorf("event %d: a value added properties: %v", id, ev.Props)
			}
		}
	}
}

// TestContactFieldsRefuseLineBreaks writes CR, LF, other control
// characters and Unicode line separators into e-mail, website and phone,
// on every write path (venue and organizer create and update, inline data
// in an event, event website): each is a 400 rest_invalid_param naming the
// field, and nothing is stored.
func TestContactFieldsRefuseLineBreaks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ve := e.must(201, "POST", "venues", "editor", map[string]any{"venue": "Base hall"}).id()
	or := e.must(201, "POST", "organizers", "editor", map[string]any{"organizer": "Base org", "email": "base@example.test"}).id()
	ev := e.must(201, "POST", "events", "editor", map[string]any{"title": "Base", "start_date": "2027-01-01 10:00", "end_date": "2027-01-01 11:00"}).id()
	bad := map[string][]string{
		"email":   {"a@b.c\r\nEND:VEVENT", "a@b.c\n", "a@b.c\u2028x", "a@b.c\tx", "a@b.c\x00", "Name <a@b.c>", "a b@c.d", "not-an-address", "a@b.c, d@e.f"},
		"website": {"https://x.test/\r\nEND:VEVENT", "https://x.test/\u2029", "https://x.test/\x7f", "javascript:alert(1)", "foo"},
		"phone":   {"555\r\n1234", "555\n", "555\u2028", "555\x1b", "555\u0085"},
	}
	type target struct {
		name, method, url string
		wrap              func(field, v string) map[string]any
		fields            []string
	}
	id := func(n int64) string { return strconv.FormatInt(n, 10) }
	targets := []target{
		{"create organizer", "POST", "organizers", func(f, v string) map[string]any { return map[string]any{"organizer": "New org", f: v} }, []string{"email", "website", "phone"}},
		{"update organizer", "PATCH", "organizers/" + id(or), func(f, v string) map[string]any { return map[string]any{f: v} }, []string{"email", "website", "phone"}},
		{"create venue", "POST", "venues", func(f, v string) map[string]any { return map[string]any{"venue": "New hall", f: v} }, []string{"website", "phone"}},
		{"update venue", "PUT", "venues/" + id(ve), func(f, v string) map[string]any { return map[string]any{f: v} }, []string{"website", "phone"}},
		{"inline organizer", "PATCH", "events/" + id(ev), func(f, v string) map[string]any {
			return map[string]any{"organizer": []any{map[string]any{"organizer": "Inline org", f: v}}}
		}, []string{"email", "website", "phone"}},
		{"inline venue", "PATCH", "events/" + id(ev), func(f, v string) map[string]any {
			return map[string]any{"venue": map[string]any{"venue": "Inline hall", f: v}}
		}, []string{"website", "phone"}},
		{"event website", "PATCH", "events/" + id(ev), func(f, v string) map[string]any { return map[string]any{f: v} }, []string{"website"}},
	}
	for _, tg := range targets {
		for _, field := range tg.fields {
			for _, v := range bad[field] {
				if field == "phone" && !lineBreakingValue(v) {
					continue
				}
				r := e.do(tg.method, tg.url, "editor", tg.wrap(field, v))
				if r.status != 400 || r.str("code") != "rest_invalid_param" {
					t.Errorf("%s %s=%q: %d %s, want 400 rest_invalid_param", tg.name, field, v, r.status, r.raw)
					continue
				}
				inline := strings.HasPrefix(tg.name, "inline")
				if !inline && !strings.Contains(r.str("data.params."+field), field) {
					t.Errorf("%s %s=%q: message %q does not name the field", tg.name, field, v, r.raw)
				}
				if inline && !strings.Contains(r.raw, field) {
					t.Errorf("%s %s=%q: message %q does not name the field", tg.name, field, v, r.raw)
				}
			}
		}
	}
	if got := e.must(200, "GET", "organizers/"+id(or), "editor", nil).str("email"); got != "base@example.test" {
		t.Errorf("a refused write changed the e-mail: %q", got)
	}
	// What a person types is still accepted.
	for _, body := range []map[string]any{
		{"email": "first.last+tag@sub.example.org", "phone": "+31 (0)20 123-45.67 ext. 8", "website": "https://example.org/a?b=c#d"},
		{"email": "", "phone": "", "website": ""},
		{"email": " spaced@example.org "},
	} {
		e.must(200, "PATCH", "organizers/"+id(or), "editor", body)
	}
}

// lineBreakingValue reports whether s holds a control character or a
// Unicode line separator (phone accepts any other text).
func lineBreakingValue(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || (r >= 0x7f && r < 0xa0) || r == '\u2028' || r == '\u2029' })
}

// TestProtectedEventHidesLinksInFeeds checks a password-protected event's
// venue and organizer: left out of the list feed as they are left out of
// the JSON list, shown with the password, and the single
// feed needs the password as the JSON item does.
func TestProtectedEventHidesLinksInFeeds(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	v := e.must(201, "POST", "venues", "editor", map[string]any{"venue": "Guarded Hall", "geo_lat": 1, "geo_lng": 2}).id()
	o := e.must(201, "POST", "organizers", "editor", map[string]any{"organizer": "Guarded Org", "email": "guard@example.test"}).id()
	id := strconv.FormatInt(e.must(201, "POST", "events", "editor", map[string]any{"title": "Guarded", "password": "pw",
		"start_date": "2027-02-01 10:00", "end_date": "2027-02-01 11:00", "venue": v, "organizer": []int64{o}}).id(), 10)
	e.flush()
	cases := []struct {
		name, url, as string
		status        int
		shown         bool
	}{
		{"list, anonymous", "events.ics?include=" + id, "", 200, false},
		{"list, contributor", "events.ics?include=" + id, "contributor", 200, false},
		{"list, with the password", "events.ics?include=" + id + "&password=pw", "", 200, true},
		{"list, editor with context=edit", "events.ics?include=" + id + "&context=edit", "editor", 200, true},
		{"single, anonymous", "events/" + id + ".ics", "", 403, false},
		{"single, with the password", "events/" + id + ".ics?password=pw", "", 200, true},
	}
	for _, c := range cases {
		r := e.do("GET", c.url, c.as, nil)
		if r.status != c.status {
			t.Errorf("%s: %d, want %d", c.name, r.status, c.status)
			continue
		}
		if r.status != 200 {
			continue
		}
		parseStrict(t, r.raw, 1)
		for _, marker := range []string{"Guarded Hall", "guard@example.test", "GEO:"} {
			if got := strings.Contains(r.raw, marker); got != c.shown {
				t.Errorf("%s: %q shown %v, want %v", c.name, marker, got, c.shown)
			}
		}
	}
}
