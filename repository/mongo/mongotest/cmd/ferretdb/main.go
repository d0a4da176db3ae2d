// Command ferretdb serves FerretDB v1 with the SQLite handler (what
// package mongotest embeds in a test process) on a TCP address, so that
// several service processes can share one database in a test:
//
//	go run ./repository/mongo/mongotest/cmd/ferretdb -addr 127.0.0.1:27017 -dir /tmp/ferret
//
// It prints "listening on ADDR" once the server answers a ping, and stops
// on SIGINT or SIGTERM. Without -dir the SQLite files go to a new
// temporary directory, removed at exit. It is a test tool: the files are
// written without fsync.
package main

import (
	"flag"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/calendar/eventcal/repository/mongo/mongotest"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "ferretdb:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
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
	// Signals are caught before the server starts, so that a stop sent
	// as soon as the line below is read is not lost.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)
	uri, stop, err := mongotest.EmbeddedAt(*dir, *addr, log, time.Now().Add(*startup))
	if err != nil {
		return err
	}
	u, err := url.Parse(uri)
	if err != nil {
		stop(time.Now().Add(10 * time.Second))
		return err
	}
	fmt.Printf("listening on %s\n", u.Host)
	<-sig
	if err := stop(time.Now().Add(10 * time.Second)); err != nil {
		return err
	}
	return nil
}
