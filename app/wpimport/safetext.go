package wpimport

import (
	"encoding/base64"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// sourceTextLen bounds a source's error text shown in a message.
const sourceTextLen = 200

// redactor makes a source's text safe to print: the credentials removed
// wherever they appear, control and format characters (ANSI escapes, CR,
// LF, bidirectional overrides) shown as escapes, and the length bounded.
type redactor struct {
	// secrets are the forms of the credentials to remove, longest first.
	secrets []string
}

// redacted replaces a credential.
const redacted = "[redacted]"

// newRedactor returns the redactor of a login and application password:
// it removes the Basic header's base64 of "user:password" (padded or
// not), "user:password", the password, the password without its spaces
// (WordPress accepts both), and their URL encodings. A password shorter
// than 4 characters is removed only inside the longer forms.
func newRedactor(user, password string) *redactor {
	if password == "" {
		return &redactor{}
	}
	pair := user + ":" + password
	b64 := base64.StdEncoding.EncodeToString([]byte(pair))
	forms := []string{b64, strings.TrimRight(b64, "="), base64.URLEncoding.EncodeToString([]byte(pair)), pair,
		url.QueryEscape(pair), url.PathEscape(pair)}
	if len(password) >= 4 {
		forms = append(forms, password, strings.ReplaceAll(password, " ", ""), url.QueryEscape(password), url.PathEscape(password))
	}
	x := &redactor{}
	for _, f := range forms {
		if len(f) >= 4 && !containsString(x.secrets, f) {
			x.secrets = append(x.secrets, f)
		}
	}
	// Longest first, so that a form inside another is not removed first.
	for i := range x.secrets {
		for j := i + 1; j < len(x.secrets); j++ {
			if len(x.secrets[j]) > len(x.secrets[i]) {
				x.secrets[i], x.secrets[j] = x.secrets[j], x.secrets[i]
			}
		}
	}
	return x
}

// add makes the redactor remove secret too (and its URL encodings): a
// protected event's password, which goes to the source in a query. A
// secret shorter than 4 characters is not added (it would remove common
// text); the URL form that carries it is shown redacted by get.
func (x *redactor) add(secret string) {
	if x == nil {
		return
	}
	for _, f := range []string{secret, url.QueryEscape(secret), url.PathEscape(secret)} {
		if len(f) >= 4 && !containsString(x.secrets, f) {
			x.secrets = append(x.secrets, f)
		}
	}
	slices.SortStableFunc(x.secrets, func(a, b string) int { return len(b) - len(a) })
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// scrub removes the credentials from s.
func (x *redactor) scrub(s string) string {
	if x == nil {
		return s
	}
	for _, sec := range x.secrets {
		s = strings.ReplaceAll(s, sec, redacted)
	}
	return s
}

// text returns a source's text fit for a message: credentials removed,
// every control or format character (and U+2028, U+2029) shown as a Go
// escape, invalid UTF-8 shown as U+FFFD, and cut to sourceTextLen
// characters.
func (x *redactor) text(s string) string {
	s = x.scrub(s)
	var b strings.Builder
	n := 0
	for _, r := range s {
		if n == sourceTextLen {
			fmt.Fprintf(&b, "… (%d bytes in all)", len(s))
			break
		}
		n++
		switch {
		case r == utf8.RuneError:
			b.WriteRune(unicode.ReplacementChar)
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029':
			if r < 0x80 {
				fmt.Fprintf(&b, `\x%02x`, r)
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// RedactingWriter returns a writer that writes to w with the credentials
// of user and password (every form the import's own messages remove)
// replaced: the CLI writes every line of an import through it, so that
// no credential reaches a terminal or log even from text this package
// did not produce. Each Write is redacted on its own: callers write
// whole lines.
func RedactingWriter(w io.Writer, user, password string) io.Writer {
	return &redactingWriter{w: w, x: newRedactor(user, password)}
}

type redactingWriter struct {
	w io.Writer
	x *redactor
}

func (r *redactingWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(r.w, r.x.scrub(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
