package wpimport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/net/html"
)

// tecNamespace is The Events Calendar's REST namespace.
const tecNamespace = "tribe/events/v1"

// fromExample is the form --from takes, for messages.
const fromExample = "https://example.org/wp-json/tribe/events/v1"

// apiLink finds WordPress's REST root in a Link header
// (<https://example.org/wp-json/>; rel="https://api.w.org/").
var apiLink = regexp.MustCompile(`<([^>]+)>\s*;\s*rel="?https://api\.w\.org/"?`)

// discoverRoot finds the TEC namespace root when --from names the site
// (https://example.org) or its REST root (https://example.org/wp-json)
// rather than the namespace: the REST root is the one the site's home
// page names in its Link header (rel="https://api.w.org/"), else
// /wp-json below the given address, and it must list the tribe/events/v1
// namespace. When nothing is found the error says which URL to give.
func (c *client) discoverRoot(ctx context.Context, from *url.URL) (*url.URL, error) {
	var candidates []*url.URL
	if strings.HasSuffix(from.Path, "/wp-json") {
		candidates = append(candidates, from)
	} else {
		res, err := c.get(ctx, from, "", nil)
		if err != nil {
			return nil, err
		}
		links := []string{}
		if m := apiLink.FindStringSubmatch(res.header.Get("Link")); m != nil {
			links = append(links, m[1])
		}
		if href, ok := HTMLAPILink(res.body); ok {
			links = append(links, href)
		}
		for _, l := range links {
			if u, err := from.Parse(l); err == nil && u.Host == from.Host && u.Scheme == from.Scheme && u.RawQuery == "" {
				u.Path = strings.TrimRight(u.Path, "/")
				if !slices.ContainsFunc(candidates, func(c *url.URL) bool { return *c == *u }) {
					candidates = append(candidates, u)
				}
			}
		}
		u := *from
		u.Path = strings.TrimRight(from.Path, "/") + "/wp-json"
		candidates = append(candidates, &u)
	}
	for _, rest := range candidates {
		res, err := c.get(ctx, rest, "/", nil)
		if err != nil {
			return nil, err
		}
		if res.status != http.StatusOK {
			continue
		}
		var index struct {
			Namespaces []string `json:"namespaces"`
		}
		if json.Unmarshal(res.body, &index) != nil || index.Namespaces == nil {
			continue
		}
		if !slices.Contains(index.Namespaces, tecNamespace) {
			return nil, notTEC("the WordPress site at %s has no %s REST namespace: is The Events Calendar active?", c.redact.text(rest.Redacted()), tecNamespace)
		}
		root := *rest
		root.Path = rest.Path + "/" + tecNamespace
		c.logger.Info("found the calendar's REST root", "from", c.redact.text(from.Redacted()), "root", root.Redacted())
		return &root, nil
	}
	return nil, notTEC("found no WordPress REST API at %s: give %s as the address of The Events Calendar's REST namespace, such as %s", c.redact.text(from.Redacted()), c.givenURL(), fromExample)
}

// checkCredentials asks WordPress who the credentials are
// (/wp/v2/users/me) before anything is read, so that credentials the
// source refuses, or ignores, stop the run at once instead of letting it
// read what an anonymous visitor sees and report "Nothing changed". A
// source without WordPress's route (404) is not checked.
func (c *client) checkCredentials(ctx context.Context) error {
	if !c.authenticated() || c.wpRoot == nil {
		return nil
	}
	q := url.Values{}
	q.Set("context", "edit")
	q.Set("_fields", "id,slug,roles")
	res, err := c.get(ctx, c.wpRoot, "/users/me", q)
	if err != nil {
		return err
	}
	switch {
	case res.status == http.StatusOK:
		return nil
	case res.code() == "rest_not_logged_in":
		return fmt.Errorf("the source ignored the login and application password (%s): WordPress accepts application passwords only over https (or on a site whose WP_ENVIRONMENT_TYPE is local), and the web server must pass the Authorization header to PHP", c.describe(res))
	case res.status == http.StatusUnauthorized || res.status == http.StatusForbidden:
		return fmt.Errorf("the source refused the login and application password (%s)%s", c.describe(res), authHint(&response{status: http.StatusUnauthorized}))
	}
	return nil
}

// ErrNotTEC is the cause of an error that says the source is not a site
// running The Events Calendar (errors.Is): no WordPress REST API found,
// no tribe/events/v1 namespace, or (ReadPublic) an events list that is
// not one.
var ErrNotTEC = errors.New("not a site running The Events Calendar")

// notTECError is an error whose cause is ErrNotTEC; its text is only the
// message.
type notTECError struct{ msg string }

func (e *notTECError) Error() string        { return e.msg }
func (e *notTECError) Is(target error) bool { return target == ErrNotTEC }

// notTEC returns a *notTECError with the message.
func notTEC(format string, a ...any) error {
	return &notTECError{msg: fmt.Sprintf(format, a...)}
}

// maxHeadTokens bounds the tokens HTMLAPILink reads: WordPress writes
// its REST link in the head, within the first few hundred tokens.
const maxHeadTokens = 5000

// HTMLAPILink finds the REST root a WordPress page announces in its head
// (<link rel="https://api.w.org/" href="https://example.org/wp-json/">).
// It reads the page up to <body> (or maxHeadTokens tokens) and returns
// the href as written.
func HTMLAPILink(page []byte) (string, bool) {
	z := html.NewTokenizer(bytes.NewReader(page))
	for range maxHeadTokens {
		switch z.Next() {
		case html.ErrorToken:
			return "", false
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			switch string(name) {
			case "body":
				return "", false
			case "link":
				var rel, href string
				for hasAttr {
					var k, v []byte
					k, v, hasAttr = z.TagAttr()
					switch string(k) {
					case "rel":
						rel = strings.TrimSpace(string(v))
					case "href":
						href = strings.TrimSpace(string(v))
					}
				}
				if strings.EqualFold(rel, "https://api.w.org/") && href != "" {
					return href, true
				}
			}
		}
	}
	return "", false
}
