// Command meilisim serves the Meilisearch simulator (package meilisim) on
// a TCP address, for trying the service against it by hand:
//
//	go run ./search/meili/meilisim/cmd/meilisim -addr 127.0.0.1:7700 -master-key KEY -version 1.18.0
//
// It prints "listening on ADDR" once it accepts connections. It is a test
// tool: nothing is persisted, and behaviour is that of the simulator.
package main

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

	"github.com/calendar/eventcal/search/meili/meilisim"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "meilisim:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("meilisim", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:7700", "address to listen on")
	key := fs.String("master-key", "", "master key (empty: every request is accepted)")
	version := fs.String("version", meilisim.DefaultVersion, "Meilisearch version to simulate, "+meilisim.DefaultVersion+" to "+meilisim.NewestVersion+" (autobatching differs from 1.45.0)")
	maxPayload := fs.Int64("max-payload", meilisim.DefaultPayloadLimit, "largest request body in bytes (Meilisearch's --http-payload-size-limit)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	sim, err := meilisim.NewChecked(meilisim.Options{MasterKey: *key, Version: *version, PayloadLimit: *maxPayload})
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
