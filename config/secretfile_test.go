package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSecretFiles: a secret setting may be read from the file NAME_FILE
// names (Docker secrets), when NAME itself is empty; a missing or empty
// file is refused and named; other settings have no _FILE form.
func TestSecretFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	key := write("meili-api-key", "scoped-key-0123456789abcdef\n")
	empty := write("empty", " \n")
	site := write("site", "https://file.example")
	tests := []struct {
		name    string
		env     map[string]string
		get     func(*Config) string
		want    string
		wantErr string
	}{
		{"file read, newline dropped", map[string]string{"MEILI_API_KEY_FILE": key}, func(c *Config) string { return c.MeiliAPIKey }, "scoped-key-0123456789abcdef", ""},
		{"variable wins over file", map[string]string{"MEILI_API_KEY": "from-env", "MEILI_API_KEY_FILE": key}, func(c *Config) string { return c.MeiliAPIKey }, "from-env", ""},
		{"master key from file", map[string]string{"MEILI_MASTER_KEY_FILE": key}, func(c *Config) string { return c.MeiliMasterKey }, "scoped-key-0123456789abcdef", ""},
		{"not a secret: no _FILE form", map[string]string{"SITE_URL_FILE": site}, func(c *Config) string { return c.SiteURL }, Default().SiteURL, ""},
		{"missing file", map[string]string{"MEILI_API_KEY_FILE": filepath.Join(dir, "absent")}, nil, "", "invalid MEILI_API_KEY_FILE: open "},
		{"empty file", map[string]string{"MEILI_API_KEY_FILE": empty}, nil, "", "invalid MEILI_API_KEY_FILE: " + empty + " is empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Load(func(k string) string { return tc.env[k] })
			if tc.wantErr != "" {
				var cerr *Error
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.As(err, &cerr) {
					t.Fatalf("Load: %v, want an *Error with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := tc.get(c); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
