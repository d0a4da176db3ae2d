package meilisim

import (
	"errors"
	"flag"
	"net"
	"net/http"

	"github.com/calendar/eventcal/config/testsupport"
)

// Command is the simulator command's main (cmd/meilisim) with its
// arguments: it serves a simulator on -addr, prints "listening on ADDR"
// once it accepts connections, and returns when SIGINT or SIGTERM stops
// it. Tests that run servers as processes run it from their own binary
// (testsupport.MainCommand) instead of linking the command.
func Command(args []string) error {
	fs := flag.NewFlagSet("meilisim", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:7700", "address to listen on")
	key := fs.String("master-key", "", "master key (empty: every request is accepted)")
	version := fs.String("version", DefaultVersion, "Meilisearch version to simulate, "+DefaultVersion+" to "+NewestVersion+" (autobatching differs from 1.45.0)")
	maxPayload := fs.Int64("max-payload", DefaultPayloadLimit, "largest request body in bytes (Meilisearch's --http-payload-size-limit)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	sim, err := NewChecked(Options{MasterKey: *key, Version: *version, PayloadLimit: *maxPayload})
	if err != nil {
		return err
	}
	defer sim.Close()
	// Searches run over the stored documents (not a test's canned hits).
	sim.Mu.Lock()
	sim.Emulate = true
	sim.Mu.Unlock()
	return testsupport.Serve(func() (string, func() error, error) {
		ln, err := net.Listen("tcp", *addr)
		if err != nil {
			return "", nil, err
		}
		srv := &http.Server{Handler: sim}
		served := make(chan error, 1)
		go func() { served <- srv.Serve(ln) }()
		return ln.Addr().String(), func() error {
			srv.Close()
			if err := <-served; !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		}, nil
	})
}
