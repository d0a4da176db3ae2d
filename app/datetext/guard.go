package datetext

import (
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// fillers are words of the configured languages that the library skips or
// reads as the number one ("a", "une", "ein"): they never make a string a
// date ("8 after", "une-7", "an/10/and" are not dates).
var fillers = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an the and or of at on in to by for after before from with one
		een de het en om op te van na voor un une le la les et ou du des à au
		ein eine einen der die das und oder am um im zu vor nach
		uno una il lo di da del alle tra fra i w z po do za od o jeden jedna
		el los las y`) {
		fillers[w] = true
	}
}

// anchored reports whether s has a word the library can anchor a date on:
// three or more letters and not a filler. Single letters and pairs ("y",
// "a 6", "an 52 s") are abbreviations the library reads too loosely, and
// digits alone ("8.2", "4-25 94") are refused. single reports a string that
// is one word of two letters ("nu", Dutch for now), which only the relative
// parser may read.
func anchored(s string) (ok, single bool) {
	words := strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) })
	for _, w := range words {
		if len([]rune(w)) >= 3 && !fillers[w] {
			return true, false
		}
	}
	single = len(words) == 1 && len([]rune(words[0])) == 2 && !strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) })
	return single, single
}

// usesEveryPart reports whether every variant of s (see variants) reads
// differently from s, which read as t at now.
func usesEveryPart(s, lang string, now, t time.Time) bool {
	// A variant may mean the same by coincidence ("woensdag 16:00" and
	// "16:00" on a Wednesday): it must mean the same a day later too.
	later := now.AddDate(0, 0, 1)
	tLater, _, errLater := readPhrase(s, lang, later)
	for _, variant := range variants(s) {
		v, _, err := readPhrase(variant, lang, now)
		if err != nil || !v.Equal(t) {
			continue
		}
		if vl, _, err := readPhrase(variant, lang, later); err == nil && errLater == nil && vl.Equal(tLater) {
			return false
		}
	}
	return true
}

// optional are the words the library may rightly do without: future
// markers ("in 6 months", "dans 2 semaines", "over 2 weken": a bare "6
// months" is in the future too), articles and prepositions ("a week ago",
// "1 de diciembre", "tomorrow at 9am").
var optional = map[string]bool{}

// letters are the one-letter words a phrase may have ("a week ago", French
// "il y a", Polish "w", "z"); any other lone letter is an abbreviation the
// library reads too loosely ("30 d", "45 s").
var letters = map[string]bool{"a": true, "y": true, "w": true, "z": true, "o": true, "e": true, "i": true, "à": true}

func init() {
	for _, w := range strings.Fields(`a an in dans over binnen tra fra za dentro de del at il y à om um o la le el w z
		alle en un une ein eine een uno una jeden`) {
		optional[w] = true
	}
}

var (
	numberRe = regexp.MustCompile(`\d+`)
	wordRe   = regexp.MustCompile(`\pL+`)
)

// variants returns s with each number changed and each word that is not
// optional removed: a phrase whose meaning survives either change had a
// part the library skipped.
func variants(s string) []string {
	var out []string
	for _, loc := range numberRe.FindAllStringIndex(s, -1) {
		n, _ := strconv.Atoi(s[loc[0]:loc[1]])
		m := n + 1
		if len(strconv.Itoa(m)) != loc[1]-loc[0] {
			m = n - 1
		}
		out = append(out, s[:loc[0]]+strconv.Itoa(m)+s[loc[1]:])
	}
	for _, loc := range wordRe.FindAllStringIndex(s, -1) {
		if w := s[loc[0]:loc[1]]; !optional[w] {
			out = append(out, strings.TrimSpace(s[:loc[0]]+" "+s[loc[1]:]))
		}
	}
	return out
}

var (
	// clockInText matches a time of day inside a phrase.
	clockInText = regexp.MustCompile(`\d{1,2}:\d{2}(?::\d{2})?|\d{1,2}\s*(?:am|pm)\b`)
	// fourDigitYear matches a year written in full.
	fourDigitYear = regexp.MustCompile(`(^|\D)\d{4}($|\D)`)
)

// plausibleNumbers reports whether the numbers of a written date can be a
// day (1-31) and a year written in full: "24,56 december" and "december 97"
// are not dates.
func plausibleNumbers(s string) bool {
	days, years := 0, 0
	for _, n := range numberRe.FindAllString(clockInText.ReplaceAllString(s, " "), -1) {
		v, _ := strconv.Atoi(n)
		switch {
		case len(n) == 4:
			years++
		case v >= 1 && v <= 31 && len(n) <= 2:
			days++
		default:
			return false
		}
	}
	return days <= 1 && years <= 1
}
