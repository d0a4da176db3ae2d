package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/search/meili"
)

// minMasterKeyBytes is the shortest master key Meilisearch accepts in
// production (MEILI_ENV=production refuses to start with less).
const minMasterKeyBytes = 16

// meiliKey runs "meili-key --out FILE": with MEILI_MASTER_KEY it creates
// (or finds) the service's scoped Meilisearch API key on MEILI_URL
// (meili.EnsureServiceKey) and writes it to FILE, readable by its owner
// only. docker-compose.yml runs it as a one-shot service before the
// service starts, which then reads the key with MEILI_API_KEY_FILE and
// never sees the master key. A master key shorter than 16 bytes is refused
// before anything is asked of Meilisearch.
func (c *opsCommands) meiliKey(args []string) int {
	fs := c.flagSet("meili-key", "meili-key --out FILE [--wait DURATION]\n\n"+
		"Creates (or finds) the service's scoped Meilisearch API key with MEILI_MASTER_KEY on MEILI_URL\n"+
		"and writes it to FILE; the service then reads it with MEILI_API_KEY_FILE=FILE.")
	out := fs.String("out", "", "file to write the scoped key to, mode 0600 (required)")
	wait := fs.Duration("wait", time.Minute, "how long to keep trying while Meilisearch does not answer (a refusal, such as a wrong master key, ends at once)")
	if code := c.parseFlags(fs, args); code >= 0 {
		return code
	}
	if *out == "" {
		fmt.Fprintln(c.stderr, "meili-key: --out is required")
		return exitUsage
	}
	cfg := c.loadConfig()
	if cfg == nil {
		return exitUsage
	}
	switch {
	case cfg.MeiliURL == "":
		fmt.Fprintln(c.stderr, "meili-key: set MEILI_URL (the Meilisearch server)")
		return exitUsage
	case len(cfg.MeiliMasterKey) < minMasterKeyBytes:
		fmt.Fprintf(c.stderr, "meili-key: MEILI_MASTER_KEY is %d bytes; Meilisearch needs at least %d (e.g. openssl rand -base64 32)\n",
			len(cfg.MeiliMasterKey), minMasterKeyBytes)
		return exitUsage
	}
	ctx, cancel := context.WithTimeout(context.Background(), *wait)
	defer cancel()
	var key string
	var err error
	for {
		key, err = meili.EnsureServiceKey(ctx, cfg.MeiliURL, cfg.MeiliMasterKey, "")
		if err == nil {
			break
		}
		if !errors.Is(err, search.ErrUnavailable) {
			// Meilisearch answered (a wrong master key, say): final.
			return c.fail("meili-key", err)
		}
		select {
		case <-ctx.Done():
			return c.fail("meili-key", err)
		case <-time.After(time.Second):
		}
	}
	if err := writeSecretFile(*out, key); err != nil {
		return c.fail("meili-key", err)
	}
	fmt.Fprintf(c.stderr, "meili-key: the service's scoped key is in %s (MEILI_API_KEY_FILE)\n", *out)
	return exitOK
}

// writeSecretFile replaces path with content, mode 0600, through a
// temporary file in the same directory: a reader never sees half a key.
func writeSecretFile(path, content string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".meili-key-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(content + "\n"); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
