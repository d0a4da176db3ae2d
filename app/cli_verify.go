package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/calendar/eventcal/app/verify"
)

// tokenVariable names the environment variable verify reads its readers'
// tokens from: never a flag, which ps and shell histories would show.
const tokenVariable = "EVENTCAL_TOKEN"

// verifyCmd runs "verify --against URL [--from URL] [--lang en,fr]": it
// compares two running services record by record through their API
// (package app/verify), as an anonymous reader and as the reader of every
// token in EVENTCAL_TOKEN, and lists what differs. Exit status: 0 equal,
// 1 different, 2 a bad command line or a service that cannot be compared.
func (c *opsCommands) verifyCmd(args []string) int {
	fs := c.flagSet("verify", "verify --against URL [--from URL] [--lang en,fr]\n\n"+
		"Compares two running services record by record through their API: every page of every list and every\n"+
		"item by ID and slug, events also as iCalendar and series' occurrences, in every language, as an anonymous\n"+
		"reader and as the reader of every token in "+tokenVariable+" (comma-separated). It prints each difference\n"+
		"with its item, route, reader, language and first differing JSON path, and exits 0 when the services\n"+
		"answer alike, 1 when they differ, 2 when they cannot be compared.")
	against := fs.String("against", "", "base URL of the service to compare with (required), e.g. http://new-host:8080")
	from := fs.String("from", "", "base URL of the reference service (default: this configuration's LISTEN_ADDR on 127.0.0.1)")
	langs := fs.String("lang", "", "languages to compare, comma-separated (default: every language both services serve)")
	maxDiffs := fs.Int("max-differences", verify.DefaultMaxDifferences, "differences to list at most (the others are counted)")
	timeout := fs.Duration("timeout", verify.DefaultTimeout, "time limit of each request")
	concurrency := fs.Int("concurrency", verify.DefaultConcurrency, "items compared at once (each asks both services)")
	if code := c.parseFlags(fs, args); code >= 0 {
		return code
	}
	if *against == "" {
		return c.misuse("verify", errors.New("--against is required: the base URL of the service to compare with"))
	}
	if *maxDiffs < 1 || *concurrency < 1 || *timeout <= 0 {
		return c.misuse("verify", errors.New("--max-differences, --concurrency and --timeout must be positive"))
	}
	languages, err := parseLanguages(*langs)
	if err != nil {
		return c.misuse("verify", err)
	}
	cfg := c.loadConfig()
	if cfg == nil {
		return exitUsage
	}
	if *from == "" {
		health, err := healthURL(cfg)
		if err != nil {
			return c.misuse("verify", fmt.Errorf("%w: pass --from", err))
		}
		*from = strings.TrimSuffix(health, "/healthz")
	}
	for _, u := range []struct{ flag, value string }{{"--from", *from}, {"--against", *against}} {
		if err := checkBaseURL(u.value); err != nil {
			return c.misuse("verify", fmt.Errorf("%s: %w", u.flag, err))
		}
	}
	if strings.TrimSuffix(*from, "/") == strings.TrimSuffix(*against, "/") {
		return c.misuse("verify", fmt.Errorf("--from and --against are both %s: compare two services", *from))
	}
	tokens := []string{""}
	for _, tok := range strings.Split(c.getenv(tokenVariable), ",") {
		if tok = strings.TrimSpace(tok); tok != "" {
			tokens = append(tokens, tok)
		}
	}
	if len(tokens) == 1 {
		fmt.Fprintf(c.stderr, "Reading as an anonymous reader only: set %s to tokens (comma-separated) to compare what signed-in readers see too.\n", tokenVariable)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	fmt.Fprintf(c.stderr, "Comparing %s (from) with %s (against), API root %s, %d readers.\n", *from, *against, cfg.APIRoot(), len(tokens))
	rep, err := verify.Compare(ctx, verify.Service{URL: *from}, verify.Service{URL: *against}, verify.Options{
		Tokens: tokens, Languages: languages, Progress: c.stderr, MaxDifferences: *maxDiffs,
		Root: cfg.APIRoot(), Timeout: *timeout, Concurrency: *concurrency,
	})
	if err != nil {
		return c.misuse("verify", err)
	}
	printDifferences(c.stdout, rep.Differences)
	if len(rep.Notes) > 0 {
		fmt.Fprintf(c.stderr, "%d notes (above): parts of the services were not compared.\n", len(rep.Notes))
	}
	took := time.Since(start).Round(time.Millisecond)
	if rep.Equal() {
		fmt.Fprintf(c.stderr, "No difference: %d items compared with %d requests in %s.\n", rep.Items, rep.Requests, took)
		return exitOK
	}
	n := len(rep.Differences) + rep.More
	shown := ""
	if rep.More > 0 {
		shown = fmt.Sprintf(" (the first %d listed)", len(rep.Differences))
	}
	fmt.Fprintf(c.stderr, "%d differences%s: %d items compared with %d requests in %s.\n", n, shown, rep.Items, rep.Requests, took)
	return exitFailure
}

// printDifferences writes each difference as a block: the item, reader
// and language, then the route, then what differs.
func printDifferences(w io.Writer, diffs []verify.Difference) {
	for _, d := range diffs {
		lang := d.Language
		if lang == "" {
			lang = "-"
		}
		fmt.Fprintf(w, "%s (%s, %s)\n  %s\n  %s\n", d.Item, d.Reader, lang, d.Route, d.What)
	}
}

// parseLanguages reads --lang: comma-separated language codes (nil when
// empty: the services' own).
func parseLanguages(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []string
	for _, l := range strings.Split(s, ",") {
		l = strings.ToLower(strings.TrimSpace(l))
		if l == "" || strings.IndexFunc(l, func(r rune) bool { return (r < 'a' || r > 'z') && r != '-' && r != '_' }) >= 0 {
			return nil, fmt.Errorf("--lang %q: language codes separated by commas, e.g. en,fr", s)
		}
		out = append(out, l)
	}
	return out, nil
}

// checkBaseURL checks a service's base URL: http(s)://host[:port][/path].
func checkBaseURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("%q is not a service's base URL (http(s)://host:port)", s)
	}
	return nil
}
