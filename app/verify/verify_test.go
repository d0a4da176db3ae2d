package verify_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/calendar/eventcal/repository"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/calendar/eventcal/app/verify"
	"github.com/calendar/eventcal/config/testdeadline"
)

// compare runs verify.Compare between two stacks as anonymous, an editor
// and a contributor, listing every difference. It asks both through
// plainClient; compareWith chooses the client.
func compare(t *testing.T, from, against *stack, opts verify.Options) *verify.Report {
	t.Helper()
	return compareWith(t, plainClient, from, against, opts)
}

// plainClient asks for answers without compression: the services gzip
// every answer for a client that takes it (as Go's transport asks by
// default), about a sixth of this package's CPU, and the body Compare
// reads is the same either way (the transport decompresses).
// TestEqualServices compares through Compare's own clients, compressed.
var plainClient = &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 2 * verify.DefaultConcurrency}}

// compareWith is compare asking both stacks through client (nil:
// Compare's own clients).
func compareWith(t *testing.T, client *http.Client, from, against *stack, opts verify.Options) *verify.Report {
	t.Helper()
	ctx, cancel := context.WithDeadline(context.Background(), testdeadline.Of(t))
	defer cancel()
	if opts.Tokens == nil {
		opts.Tokens = []string{"", editorToken, contribTok}
	}
	if opts.MaxDifferences == 0 {
		opts.MaxDifferences = 10000
	}
	rep, err := verify.Compare(ctx, verify.Service{URL: from.url, Client: client}, verify.Service{URL: against.url, Client: client}, opts)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// dump writes a report's differences, one a line.
func dump(rep *verify.Report) string {
	var b strings.Builder
	for _, d := range rep.Differences {
		b.WriteString(d.String() + "\n")
	}
	return b.String()
}

func TestEqualServices(t *testing.T) {
	t.Parallel()
	a, b, _ := sharedPair(t)
	var progress strings.Builder
	rep := compareWith(t, nil, a, b, verify.Options{Progress: &progress})
	if !rep.Equal() {
		t.Fatalf("%d differences between equal services:\n%s", len(rep.Differences)+rep.More, dump(rep))
	}
	// Every list was read: empty terms, and the draft and the trashed
	// event for signed-in readers, included; the 60 events (the hidden one
	// found by its ID), the venue, the organizer and the 4 terms compared.
	for _, want := range []string{
		"anonymous, en: listed 57 events, 1 venues, 1 organizers, 2 categories, 2 tags; 0 differences",
		editor + ", de: listed 59 events, 1 venues, 1 organizers, 2 categories, 2 tags; 0 differences",
	} {
		if !strings.Contains(progress.String(), want) {
			t.Errorf("the progress lacks %q:\n%s", want, progress.String())
		}
	}
	if rep.Items != 60+1+1+2+2 {
		t.Errorf("%d items compared, want 66", rep.Items)
	}
	t.Logf("items %d, requests %d\n%s", rep.Items, rep.Requests, progress.String())
}

// find returns the differences f accepts.
func find(rep *verify.Report, f func(d verify.Difference) bool) []verify.Difference {
	var out []verify.Difference
	for _, d := range rep.Differences {
		if f(d) {
			out = append(out, d)
		}
	}
	return out
}

// want fails unless the report has a difference of this item, reader and
// language whose route contains route and whose What starts with what.
func want(t *testing.T, rep *verify.Report, item, reader, lang, route, what string) {
	t.Helper()
	if len(find(rep, func(d verify.Difference) bool {
		return d.Item == item && d.Reader == reader && d.Language == lang && strings.Contains(d.Route, route) && strings.HasPrefix(d.What, what)
	})) == 0 {
		t.Errorf("no difference %s / %s / %s / %s / %s...; the report:\n%s", item, reader, lang, route, what, dump(rep))
	}
}

// Reader names of the tokens: their public IDs.
var (
	anonymous = "anonymous"
	editor    = "token " + (&repository.Token{Hash: repository.HashToken(editorToken)}).ID()
)

// TestDifferences: a change made on the second service only is reported
// with the item, the route, the reader, the language and the first
// differing JSON path (or line, or status), and nowhere it does not show.
func TestDifferences(t *testing.T) {
	t.Parallel()
	root := "/calendar/events/v1"
	tests := []struct {
		name   string
		change func(t *testing.T, b *stack, d seeded)
		check  func(t *testing.T, rep *verify.Report, d seeded)
	}{
		{"changed field on the second page", func(t *testing.T, b *stack, d seeded) {
			b.write("PATCH", fmt.Sprintf("/events/%d", d.events[53]), map[string]any{"title": "Concert 53 (moved)"})
		}, func(t *testing.T, rep *verify.Report, d seeded) {
			item := fmt.Sprintf("event %d", d.events[53])
			want(t, rep, item, anonymous, "en", fmt.Sprintf("GET %s/events/%d?multilang_language=en", root, d.events[53]),
				`$.title: "Concert 53" at from, "Concert 53 (moved)" at against`)
			want(t, rep, item, anonymous, "en", root+"/events/by-slug/concert-53?", `$.title: "Concert 53" at from`)
			want(t, rep, item, anonymous, "en", fmt.Sprintf("/events/%d.ics?", d.events[53]), `line `)
			if ics := find(rep, func(x verify.Difference) bool { return strings.Contains(x.Route, ".ics") }); len(ics) > 0 &&
				!strings.Contains(ics[0].What, `"SUMMARY:Concert 53" at from, "SUMMARY:Concert 53 (moved)" at against`) {
				t.Errorf(".ics difference: %s", ics[0].What)
			}
			want(t, rep, "events list", anonymous, "en", "page=2", "$.events[1].title")
			want(t, rep, item, editor, "de", "", "$.title")
			if fr := find(rep, func(x verify.Difference) bool { return x.Language == "fr" }); len(fr) > 0 {
				t.Errorf("differences in French, where the title has its own text:\n%s", dump(&verify.Report{Differences: fr}))
			}
			if p1 := find(rep, func(x verify.Difference) bool { return strings.Contains(x.Route, "page=1&") }); len(p1) > 0 {
				t.Errorf("differences on the first page:\n%s", dump(&verify.Report{Differences: p1}))
			}
		}},
		{"missing record", func(t *testing.T, b *stack, d seeded) {
			b.write("DELETE", fmt.Sprintf("/events/%d?force=true", d.events[10]), nil)
		}, func(t *testing.T, rep *verify.Report, d seeded) {
			item := fmt.Sprintf("event %d", d.events[10])
			for _, lang := range []string{"en", "fr", "de"} {
				want(t, rep, item, anonymous, lang, fmt.Sprintf("/events/%d?", d.events[10]),
					"missing at against: status 200 at from, 404 (rest-event-not-found) at against")
				want(t, rep, item, anonymous, lang, fmt.Sprintf("/events/%d.ics?", d.events[10]), "missing at against: status 200 at from, 404")
				want(t, rep, "events list", anonymous, lang, "page=1&", "$.events[")
			}
		}},
		{"record only at against", func(t *testing.T, b *stack, d seeded) {
			b.write("POST", "/organizers", map[string]any{"organizer": "New club"})
		}, func(t *testing.T, rep *verify.Report, d seeded) {
			id := d.trashed + 1
			want(t, rep, fmt.Sprintf("organizer %d", id), anonymous, "de", fmt.Sprintf("/organizers/%d?", id),
				"missing at from: status 404 (rest-organizer-not-found) at from, 200 at against")
			want(t, rep, fmt.Sprintf("organizer %d", id), editor, "en", "/organizers/by-slug/new-club?",
				"missing at from: status 404 (rest-organizer-not-found) at from, 200 at against")
			want(t, rep, "organizers list", anonymous, "fr", "page=1&",
				fmt.Sprintf(`$.organizers[0].id: %d at from, %d at against`, d.organizer, id))
		}},
		{"one language", func(t *testing.T, b *stack, d seeded) {
			b.write("POST", fmt.Sprintf("/venues/%d?multilang_language=fr", d.venue), map[string]any{"venue": "Mairie"})
		}, func(t *testing.T, rep *verify.Report, d seeded) {
			want(t, rep, fmt.Sprintf("venue %d", d.venue), anonymous, "fr", fmt.Sprintf("/venues/%d?", d.venue),
				`$.venue: "Hôtel de ville" at from, "Mairie" at against`)
			want(t, rep, "venues list", editor, "fr", "", `$.venues[0].venue: "Hôtel de ville" at from, "Mairie" at against`)
			want(t, rep, fmt.Sprintf("event %d", d.events[0]), anonymous, "fr", "", `$.venue.venue: "Hôtel de ville" at from, "Mairie" at against`)
			if other := find(rep, func(x verify.Difference) bool { return x.Language != "fr" }); len(other) > 0 {
				t.Errorf("differences outside French:\n%s", dump(&verify.Report{Differences: other}))
			}
		}},
		{"record only an editor may see", func(t *testing.T, b *stack, d seeded) {
			b.write("PATCH", fmt.Sprintf("/events/%d", d.draft), map[string]any{"title": "Draft gala, new date soon"})
		}, func(t *testing.T, rep *verify.Report, d seeded) {
			want(t, rep, fmt.Sprintf("event %d", d.draft), editor, "en", fmt.Sprintf("/events/%d?", d.draft),
				`$.title: "Draft gala" at from, "Draft gala, new date soon" at against`)
			if anon := find(rep, func(x verify.Difference) bool { return x.Reader == anonymous }); len(anon) > 0 {
				t.Errorf("anonymous differences for a draft:\n%s", dump(&verify.Report{Differences: anon}))
			}
		}},
		{"event hidden from listings", func(t *testing.T, b *stack, d seeded) {
			b.write("PATCH", fmt.Sprintf("/events/%d", d.hidden), map[string]any{"title": "Hidden rehearsal (room B)"})
		}, func(t *testing.T, rep *verify.Report, d seeded) {
			want(t, rep, fmt.Sprintf("event %d", d.hidden), anonymous, "de", fmt.Sprintf("/events/%d?", d.hidden),
				`$.title: "Hidden rehearsal" at from, "Hidden rehearsal (room B)" at against`)
			want(t, rep, fmt.Sprintf("event %d", d.hidden), anonymous, "de", "/events/by-slug/hidden-rehearsal?", `$.title`)
		}},
		{"occurrence on the second page of a series", func(t *testing.T, b *stack, d seeded) {
			key := time.Date(2027, 2, 2, 19, 0, 0, 0, time.UTC).AddDate(0, 0, 7*55).Format("20060102T150405")
			b.write("PATCH", fmt.Sprintf("/events/%d/occurrences/%s", d.series, key), map[string]any{"title": "Open evening"})
		}, func(t *testing.T, rep *verify.Report, d seeded) {
			want(t, rep, fmt.Sprintf("event %d", d.series), anonymous, "en", fmt.Sprintf("/events/%d/occurrences?", d.series),
				`$.events[5].title: "Weekly class" at from, "Open evening" at against`)
			occ := find(rep, func(x verify.Difference) bool { return strings.Contains(x.Route, "/occurrences?") })
			for _, x := range occ {
				if !strings.Contains(x.Route, "page=2&") {
					t.Errorf("a difference on another page than the second: %s", x)
				}
			}
		}},
		{"category parent", func(t *testing.T, b *stack, d seeded) {
			b.write("PATCH", fmt.Sprintf("/categories/%d", d.childCat), map[string]any{"parent": 0})
		}, func(t *testing.T, rep *verify.Report, d seeded) {
			want(t, rep, fmt.Sprintf("category %d", d.childCat), anonymous, "en", fmt.Sprintf("/categories/%d?", d.childCat),
				fmt.Sprintf("$.parent: %d at from, 0 at against", d.parentCat))
			want(t, rep, "categories list", anonymous, "en", "hide_empty=false", "$.categories[")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a, b, d := againstShared(t)
			tt.change(t, b, d)
			b.flush()
			rep := compare(t, a, b, verify.Options{Tokens: []string{"", editorToken}})
			if rep.Equal() {
				t.Fatal("no difference found")
			}
			tt.check(t, rep, d)
			t.Logf("%d differences, %d more:\n%s", len(rep.Differences), rep.More, dump(rep))
		})
	}
}

// proxy serves target's answers through a reverse proxy whose answers
// tamper may change (nil: unchanged); it returns the proxy's URL.
func proxy(t *testing.T, target string, tamper func(r *http.Request, status int, body []byte) (int, []byte)) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(u)
			r.Out.Header.Del("Accept-Encoding") // bodies in clear, to tamper with
		},
		ModifyResponse: func(res *http.Response) error {
			if tamper == nil {
				return nil
			}
			body, err := io.ReadAll(res.Body)
			res.Body.Close()
			if err != nil {
				return err
			}
			res.StatusCode, body = tamper(res.Request, res.StatusCode, body)
			res.Body = io.NopCloser(bytes.NewReader(body))
			res.ContentLength = int64(len(body))
			res.Header.Set("Content-Length", strconv.Itoa(len(body)))
			return nil
		},
	}
	srv := httptest.NewServer(rp)
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestICSDifference: an .ics that differs while every JSON answer is the
// same is reported on its route, with its first differing line, for
// every reader and language, and nothing else is.
func TestICSDifference(t *testing.T) {
	t.Parallel()
	a, b, d := sharedPair(t)
	ics := fmt.Sprintf("/calendar/events/v1/events/%d.ics", d.events[7])
	against := proxy(t, b.url, func(r *http.Request, status int, body []byte) (int, []byte) {
		if r.URL.Path == ics {
			body = bytes.Replace(body, []byte("LOCATION:"), []byte("LOCATION:Room 2\\, "), 1)
		}
		return status, body
	})
	rep := compare(t, a, &stack{url: against}, verify.Options{})
	if len(rep.Differences) != 9 {
		t.Fatalf("%d differences, want 9 (3 readers, 3 languages):\n%s", len(rep.Differences), dump(rep))
	}
	for _, x := range rep.Differences {
		if x.Item != fmt.Sprintf("event %d", d.events[7]) || !strings.HasPrefix(x.Route, "GET "+ics+"?multilang_language=") ||
			!strings.Contains(x.What, `"LOCATION:Room 2\\, `) || !strings.HasPrefix(x.What, "line ") {
			t.Errorf("unexpected difference: %s", x)
		}
	}
}

// TestBoundsAndRetries: the report lists MaxDifferences differences, the
// first ones in the comparison's order, and counts the others; an
// overloaded answer (503) is asked again; a body over MaxBody is
// reported, not compared.
func TestBoundsAndRetries(t *testing.T) {
	t.Parallel()
	a, b, d := againstShared(t)
	b.write("PATCH", fmt.Sprintf("/venues/%d", d.venue), map[string]any{"city": "Lille"})
	b.flush()

	// Few differences listed: the first ones, then the count.
	all := compare(t, a, b, verify.Options{Tokens: []string{""}})
	few := compare(t, a, b, verify.Options{Tokens: []string{""}, MaxDifferences: 3})
	if len(few.Differences) != 3 || few.More != len(all.Differences)-3 || len(all.Differences) < 10 {
		t.Fatalf("listed %d, more %d; all: %d", len(few.Differences), few.More, len(all.Differences))
	}
	for i := range few.Differences {
		if few.Differences[i] != all.Differences[i] {
			t.Errorf("difference %d: %s, want %s", i, few.Differences[i], all.Differences[i])
		}
	}
	if first := all.Differences[0]; first.Item != "events list" || first.Language != "en" || !strings.Contains(first.What, `.venue.city: "Lyon" at from, "Lille" at against`) {
		t.Errorf("first difference: %s", first)
	}

	// A 503 on the first request of every route, then the real answer:
	// asked again, nothing differs; the retries are counted.
	var mu sync.Mutex
	seen := map[string]bool{}
	flaky := proxy(t, a.url, func(r *http.Request, status int, body []byte) (int, []byte) {
		mu.Lock()
		defer mu.Unlock()
		if !seen[r.URL.String()] {
			seen[r.URL.String()] = true
			return http.StatusServiceUnavailable, []byte(`{"code":"store_unavailable","message":"busy","data":{"status":503}}`)
		}
		return status, body
	})
	plain := compare(t, a, a, verify.Options{Tokens: []string{""}, Languages: []string{"en"}})
	retried := compare(t, a, &stack{url: flaky}, verify.Options{Tokens: []string{""}, Languages: []string{"en"}, RetryPause: time.Millisecond})
	if !retried.Equal() {
		t.Errorf("differences through retries:\n%s", dump(retried))
	}
	if retried.Requests != plain.Requests*3/2 {
		t.Errorf("%d requests with a 503 first on every route, %d without: want 1.5 times as many", retried.Requests, plain.Requests)
	}

	// Bodies over the cap are reported, not compared.
	capped := compare(t, a, a, verify.Options{Tokens: []string{""}, Languages: []string{"en"}, MaxBody: 2000})
	big := find(capped, func(x verify.Difference) bool { return strings.Contains(x.What, "a body over 2000 bytes") })
	if len(big) == 0 || len(big) != len(capped.Differences) {
		t.Errorf("capped bodies:\n%s", dump(capped))
	}
}

// TestUnreachable: a service that does not answer, or does not answer as
// this API, stops the comparison with an *UnreachableError naming it.
func TestUnreachable(t *testing.T) {
	t.Parallel()
	a := newStack(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	notAPI := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(notAPI.Close)
	tests := []struct {
		name, from, against string
		opts                verify.Options
		side, why           string
	}{
		{"against down", a.url, closed, verify.Options{Retries: -1}, "against", "connection refused"},
		{"from down, retried", closed, a.url, verify.Options{Retries: 2, RetryPause: time.Millisecond}, "from", "connection refused"},
		{"not the API", a.url, notAPI.URL, verify.Options{}, "against", "is the URL a service's base URL, and the API root /calendar/events/v1?"},
		{"another API root", a.url, a.url, verify.Options{Root: "/wp-json/tribe/events/v1"}, "from", "the namespace index is not this API's"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithDeadline(context.Background(), testdeadline.Of(t))
			defer cancel()
			rep, err := verify.Compare(ctx, verify.Service{URL: tt.from}, verify.Service{URL: tt.against}, tt.opts)
			var ue *verify.UnreachableError
			if !errors.As(err, &ue) || ue.Side != tt.side || !strings.Contains(err.Error(), tt.why) {
				t.Fatalf("Compare: %v (report %v), want an *UnreachableError of %s: %s", err, rep, tt.side, tt.why)
			}
		})
	}
	// A URL that is not a base URL and a language no side serves are
	// refused before anything is asked.
	for _, tc := range []struct {
		url  string
		opts verify.Options
		want string
	}{
		{"ftp://x", verify.Options{}, "is not a service's base URL"},
		{a.url + "?x=1", verify.Options{}, "is not a service's base URL"},
		{a.url, verify.Options{Languages: []string{"nl"}}, `language "nl": the from service does not serve it (it serves en, fr, de)`},
	} {
		if _, err := verify.Compare(context.Background(), verify.Service{URL: tc.url}, verify.Service{URL: a.url}, tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.url, err, tc.want)
		}
	}
}

// TestNotes: a reader the from service refuses, and IDs no list names
// beyond MaxProbes, are noted in the report (and the progress), not
// silently passed over.
func TestNotes(t *testing.T) {
	t.Parallel()
	a, b, d := againstShared(t)
	b.write("PATCH", fmt.Sprintf("/events/%d", d.hidden), map[string]any{"title": "Hidden rehearsal (room B)"})
	b.flush()
	var progress strings.Builder
	rep := compare(t, a, b, verify.Options{Tokens: []string{"", "ecal_revoked"}, Languages: []string{"en"}, MaxProbes: 1, Progress: &progress})
	if !rep.Equal() {
		t.Errorf("differences found; the hidden event should not have been read:\n%s", dump(rep))
	}
	revoked := "token " + (&repository.Token{Hash: repository.HashToken("ecal_revoked")}).ID()
	want := []string{
		fmt.Sprintf("anonymous, en: 2 IDs up to %d are named by no list, more than MaxProbes (1): they were not read, so events hidden from listings were not compared", d.protected),
		revoked + ", en: the from service refuses this reader, 401 (rest_invalid_token); only the refusals are compared",
	}
	if strings.Join(rep.Notes, "\n") != strings.Join(want, "\n") {
		t.Errorf("notes:\n%s\nwant:\n%s", strings.Join(rep.Notes, "\n"), strings.Join(want, "\n"))
	}
	for _, n := range want {
		if !strings.Contains(progress.String(), "note: "+n) {
			t.Errorf("the progress lacks the note %q:\n%s", n, progress.String())
		}
	}
}
