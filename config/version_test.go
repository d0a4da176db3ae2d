package config

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/calendar/eventcal/config/testsupport"
)

// releaseHeading is a Keep a Changelog release heading: "## [0.30.0] - 2026-11-26".
var releaseHeading = regexp.MustCompile(`^## \[([^\]]+)\](?: - (\d{4}-\d{2}-\d{2}))?\s*$`)

// changelogReleases returns the versions of CHANGELOG.md's release
// headings, newest first, and what breaks the file's frame: the title,
// then an Unreleased section above the releases, each release dated.
func changelogReleases(text string) (versions, problems []string) {
	lines := strings.Split(text, "\n")
	if lines[0] != "# Changelog" {
		problems = append(problems, fmt.Sprintf("it starts with %q, not \"# Changelog\"", lines[0]))
	}
	unreleased := false
	for _, line := range lines {
		m := releaseHeading.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if m[1] == "Unreleased" {
			if len(versions) > 0 || unreleased {
				problems = append(problems, "the Unreleased section must come first, once")
			}
			unreleased = true
			continue
		}
		if m[2] == "" {
			problems = append(problems, fmt.Sprintf("the release %s has no date (## [%s] - YYYY-MM-DD)", m[1], m[1]))
		}
		versions = append(versions, m[1])
	}
	if !unreleased {
		problems = append(problems, "it has no ## [Unreleased] section")
	}
	return versions, problems
}

// TestChangelogNamesVersion: the newest release of CHANGELOG.md is the
// version the binary reports (Version), so that a release cannot bump one
// and forget the other.
func TestChangelogNamesVersion(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(testsupport.ModuleRoot(t), "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	versions, problems := changelogReleases(string(b))
	for _, p := range problems {
		t.Errorf("CHANGELOG.md: %s", p)
	}
	if len(versions) == 0 {
		t.Fatal("CHANGELOG.md has no release")
	}
	if versions[0] != Version {
		t.Errorf("CHANGELOG.md's newest release is %s; config.Version is %s", versions[0], Version)
	}
}

// TestChangelogFrame: the checks of changelogReleases catch a file that
// breaks the format.
func TestChangelogFrame(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, text string
		want       []string
		fails      bool
	}{
		{"good", "# Changelog\n\n## [Unreleased]\n\n## [0.31.0] - 2026-12-01\n\n## [0.30.0] - 2026-11-26\n", []string{"0.31.0", "0.30.0"}, false},
		{"no unreleased", "# Changelog\n\n## [0.30.0] - 2026-11-26\n", []string{"0.30.0"}, true},
		{"unreleased below a release", "# Changelog\n\n## [0.30.0] - 2026-11-26\n\n## [Unreleased]\n", []string{"0.30.0"}, true},
		{"undated release", "# Changelog\n\n## [Unreleased]\n\n## [0.30.0]\n", []string{"0.30.0"}, true},
		{"no title", "# Changes\n\n## [Unreleased]\n\n## [0.30.0] - 2026-11-26\n", []string{"0.30.0"}, true},
	}
	for _, tc := range tests {
		got, problems := changelogReleases(tc.text)
		if !slices.Equal(got, tc.want) || (len(problems) > 0) != tc.fails {
			t.Errorf("%s: releases %v, problems %q; want %v, problems: %v", tc.name, got, problems, tc.want, tc.fails)
		}
	}
}

// TestSecuritySupportsVersion: SECURITY.md's table of supported versions
// names the line of the current release (0.30.x for 0.30.0).
func TestSecuritySupportsVersion(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(testsupport.ModuleRoot(t), "SECURITY.md"))
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.SplitN(Version, ".", 3)
	if len(parts) < 2 {
		t.Fatalf("Version %q is not MAJOR.MINOR.PATCH", Version)
	}
	line := parts[0] + "." + parts[1] + ".x"
	if !strings.Contains(string(b), "| "+line+" | yes |") {
		t.Errorf("SECURITY.md's supported versions do not name %s as supported (a row \"| %s | yes |\")", line, line)
	}
}
