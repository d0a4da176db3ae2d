package config

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/calendar/eventcal/config/testsupport"
)

// The repository stands alone: a fresh clone with nothing beside it passes
// go test ./..., and no file sends its reader to a file outside it (the
// specification documents and tools a development machine once kept in a
// directory beside the checkout). outsideReference matches such a pointer:
// a path into a sibling shared/ directory, one of the old specification
// files named without a directory of ours, or a numbered section of them
// (the word reference or interface followed by a section number). Our decisions page is docs/decisions.md: outside
// docs/, barePage matches it named without its directory.
var (
	outsideReference = regexp.MustCompile(`\.\./` + `shared\b|\bshared/(spec|tools|fixtures)\b|(^|[^-\w/.])(interface|reference|style)\.md\b|\b(reference|interface)( section)? \(?\d+(\.\d+)*\b`)
	barePage         = regexp.MustCompile(`(^|[^-\w/.])decisions\.md\b`)
)

// mayPointOutside reports whether s holds one of the words every match of
// outsideReference or barePage contains ("shared", ".md", "reference",
// "interface"): only such files and lines are matched against the
// expressions, which would otherwise run over every line of the module.
func mayPointOutside(s string) bool {
	return strings.Contains(s, "shared") || strings.Contains(s, ".md") || strings.Contains(s, "reference") || strings.Contains(s, "interface")
}

// allowedOutsideReferences are lines that may still match, by file: .ci/run
// finds the optional filter parser of TestFiltersParseAsMeant (search/meili)
// where the CI machine keeps it, beside the checkout; the tests never need
// it.
var allowedOutsideReferences = map[string][]string{
	".ci/run": {
		`ci_filter_parser="$(dirname "$PWD")/` + `shared/` + `tools/meili-filter-parser"`,
	},
}

// outsideReferences walks root and returns "path:line: text" for every
// line of a text file that matches outsideReference, skipping .git,
// binary files (a NUL byte in the first 8000 bytes) and the allowed lines.
// It reads the file system rather than git's index, so that it works
// where git is not installed; run it on a clean checkout.
func outsideReferences(root string) ([]string, error) {
	var found []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Name() == ".git" {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil // a worktree's .git file
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.IndexByte(b[:min(len(b), 8000)], 0) >= 0 {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		text := string(b)
		if !mayPointOutside(text) {
			return nil
		}
		for i, line := range strings.Split(text, "\n") {
			if !mayPointOutside(line) {
				continue
			}
			bad := outsideReference.MatchString(line) || !strings.HasPrefix(rel, "docs/") && barePage.MatchString(line)
			if bad && !slices.Contains(allowedOutsideReferences[rel], strings.TrimRight(line, "\r")) {
				found = append(found, fmt.Sprintf("%s:%d: %s", rel, i+1, strings.TrimSpace(line)))
			}
		}
		return nil
	})
	return found, err
}

// TestNothingPointsOutsideTheRepository: no file of the module names a
// file outside it.
func TestNothingPointsOutsideTheRepository(t *testing.T) {
	t.Parallel()
	root := testsupport.ModuleRoot(t)
	found, err := outsideReferences(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Errorf("points outside the repository (state the fact here, or link a page of docs/): %s", f)
	}
}

// TestOutsideReferences pins what counts as a pointer outside the
// repository.
func TestOutsideReferences(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, path, text string
		found            bool
	}{
		{"sibling directory", "a.go", "// see ../" + "shared/" + "fixtures/tec-6.17.1\n", true},
		{"sibling tool in a script", ".ci/run", `p="$root/../` + `shared"` + "\n", true},
		{"shared spec path", "docs/x.md", "as /work/shared/" + "spec says\n", true},
		{"old spec file", "b.go", "// (reference" + ".md 2.4)\n", true},
		{"old interface file", "c.md", "The interface is `interface" + ".md`.\n", true},
		{"old style file", "d.md", "see style" + ".md\n", true},
		{"our decisions page", "e.go", "// (docs/decisions.md, \"Reads\")\n", false},
		{"our decisions page from app/", "app/README.md", "[decisions](../docs/decisions.md)\n", false},
		{"our decisions page within docs/", "docs/frontend.md", "[decisions](decisions" + ".md)\n", false},
		{"the old decisions file", "j.go", "// (decisions" + ".md, \"Reads\")\n", true},
		{"a section of the old reference", "k.go", "// as reference" + " 7.1 defines it\n", true},
		{"a section of the old interface", "l.go", "// (interface" + " 4.2.1)\n", true},
		{"a numbered reference section", "m.go", "// (reference" + " section 2.6)\n", true},
		{"a reference section in parentheses", "docs/o.md", "The reference" + " (7.3) reuses it\n", true},
		{"a reference implementation", "n.go", "// checked against the reference: 400 queries\n", false},
		{"a docs page of ours named reference", "f.md", "[API](docs/reference.md) and api-reference.md\n", false},
		{"the word shared", "g.go", "// post IDs are shared by events and venues\n", false},
		{"a shared cache", "h.go", "// the shared/ prefix of the cache keys\n", false},
		{"binary file", "i.bin", "\x00../" + "shared\n", false},
		{"inside .git", ".git/config", "url = ../" + "shared\n", false},
		{"the CI machine's filter parser", ".ci/run", `ci_filter_parser="$(dirname "$PWD")/` + `shared/` + `tools/meili-filter-parser"` + "\n", false},
		{"another line of .ci/run", ".ci/run", "see ../" + "shared/" + "spec\n", true},
		{"the allowed line in another file", "x.sh", `ci_filter_parser="$(dirname "$PWD")/` + `shared/` + `tools/meili-filter-parser"` + "\n", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			p := filepath.Join(root, filepath.FromSlash(tc.path))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			found, err := outsideReferences(root)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(found) > 0; got != tc.found {
				t.Errorf("%s %q: found %v, want found %v", tc.path, tc.text, found, tc.found)
			}
		})
	}
}
