package datetext

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"
)

// now is a Wednesday 03:30:15 in UTC and Tuesday 22:30:15 in New York, so
// that every day word lands on a different day in the two site zones.
var now = time.Date(2026, 11, 25, 3, 30, 15, 0, time.UTC)

// zones are the two site time zones every phrase is pinned in.
var zones = []string{"UTC", "America/New_York"}

// phrase is one accepted phrase and its wall-clock time in each zone.
type phrase struct{ in, utc, ny string }

// english phrases are accepted whatever the request's language (strtotime's
// language); the comments say which part reads them.
var english = []phrase{
	// Fast path.
	{"2026-12-01", "2026-12-01 00:00:00", "2026-12-01 00:00:00"},
	{"2026-12-01 20:15", "2026-12-01 20:15:00", "2026-12-01 20:15:00"},
	{"2026-12-01 20:15:30", "2026-12-01 20:15:30", "2026-12-01 20:15:30"},
	{"2026-12-01T20:15:30Z", "2026-12-01 20:15:30", "2026-12-01 15:15:30"},
	{"2026-12-01T20:15:30+01:00", "2026-12-01 19:15:30", "2026-12-01 14:15:30"},
	{"1796000000", "2026-11-30 00:53:20", "2026-11-29 19:53:20"},
	{"@1796000000", "2026-11-30 00:53:20", "2026-11-29 19:53:20"},
	// strtotime's day words (00:00 of the day; noon 12:00).
	{"now", "2026-11-25 03:30:15", "2026-11-24 22:30:15"},
	{"today", "2026-11-25 00:00:00", "2026-11-24 00:00:00"},
	{"Today", "2026-11-25 00:00:00", "2026-11-24 00:00:00"},
	{"midnight", "2026-11-25 00:00:00", "2026-11-24 00:00:00"},
	{"noon", "2026-11-25 12:00:00", "2026-11-24 12:00:00"},
	{"tomorrow", "2026-11-26 00:00:00", "2026-11-25 00:00:00"},
	{"yesterday", "2026-11-24 00:00:00", "2026-11-23 00:00:00"},
	// A bare time of day is today.
	{"16:00", "2026-11-25 16:00:00", "2026-11-24 16:00:00"},
	{"4pm", "2026-11-25 16:00:00", "2026-11-24 16:00:00"},
	{"4:30 pm", "2026-11-25 16:30:00", "2026-11-24 16:30:00"},
	// Weekdays as strtotime reads them.
	{"wednesday", "2026-11-25 00:00:00", "2026-11-25 00:00:00"},
	{"this wednesday", "2026-11-25 00:00:00", "2026-11-25 00:00:00"},
	{"next wednesday", "2026-12-02 00:00:00", "2026-11-25 00:00:00"},
	{"next wednesday 4pm", "2026-12-02 16:00:00", "2026-11-25 16:00:00"},
	{"next Wednesday at noon", "2026-12-02 12:00:00", "2026-11-25 12:00:00"},
	{"last friday", "2026-11-20 00:00:00", "2026-11-20 00:00:00"},
	{"sat 10:00", "2026-11-28 10:00:00", "2026-11-28 10:00:00"},
	// First and last day of a month keep the time of day, as strtotime does.
	{"first day of this month", "2026-11-01 03:30:15", "2026-11-01 22:30:15"},
	{"last day of this month", "2026-11-30 03:30:15", "2026-11-30 22:30:15"},
	{"first day of next month", "2026-12-01 03:30:15", "2026-12-01 22:30:15"},
	{"last day of next month", "2026-12-31 03:30:15", "2026-12-31 22:30:15"},
	{"first day of last month", "2026-10-01 03:30:15", "2026-10-01 22:30:15"},
	{"first day of january 2027", "2027-01-01 00:00:00", "2027-01-01 00:00:00"},
	// The library: relative phrases (in the future unless "ago" or "-").
	{"+6 months", "2027-05-25 03:30:15", "2027-05-24 22:30:15"},
	{"in 6 months", "2027-05-25 03:30:15", "2027-05-24 22:30:15"},
	{"6 months", "2027-05-25 03:30:15", "2027-05-24 22:30:15"},
	{"+2 weeks", "2026-12-09 03:30:15", "2026-12-08 22:30:15"},
	{"-3 days", "2026-11-22 03:30:15", "2026-11-21 22:30:15"},
	{"2 weeks ago", "2026-11-11 03:30:15", "2026-11-10 22:30:15"},
	{"a week ago", "2026-11-18 03:30:15", "2026-11-17 22:30:15"},
	{"in a week", "2026-12-02 03:30:15", "2026-12-01 22:30:15"},
	{"1 hour ago", "2026-11-25 02:30:15", "2026-11-24 21:30:15"},
	{"next week", "2026-12-02 03:30:15", "2026-12-01 22:30:15"},
	{"next month", "2026-12-25 03:30:15", "2026-12-24 22:30:15"},
	{"next year", "2027-11-25 03:30:15", "2027-11-24 22:30:15"},
	{"tomorrow 9am", "2026-11-26 09:00:00", "2026-11-25 09:00:00"},
	{"tomorrow at 9am", "2026-11-26 09:00:00", "2026-11-25 09:00:00"},
	{"noon tomorrow", "2026-11-26 12:00:00", "2026-11-25 12:00:00"},
	// The library: written dates.
	{"1 December 2026", "2026-12-01 00:00:00", "2026-12-01 00:00:00"},
	{"Dec 1 2026", "2026-12-01 00:00:00", "2026-12-01 00:00:00"},
	{"December 1, 2026", "2026-12-01 00:00:00", "2026-12-01 00:00:00"},
	{"1 Dec 2026 10:00", "2026-12-01 10:00:00", "2026-12-01 10:00:00"},
	{"December 17", "2026-12-17 00:00:00", "2026-12-17 00:00:00"},
	{"December 2026", "2026-12-01 00:00:00", "2026-12-01 00:00:00"},
}

// local phrases are accepted in their own language (multilang_language).
var local = map[string][]phrase{
	"nl": {
		{"morgen", "2026-11-26 00:00:00", "2026-11-25 00:00:00"},
		{"vandaag", "2026-11-25 00:00:00", "2026-11-24 00:00:00"},
		{"gisteren", "2026-11-24 00:00:00", "2026-11-23 00:00:00"},
		{"overmorgen", "2026-11-27 00:00:00", "2026-11-26 00:00:00"},
		{"nu", "2026-11-25 03:30:15", "2026-11-24 22:30:15"},
		{"over 2 weken", "2026-12-09 03:30:15", "2026-12-08 22:30:15"},
		{"2 dagen geleden", "2026-11-23 03:30:15", "2026-11-22 22:30:15"},
		{"1 december 2026", "2026-12-01 00:00:00", "2026-12-01 00:00:00"},
		{"woensdag 16:00", "2026-11-25 16:00:00", "2026-11-25 16:00:00"},
	},
	"fr": {
		{"demain", "2026-11-26 00:00:00", "2026-11-25 00:00:00"},
		{"aujourd'hui", "2026-11-25 00:00:00", "2026-11-24 00:00:00"},
		{"hier", "2026-11-24 00:00:00", "2026-11-23 00:00:00"},
		{"après-demain", "2026-11-27 00:00:00", "2026-11-26 00:00:00"},
		{"maintenant", "2026-11-25 03:30:15", "2026-11-24 22:30:15"},
		{"dans 2 semaines", "2026-12-09 03:30:15", "2026-12-08 22:30:15"},
		{"il y a 2 jours", "2026-11-23 03:30:15", "2026-11-22 22:30:15"},
		{"1 décembre 2026", "2026-12-01 00:00:00", "2026-12-01 00:00:00"},
		{"mercredi", "2026-11-25 00:00:00", "2026-11-25 00:00:00"},
	},
	"de": {
		{"morgen", "2026-11-26 00:00:00", "2026-11-25 00:00:00"},
		{"heute", "2026-11-25 00:00:00", "2026-11-24 00:00:00"},
		{"gestern", "2026-11-24 00:00:00", "2026-11-23 00:00:00"},
		{"übermorgen", "2026-11-27 00:00:00", "2026-11-26 00:00:00"},
		{"jetzt", "2026-11-25 03:30:15", "2026-11-24 22:30:15"},
		{"in 2 Wochen", "2026-12-09 03:30:15", "2026-12-08 22:30:15"},
		{"vor 2 Tagen", "2026-11-23 03:30:15", "2026-11-22 22:30:15"},
		{"1. Dezember 2026", "2026-12-01 00:00:00", "2026-12-01 00:00:00"},
		{"Mittwoch", "2026-11-25 00:00:00", "2026-11-25 00:00:00"},
	},
	"it": {
		{"domani", "2026-11-26 00:00:00", "2026-11-25 00:00:00"},
		{"oggi", "2026-11-25 00:00:00", "2026-11-24 00:00:00"},
		{"ieri", "2026-11-24 00:00:00", "2026-11-23 00:00:00"},
		{"tra 2 settimane", "2026-12-09 03:30:15", "2026-12-08 22:30:15"},
		{"2 giorni fa", "2026-11-23 03:30:15", "2026-11-22 22:30:15"},
		{"1 dicembre 2026", "2026-12-01 00:00:00", "2026-12-01 00:00:00"},
		{"mercoledì", "2026-11-25 00:00:00", "2026-11-25 00:00:00"},
	},
	"pl": {
		{"jutro", "2026-11-26 00:00:00", "2026-11-25 00:00:00"},
		{"dzisiaj", "2026-11-25 00:00:00", "2026-11-24 00:00:00"},
		{"wczoraj", "2026-11-24 00:00:00", "2026-11-23 00:00:00"},
		{"pojutrze", "2026-11-27 00:00:00", "2026-11-26 00:00:00"},
		{"teraz", "2026-11-25 03:30:15", "2026-11-24 22:30:15"},
		{"za 2 tygodnie", "2026-12-09 03:30:15", "2026-12-08 22:30:15"},
		{"2 dni temu", "2026-11-23 03:30:15", "2026-11-22 22:30:15"},
		{"1 grudnia 2026", "2026-12-01 00:00:00", "2026-12-01 00:00:00"},
		{"środa", "2026-11-25 00:00:00", "2026-11-25 00:00:00"},
	},
	"es": {
		{"mañana", "2026-11-26 00:00:00", "2026-11-25 00:00:00"},
		{"hoy", "2026-11-25 00:00:00", "2026-11-24 00:00:00"},
		{"ayer", "2026-11-24 00:00:00", "2026-11-23 00:00:00"},
		{"ahora", "2026-11-25 03:30:15", "2026-11-24 22:30:15"},
		{"dentro de 2 semanas", "2026-12-09 03:30:15", "2026-12-08 22:30:15"},
		{"hace 2 días", "2026-11-23 03:30:15", "2026-11-22 22:30:15"},
		{"1 de diciembre de 2026", "2026-12-01 00:00:00", "2026-12-01 00:00:00"},
		{"miércoles", "2026-11-25 00:00:00", "2026-11-25 00:00:00"},
	},
}

// refused are not dates in any language (400 at the API).
var refused = []string{
	"", "   ", "before my birthday", "soon", "someday", "next", "ago", "the", "!!!", "*",
	"y", "a", "th", "a 6", "an/10/and", "une-7", "8 after", "after/by", "and.71 m", "45 s", "1.m", "30 d,week",
	"12", "2027", "8.2", "4-25 94", "01/12/2026", "25:00", "13:99", "99pm",
	"tomorrow:40", "9 tomorrow", "before tomorrow", "after tomorrow 5", "december 97", "24,56 december", "51 december",
	"2026-13-45", "2026-02-30", "2026-12-01 25:00", "first day of soon", "last day of", "next blursday",
	strings.Repeat("tomorrow ", 10),
}

// languages are the configured languages (LANGUAGES' default).
var languagesUnderTest = []string{"nl", "en", "fr", "de", "it", "pl", "es"}

func loadZones(t testing.TB) map[string]*time.Location {
	out := map[string]*time.Location{}
	for _, z := range zones {
		loc, err := time.LoadLocation(z)
		if err != nil {
			t.Fatal(err)
		}
		out[z] = loc
	}
	return out
}

// TestParsePinned pins every accepted phrase to its instant at a fixed now in
// two site zones, for every configured language.
func TestParsePinned(t *testing.T) {
	locs := loadZones(t)
	for _, lang := range languagesUnderTest {
		cases := append(append([]phrase{}, english...), local[lang]...)
		for _, c := range cases {
			for _, z := range zones {
				want := c.utc
				if z == "America/New_York" {
					want = c.ny
				}
				t.Run(fmt.Sprintf("%s/%s/%s", lang, z, c.in), func(t *testing.T) {
					wantT, err := time.ParseInLocation("2006-01-02 15:04:05", want, locs[z])
					if err != nil {
						t.Fatal(err)
					}
					got, err := Parse(c.in, lang, now, locs[z])
					if err != nil {
						t.Fatalf("Parse(%q) refused, want %s", c.in, want)
					}
					if !got.Equal(wantT) || got.Location() != locs[z] {
						t.Errorf("Parse(%q) = %s, want %s", c.in, got.Format(time.RFC3339), wantT.Format(time.RFC3339))
					}
				})
			}
		}
	}
}

// TestParseRefused checks the phrases that must stay 400 in every language,
// and that a language's words are not read in another language.
func TestParseRefused(t *testing.T) {
	locs := loadZones(t)
	for _, lang := range languagesUnderTest {
		for _, s := range refused {
			for _, z := range zones {
				if got, err := Parse(s, lang, now, locs[z]); err == nil {
					t.Errorf("%s/%s: Parse(%q) = %s, want refused", lang, z, s, got)
				}
			}
		}
	}
	for _, s := range []string{"demain", "mañana", "jutro", "domani", "übermorgen", "vandaag", "aujourd'hui"} {
		if got, err := Parse(s, "en", now, time.UTC); err == nil {
			t.Errorf("en: Parse(%q) = %s, want refused (not English)", s, got)
		}
	}
	if got, err := Parse("demain", "nl", now, time.UTC); err == nil {
		t.Errorf("nl: Parse(demain) = %s, want refused", got)
	}
}

// TestParseRefusesGarbage feeds strings made of connecting words, letters
// and numbers (a fixed seed): none of them is a date in any language.
func TestParseRefusesGarbage(t *testing.T) {
	words := strings.Fields(`a an the of in on at to for is be it by and or not my your soon later never
		before after birthday hello world foo bar lorem ipsum x y z q w e r t u i o p s d f g h j k l c v b n m
		ab xy zz st nd rd th de la le el il du van het een der die das un une los und et ou na po ze do dla
		party concert event free ticket`)
	seps := []string{" ", " ", " ", "-", ",", ".", "/"}
	r := rand.New(rand.NewSource(13))
	for _, lang := range languagesUnderTest {
		for range 1500 {
			parts := make([]string, 1+r.Intn(3))
			for j := range parts {
				parts[j] = words[r.Intn(len(words))]
				if r.Intn(5) == 0 {
					parts[j] = fmt.Sprint(r.Intn(100))
				}
			}
			s := parts[0]
			for _, p := range parts[1:] {
				s += seps[r.Intn(len(seps))] + p
			}
			if got, err := Parse(s, lang, now, time.UTC); err == nil {
				t.Errorf("%s: Parse(%q) = %s, want refused", lang, s, got)
			}
		}
	}
}

// TestParseLanguageFallback checks that an unknown or empty language reads
// English only.
func TestParseLanguageFallback(t *testing.T) {
	for _, lang := range []string{"", "xx", "EN"} {
		if _, err := Parse("+2 weeks", lang, now, time.UTC); err != nil {
			t.Errorf("lang %q: +2 weeks refused", lang)
		}
		if _, err := Parse("demain", lang, now, time.UTC); err == nil {
			t.Errorf("lang %q: demain accepted", lang)
		}
	}
	if _, err := Parse("demain", "FR", now, time.UTC); err != nil {
		t.Errorf("lang FR: demain refused")
	}
}

// TestParseCacheKeepsClock checks that a cached phrase is still read at the
// caller's now (the cache is keyed by the second).
func TestParseCacheKeepsClock(t *testing.T) {
	a, err1 := Parse("+2 weeks", "en", now, time.UTC)
	b, err2 := Parse("+2 weeks", "en", now.Add(90*time.Second), time.UTC)
	if err1 != nil || err2 != nil || b.Sub(a) != 90*time.Second {
		t.Errorf("+2 weeks at now and now+90s: %s, %s", a, b)
	}
	// Within one minute (cached): the clock still counts, day words do not.
	for _, c := range []struct {
		in   string
		move time.Duration
	}{{"+2 weeks", 30 * time.Second}, {"over 2 weken", 30 * time.Second}, {"tomorrow", 0}, {"morgen", 0}, {"16:00", 0}, {"first day of next month", 30 * time.Second}} {
		a, err1 := Parse(c.in, "nl", now, time.UTC)
		b, err2 := Parse(c.in, "nl", now.Add(30*time.Second), time.UTC)
		if err1 != nil || err2 != nil || b.Sub(a) != c.move {
			t.Errorf("%s at now and now+30s: %s, %s (%v %v), want %s apart", c.in, a, b, err1, err2, c.move)
		}
	}
}

// phraseHeavy is what a phrase-heavy list request sends.
var phraseHeavy = []string{"today", "+6 months", "next wednesday 4pm", "1 December 2026", "last day of next month", "2 weeks ago"}

// BenchmarkParseUncached measures the cost per phrase of a phrase-heavy
// list at a new minute each call (nothing cached but the verdicts).
func BenchmarkParseUncached(b *testing.B) {
	i := 0
	for b.Loop() {
		i++
		if _, err := Parse(phraseHeavy[i%len(phraseHeavy)], "nl", now.Add(time.Duration(i)*time.Minute), time.UTC); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseLibrary measures one phrase the library reads, at a new
// minute each time (its verdict is cached, its instant is not: two library
// reads per call).
func BenchmarkParseLibrary(b *testing.B) {
	i := 0
	for b.Loop() {
		i++
		if _, err := Parse("+6 months", "nl", now.Add(time.Duration(i)*time.Minute), time.UTC); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseFirstSight measures a phrase never seen before (the library
// reads it and each of its variants).
func BenchmarkParseFirstSight(b *testing.B) {
	i := 0
	for b.Loop() {
		i++
		if _, err := Parse(fmt.Sprintf("%d December 2026", 1+i%28), fmt.Sprint([]string{"nl", "fr", "de", "es"}[i/28%4]), now.Add(time.Duration(i)*time.Second), time.FixedZone(fmt.Sprint(i), 0)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseCached measures a phrase read again within the same second.
func BenchmarkParseCached(b *testing.B) {
	i := 0
	for b.Loop() {
		i++
		if _, err := Parse(phraseHeavy[i%len(phraseHeavy)], "nl", now, time.UTC); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseAbsolute measures the fast path.
func BenchmarkParseAbsolute(b *testing.B) {
	for b.Loop() {
		if _, err := Parse("2026-12-01 20:15:00", "nl", now, time.UTC); err != nil {
			b.Fatal(err)
		}
	}
}
