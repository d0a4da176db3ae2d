package wpimport

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"golang.org/x/time/rate"

	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/repository"
)

// TestSourceCost checks how a cost the source formatted is carried: the
// amounts as written with the symbol the source showed them with (the
// event's own, or the site's it added), so that it reads the same here.
func TestSourceCost(t *testing.T) {
	for _, tc := range []struct {
		formatted, symbol, position string
		want                        []string
		cur                         sourceCurrency
	}{
		{"$10", "", "", []string{"10"}, sourceCurrency{"$", "prefix"}},
		{"$5 – $15", "", "", []string{"5 - 15"}, sourceCurrency{"$", "prefix"}},
		{"€5,50 – €7", "", "", []string{"5,50 - 7"}, sourceCurrency{"€", "prefix"}},
		{"$12.50", "", "", []string{"12.50"}, sourceCurrency{"$", "prefix"}},
		{"$12,50", "", "", []string{"12,50"}, sourceCurrency{"$", "prefix"}},
		{"12,50€", "", "", []string{"12,50"}, sourceCurrency{"€", "suffix"}},
		{"€12", "€", "prefix", []string{"€12"}, sourceCurrency{"€", "prefix"}},
		{"20$", "$", "postfix", []string{"20$"}, sourceCurrency{"$", "suffix"}},
		{"$45", "$", "prefix", []string{"$45"}, sourceCurrency{"$", "prefix"}},
		{"Free", "", "", []string{"Free"}, sourceCurrency{}},
		{"Free – $15", "", "", []string{"Free – $15"}, sourceCurrency{}},
		{"$10 per person", "", "", []string{"$10 per person"}, sourceCurrency{}},
		{"10", "", "", []string{"10"}, sourceCurrency{}},
		{"", "", "", nil, sourceCurrency{}}, // "0" and "" alike
		{"  ", "", "", nil, sourceCurrency{}},
	} {
		got, cur := sourceCost(tc.formatted, tc.symbol, tc.position)
		if !slices.Equal(got, tc.want) || cur != tc.cur {
			t.Errorf("sourceCost(%q, %q, %q) = %q %+v, want %q %+v", tc.formatted, tc.symbol, tc.position, got, cur, tc.want, tc.cur)
		}
	}
}

func TestDecodeSlugAndText(t *testing.T) {
	for _, tc := range []struct{ in, status, want string }{
		{"fx-%e6%9d%b1%e4%ba%ac-hall", "publish", "fx-東京-hall"},
		{"fx-online-%f0%9f%8e%a7", "publish", "fx-online-🎧"},
		{"fx-cancelled-concert-trashed__trashed", "trash", "fx-cancelled-concert-trashed"},
		{"keeps__trashed", "publish", "keeps__trashed"},
		{"bad-%zz", "publish", "bad-%zz"},
		{"%ff%fe", "publish", "%ff%fe"}, // not UTF-8: kept as sent
	} {
		if got := decodeSlug(tc.in, tc.status); got != tc.want {
			t.Errorf("decodeSlug(%q, %s) = %q, want %q", tc.in, tc.status, got, tc.want)
		}
	}
	for in, want := range map[string]string{
		"FX &#8220;Quoted&#8221; &#038; <Angled> Title&#8217;s Test": "FX “Quoted” & <Angled> Title’s Test",
		"FX Food &amp; Drink": "FX Food & Drink",
		"2027":                "2027",
	} {
		if got := decodeText(in); got != want {
			t.Errorf("decodeText(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseSource(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{"https://example.org/wp-json/tribe/events/v1/", "https://example.org/wp-json/tribe/events/v1", ""},
		{"http://127.0.0.1:8088/wp-json/tribe/events/v1", "http://127.0.0.1:8088/wp-json/tribe/events/v1", ""},
		{"https://admin:secret@example.org/wp-json/tribe/events/v1", "", "must not hold credentials"},
		{"https://admin:se cret@example.org/x", "", "must not hold credentials"},
		{"ftp://example.org/", "", "http(s) URL"},
		{"example.org/wp-json", "", "http(s) URL"},
		{"https://example.org/wp-json/tribe/events/v1?x=1", "", "without a query"},
	} {
		u, err := parseSource(tc.in)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("parseSource(%q) error %v, want %q", tc.in, err, tc.err)
		case tc.err != "" && strings.Contains(err.Error(), "secret"):
			t.Errorf("parseSource(%q) echoes the password: %v", tc.in, err)
		case tc.err == "" && (err != nil || u.String() != tc.want):
			t.Errorf("parseSource(%q) = %v, %v; want %s", tc.in, u, err, tc.want)
		}
	}
	u, _ := parseSource("https://example.org/wp-json/tribe/events/v1")
	if wp := wpRootOf(u); wp == nil || wp.String() != "https://example.org/wp-json/wp/v2" {
		t.Errorf("wpRootOf = %v", wp)
	}
	u, _ = parseSource("https://example.org/api")
	if wp := wpRootOf(u); wp != nil {
		t.Errorf("wpRootOf(another namespace) = %v, want nil", wp)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"3", 3 * time.Second, true},
		{"0", 0, true},
		{"-1", 0, false},
		{"", 0, false},
		{"soon", 0, false},
		{"86400", maxRetryAfter, true},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0, true},
	} {
		got, ok := retryAfter(tc.in, now)
		if got != tc.want || ok != tc.ok {
			t.Errorf("retryAfter(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// TestClientRetries: 429 (with Retry-After) and 5xx are retried, a 4xx
// is an answer, a redirect to another host is refused and the
// credentials never follow it.
func TestClientRetries(t *testing.T) {
	var calls atomic.Int64
	var leaked atomic.Bool
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			leaked.Store(true)
		}
	}))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		switch r.URL.Path {
		case "/flaky":
			switch n {
			case 1:
				w.Header().Set("Retry-After", "0")
				w.WriteHeader(http.StatusTooManyRequests)
			case 2:
				w.WriteHeader(http.StatusBadGateway)
			default:
				fmt.Fprint(w, `{"ok":true}`)
			}
		case "/down":
			w.WriteHeader(http.StatusServiceUnavailable)
		case "/away":
			http.Redirect(w, r, other.URL+"/x", http.StatusFound)
		default:
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"code":"rest_invalid_param","message":"Invalid parameter(s): id"}`)
		}
	}))
	defer srv.Close()
	root, _ := url.Parse(srv.URL)
	c := &client{root: root, user: "u", password: "p", http: &http.Client{CheckRedirect: sameOrigin},
		limiter: rate.NewLimiter(rate.Inf, 1), retries: 3, base: time.Millisecond, logger: slog.New(slog.DiscardHandler),
		caps: Caps{}.withDefaults(), redact: newRedactor("u", "p")}
	ctx := context.Background()

	res, err := c.get(ctx, root, "/flaky", nil)
	if err != nil || res.status != 200 || calls.Load() != 3 {
		t.Errorf("flaky: %v, %v after %d calls; want 200 after 3", res, err, calls.Load())
	}
	calls.Store(0)
	if _, err := c.get(ctx, root, "/down", nil); err == nil || !strings.Contains(err.Error(), "503") || calls.Load() != 4 {
		t.Errorf("down: %v after %d calls; want the 503 after 4", err, calls.Load())
	}
	res, err = c.get(ctx, root, "/missing", nil)
	if err != nil || res.status != 400 || res.code() != "rest_invalid_param" || !gone(res) {
		t.Errorf("missing: %+v, %v", res, err)
	}
	if _, err := c.get(ctx, root, "/away", nil); err == nil || !strings.Contains(err.Error(), "pass that address as --from") {
		t.Errorf("redirect to another host: %v", err)
	}
	if leaked.Load() {
		t.Error("the credentials followed a redirect to another host")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := c.get(cancelled, root, "/down", nil); err == nil {
		t.Error("a cancelled context did not stop the client")
	}
}

// TestRedactorText: every form of the credentials is removed, control and
// format characters are shown escaped, and the text is bounded.
func TestRedactorText(t *testing.T) {
	const user, password = "fx-admin", "abcd EFGH 1234 ijkl MNOP 5678"
	x := newRedactor(user, password)
	pair := user + ":" + password
	b64 := base64.StdEncoding.EncodeToString([]byte(pair))
	for _, tc := range []struct{ in, want string }{
		{"Basic " + b64, "Basic [redacted]"},
		{"pw=" + password + ";", "pw=[redacted];"},
		{"pw=" + strings.ReplaceAll(password, " ", ""), "pw=[redacted]"},
		{pair, "[redacted]"},
		{url.QueryEscape(pair), "[redacted]"},
		{"a\x1b[31mred\r\nb\u202ec\u2028d\x7f", `a\x1b[31mred\x0d\x0ab\u202ec\u2028d\x7f`},
		{"bad \xff byte", "bad \ufffd byte"},
		{"plain text stays", "plain text stays"},
	} {
		if got := x.text(tc.in); got != tc.want {
			t.Errorf("text(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	long := x.text(strings.Repeat("é", 5000))
	if n := utf8.RuneCountInString(long); n > sourceTextLen+40 || !strings.Contains(long, "10000 bytes in all") {
		t.Errorf("a long text is %d characters: %.80q", n, long)
	}
	if got := newRedactor("u", "abc").text("u:abc and abc"); got != "[redacted] and abc" {
		t.Errorf("a short password: %q; want only the pair removed", got)
	}
	var buf strings.Builder
	w := RedactingWriter(&buf, user, password)
	fmt.Fprintf(w, "header %s\n", b64)
	if buf.String() != "header [redacted]\n" {
		t.Errorf("RedactingWriter wrote %q", buf.String())
	}
}

// TestWordPressSlug: the slugs sanitize_title makes pass; anything else
// (path parts, white space, controls, format characters, upper case) not.
func TestWordPressSlug(t *testing.T) {
	for s, want := range map[string]bool{
		"fx-jazz": true, "fx-東京-hall": true, "fx-online-🎧": true, "fx-東京ジャズ・フェスティバル-🎺": true, "__trashed-7": true, "a_b": true,
		"": false, "../../admin": false, "a/b": false, "..": false, "a\x00b": false, "A": false, "a b": false, "a\u00a0b": false,
		"a\u202eb": false, "a\u200bb": false, "a%2e": false, "a\\b": false, "a\nb": false, "a?b": false, "a#b": false,
	} {
		if got := wordPressSlug(s); got != want {
			t.Errorf("wordPressSlug(%q) = %v, want %v", s, got, want)
		}
	}
}

// TestClientUserAgent: every request to the site names the importer and
// its release, so that the site's logs tell which import called.
func TestClientUserAgent(t *testing.T) {
	agents := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		agents <- r.Header.Get("User-Agent")
		fmt.Fprint(w, `{"ok":true}`)
	}))
	defer srv.Close()
	root, _ := url.Parse(srv.URL)
	c := &client{root: root, http: srv.Client(), limiter: rate.NewLimiter(rate.Inf, 1), retries: 0,
		base: time.Millisecond, logger: slog.New(slog.DiscardHandler)}
	if _, err := c.get(context.Background(), root, "/events", nil); err != nil {
		t.Fatal(err)
	}
	if got, want := <-agents, "eventcal-import/"+config.Version; got != want {
		t.Errorf("User-Agent = %q, want %q", got, want)
	}
}

// TestImageSizes checks that an image's smaller copies come over in the
// source's order, and that a copy with an odd name, size, type or URL is
// left out rather than failing the image.
func TestImageSizes(t *testing.T) {
	for _, tc := range []struct {
		name, raw string
		want      []repository.ImageSize
	}{
		{"none", ``, nil},
		{"false", `false`, nil},
		{"two in order", `{"medium":{"width":300,"height":200,"mime-type":"image/png","url":"https://e.test/a-300x200.png"},"thumbnail":{"width":"150","height":150,"url":"https://e.test/a-150x150.png"}}`,
			[]repository.ImageSize{{Name: "medium", Width: 300, Height: 200, MimeType: "image/png", URL: "https://e.test/a-300x200.png"},
				{Name: "thumbnail", Width: 150, Height: 150, URL: "https://e.test/a-150x150.png"}}},
		{"odd ones left out", `{"bad name":{"width":1,"height":1,"url":"https://e.test/x.png"},"js":{"width":1,"height":1,"url":"javascript:alert(1)"},` +
			`"zero":{"width":0,"height":1,"url":"https://e.test/z.png"},"huge":{"width":99999999,"height":1,"url":"https://e.test/h.png"},` +
			`"mime":{"width":1,"height":1,"mime-type":"text/html","url":"https://e.test/m.png"},"ok":{"width":2,"height":3,"url":"https://e.test/ok.png"}}`,
			[]repository.ImageSize{{Name: "ok", Width: 2, Height: 3, URL: "https://e.test/ok.png"}}},
	} {
		if got := imageSizes(json.RawMessage(tc.raw)); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
