// Command meilisim serves the Meilisearch simulator (package meilisim) on
// a TCP address, for trying the service against it by hand:
//
//	go run ./search/meili/meilisim/cmd/meilisim -addr 127.0.0.1:7700 -master-key KEY -version 1.18.0
//
// It prints "listening on ADDR" once it accepts connections. It is a test
// tool: nothing is persisted, and behaviour is that of the simulator.
package main

import (
	"fmt"
	"os"

	"github.com/calendar/eventcal/search/meili/meilisim"
)

func main() {
	if err := meilisim.Command(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "meilisim:", err)
		os.Exit(1)
	}
}
