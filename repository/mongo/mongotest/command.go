package mongotest

import (
	"flag"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"time"

	"github.com/calendar/eventcal/config/testsupport"
)

// Command is the standalone test server's main (cmd/ferretdb) with its
// arguments: it serves FerretDB on -addr with its files in -dir, prints
// "listening on ADDR" once the server answers a ping, and returns when
// SIGINT or SIGTERM stops it. Tests that run servers as processes run it
// from their own binary (testsupport.MainCommand) instead of linking the
// command.
func Command(args []string) error {
	fs := flag.NewFlagSet("ferretdb", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:27017", "address to listen on (port 0: a free one)")
	dir := fs.String("dir", "", "directory of the SQLite files (empty: a temporary one, removed at exit)")
	logLevel := fs.String("log", "", `FerretDB log level: "debug", "warn" or "" (none)`)
	startup := fs.Duration("startup", 2*time.Minute, "how long to wait for the server to answer a ping")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *dir == "" {
		tmp, err := os.MkdirTemp("", "ferretdb-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		*dir = tmp
	} else if err := os.MkdirAll(*dir, 0o755); err != nil {
		return err
	}
	var log *slog.Logger
	switch *logLevel {
	case "":
		log = slog.New(slog.DiscardHandler)
	case "debug":
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	case "warn":
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	default:
		return fmt.Errorf("-log %q: want debug, warn or nothing", *logLevel)
	}
	return testsupport.Serve(func() (string, func() error, error) {
		uri, stop, err := EmbeddedAt(*dir, *addr, log, time.Now().Add(*startup))
		if err != nil {
			return "", nil, err
		}
		stopNow := func() error { return stop(time.Now().Add(10 * time.Second)) }
		u, err := url.Parse(uri)
		if err != nil {
			stopNow()
			return "", nil, err
		}
		return u.Host, stopNow, nil
	})
}
