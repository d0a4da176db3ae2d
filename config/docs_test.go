package config

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/calendar/eventcal/config/testsupport"
)

// markdownFiles lists the module's Markdown files (README.md, CHANGELOG.md,
// SECURITY.md, docs/*.md, the packages' READMEs), relative to root, leaving
// out hidden directories and testdata (recorded data with its own notes).
func markdownFiles(t *testing.T, root string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(d.Name(), ".md") {
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// mdDoc is a Markdown file as far as links are concerned.
type mdDoc struct {
	// prose is the text outside fenced code blocks, with code spans blanked.
	prose []string
	// anchors are the fragments its headings (and <a id/name>) define.
	anchors map[string]bool
	// fences are the fenced code blocks' contents, in order.
	fences [][]string
}

var (
	headingLine = regexp.MustCompile(`^ {0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$`)
	codeSpan    = regexp.MustCompile("`+[^`]*`+")
	inlineLink  = regexp.MustCompile(`\[([^\]]*)\]\(([^()\s]*)(?:\s+"[^"]*")?\)`)
	htmlAnchor  = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
)

// parseMarkdown splits a file into prose, fenced blocks and the anchors of
// its headings.
func parseMarkdown(text string) mdDoc {
	d := mdDoc{anchors: map[string]bool{}}
	seen := map[string]int{}
	var fence []string
	inFence, marker := false, ""
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		if !inFence && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")) {
			inFence, marker, fence = true, trimmed[:3], nil
			continue
		}
		if inFence {
			if strings.HasPrefix(trimmed, marker) {
				inFence = false
				d.fences = append(d.fences, fence)
				continue
			}
			fence = append(fence, line)
			continue
		}
		if m := headingLine.FindStringSubmatch(line); m != nil {
			slug := headingSlug(m[2])
			if n := seen[slug]; n > 0 {
				d.anchors[slug+"-"+strconv.Itoa(n)] = true
			} else {
				d.anchors[slug] = true
			}
			seen[slug]++
		}
		for _, m := range htmlAnchor.FindAllStringSubmatch(line, -1) {
			d.anchors[m[1]] = true
		}
		d.prose = append(d.prose, codeSpan.ReplaceAllStringFunc(line, func(s string) string { return strings.Repeat(" ", len(s)) }))
	}
	return d
}

// headingSlug is the fragment GitHub gives a heading: its text (code spans
// and links reduced to their text), lower-cased, without punctuation but
// hyphens and underscores, spaces turned into hyphens.
func headingSlug(heading string) string {
	text := inlineLink.ReplaceAllString(heading, "$1")
	text = strings.ReplaceAll(text, "`", "")
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestHeadingSlug pins the fragments GitHub makes of the headings the
// documentation uses.
func TestHeadingSlug(t *testing.T) {
	t.Parallel()
	tests := []struct{ heading, want string }{
		{"A first session", "a-first-session"},
		{"Readiness (`/readyz`)", "readiness-readyz"},
		{"Dates, slugs and costs as people write them", "dates-slugs-and-costs-as-people-write-them"},
		{"Calendar feeds (iCalendar)", "calendar-feeds-icalendar"},
		{`Split ("this and following")`, "split-this-and-following"},
		{"[0.30.0] - 2026-11-26", "0300---2026-11-26"},
		{"Keys and FerretDB", "keys-and-ferretdb"},
		{"Fête d’été", "fête-dété"},
	}
	for _, tc := range tests {
		if got := headingSlug(tc.heading); got != tc.want {
			t.Errorf("headingSlug(%q) = %q, want %q", tc.heading, got, tc.want)
		}
	}
}

// TestDocumentationLinksResolve: every relative link of the module's
// Markdown files names a file or directory that exists, and every fragment
// (#section, in the same file or another Markdown file) names a heading
// there, so that moving or renaming a section cannot leave a link behind.
// Links to other sites (http, https, mailto) are not followed.
func TestDocumentationLinksResolve(t *testing.T) {
	t.Parallel()
	root := testsupport.ModuleRoot(t)
	files := markdownFiles(t, root)
	for _, want := range []string{"README.md", "CHANGELOG.md", "SECURITY.md", "docs/operators.md", "docs/frontend.md",
		"docs/editors.md", "docs/wordpress.md", "docs/internals.md"} {
		if !slices.Contains(files, want) {
			t.Errorf("%s is missing", want)
		}
	}
	docs := map[string]mdDoc{}
	load := func(rel string) (mdDoc, error) {
		if d, ok := docs[rel]; ok {
			return d, nil
		}
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			return mdDoc{}, err
		}
		docs[rel] = parseMarkdown(string(b))
		return docs[rel], nil
	}
	links := 0
	for _, file := range files {
		d, err := load(file)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range d.prose {
			for _, m := range inlineLink.FindAllStringSubmatch(line, -1) {
				target := m[2]
				if target == "" || strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				links++
				where := file + ":" + strconv.Itoa(i+1) + " (" + target + ")"
				path, fragment, _ := strings.Cut(target, "#")
				rel := file
				if path != "" {
					rel = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(file), filepath.FromSlash(path))))
					if rel == ".." || strings.HasPrefix(rel, "../") {
						t.Errorf("%s: points outside the repository", where)
						continue
					}
					if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel))); err != nil {
						t.Errorf("%s: no such file: %s", where, rel)
						continue
					}
				}
				if fragment == "" {
					continue
				}
				if !strings.HasSuffix(rel, ".md") {
					t.Errorf("%s: a fragment on a file that is not Markdown", where)
					continue
				}
				td, err := load(rel)
				if err != nil {
					t.Errorf("%s: %v", where, err)
					continue
				}
				if !td.anchors[fragment] {
					t.Errorf("%s: %s has no section #%s", where, rel, fragment)
				}
			}
		}
	}
	if links < 50 {
		t.Errorf("found only %d relative links in %v: the link pattern no longer matches", links, files)
	}
}

// TestReadmeStartsWithTheTwoCommands: the README's first code block is the
// two commands a newcomer runs, exactly (.ci/run runs the second one).
func TestReadmeStartsWithTheTwoCommands(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(testsupport.ModuleRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	d := parseMarkdown(string(b))
	if len(d.fences) == 0 {
		t.Fatal("README.md has no code block")
	}
	var commands []string
	for _, line := range d.fences[0] {
		if cmd, _, _ := strings.Cut(line, "#"); strings.TrimSpace(cmd) != "" {
			commands = append(commands, strings.Join(strings.Fields(cmd), " "))
		}
	}
	if want := []string{"go run .", "go test ./..."}; !slices.Equal(commands, want) {
		t.Errorf("README.md's first code block runs %q, want %q", commands, want)
	}
}

// TestEverySettingDocumented: every setting of the registry (Options) is
// named in docs/operators.md's Configuration, so that a new setting cannot
// ship undocumented.
func TestEverySettingDocumented(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(testsupport.ModuleRoot(t), "docs", "operators.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	start := strings.Index(text, "\n## Configuration\n")
	if start < 0 {
		t.Fatal("docs/operators.md has no Configuration section")
	}
	section := text[start+1:]
	if end := strings.Index(section[1:], "\n## "); end >= 0 {
		section = section[:end+1]
	}
	for _, o := range Options() {
		if !strings.Contains(section, "`"+o.Name+"`") {
			t.Errorf("docs/operators.md, Configuration, does not name %s (%s)", o.Name, o.Description)
		}
	}
}
