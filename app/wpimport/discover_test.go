package wpimport_test

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/calendar/eventcal/app/wpimport"
	"github.com/calendar/eventcal/app/wpimport/replay"
	"github.com/calendar/eventcal/repository"
)

// TestFromSiteAddress (issue 34): --from may name the site or its REST
// root; the import finds The Events Calendar's namespace (the home
// page's Link rel="https://api.w.org/", else /wp-json) and says which URL
// to give when there is none.
func TestFromSiteAddress(t *testing.T) {
	site := &replay.Site{Events: []map[string]any{replay.Event(901, "Found night")}}
	src := replay.NewSite(t, site)
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<!doctype html><title>not WordPress</title>"))
	}))
	t.Cleanup(plain.Close)
	noTEC := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.TrimRight(r.URL.Path, "/") == "/wp-json" {
			_, _ = w.Write([]byte(`{"name":"Blog","namespaces":["oembed/1.0","wp/v2"]}`))
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(noTEC.Close)
	for _, tc := range []struct {
		name, from, wantErr string
	}{
		{"site address", src.URL, ""},
		{"site address with a slash", src.URL + "/", ""},
		{"REST root", src.URL + "/wp-json", ""},
		{"namespace", src.Root(), ""},
		{"not WordPress", plain.URL, "give --from as the address of The Events Calendar's REST namespace, such as https://example.org/wp-json/tribe/events/v1"},
		{"WordPress without the calendar", noTEC.URL, "has no tribe/events/v1 REST namespace"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := siteOptions(src)
			opts.Source = tc.from
			s := openSQLite(t)
			rep, err := wpimport.Run(t.Context(), s, opts)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want it to say %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasSuffix(rep.Source, "/wp-json/tribe/events/v1") {
				t.Errorf("report source %q", rep.Source)
			}
			if _, err := s.GetRecord(t.Context(), 901); err != nil {
				t.Errorf("event 901: %v", err)
			}
		})
	}
}

// TestStoppedRunNeverSaysNothingChanged: a run that failed part-way (the
// lists refuse the credentials: 401) prints its report without "Nothing
// changed", which read as success before the error line.
func TestStoppedRunNeverSaysNothingChanged(t *testing.T) {
	src := replay.NewSite(t, &replay.Site{EchoAuth: true})
	opts := siteOptions(src)
	opts.User, opts.AppPassword = "fx-admin", "abcd EFGH 1234 ijkl MNOP 5678"
	rep, err := wpimport.Run(t.Context(), openSQLite(t), opts)
	if err == nil {
		t.Fatal("the run did not fail")
	}
	var out bytes.Buffer
	rep.Print(&out)
	if strings.Contains(out.String(), "Nothing changed") {
		t.Errorf("a failed run reports:\n%s", out.String())
	}
}

// TestCredentialsCheckedFirst (issue 34): credentials the source refuses
// or ignores stop the run before anything is read or written, with a
// message that says which; a wrong application password never ends in
// "Nothing changed".
func TestCredentialsCheckedFirst(t *testing.T) {
	for _, tc := range []struct {
		name     string
		site     replay.Site
		password string
		wantErr  string
	}{
		{"wrong application password", replay.Site{Login: "fx-admin", AppPassword: "abcd EFGH 1234 ijkl MNOP 5678"}, "wxyz WXYZ 0000 ijkl MNOP 5678", "refused the login and application password"},
		{"credentials ignored", replay.Site{IgnoreAuth: true}, "abcd EFGH 1234 ijkl MNOP 5678", "ignored the login and application password"},
		{"right application password", replay.Site{Login: "fx-admin", AppPassword: "abcd EFGH 1234 ijkl MNOP 5678"}, "abcdEFGH1234ijklMNOP5678", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			site := tc.site
			site.Events = []map[string]any{replay.Event(911, "Checked night")}
			src := replay.NewSite(t, &site)
			var logs bytes.Buffer
			opts := adminOptions(src, &logs)
			opts.AppPassword = tc.password
			s := openSQLite(t)
			rep, err := wpimport.Run(t.Context(), s, opts)
			_, getErr := s.GetRecord(t.Context(), 911)
			if tc.wantErr == "" {
				if err != nil || getErr != nil {
					t.Fatalf("import: %v; event: %v", err, getErr)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want it to say %q", err, tc.wantErr)
			}
			if strings.Contains(err.Error(), tc.password) {
				t.Errorf("the error shows the password: %v", err)
			}
			var out bytes.Buffer
			rep.Print(&out)
			if strings.Contains(out.String(), "Nothing changed") {
				t.Errorf("a refused run reports %q", out.String())
			}
			if !errors.Is(getErr, repository.ErrNotFound) {
				t.Errorf("a refused run wrote event 911 (%v)", getErr)
			}
		})
	}
}
