package meilisim

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
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
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	fmt.Printf("listening on %s\n", ln.Addr())
	srv := &http.Server{Handler: sim}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
