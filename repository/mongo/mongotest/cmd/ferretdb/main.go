// Command ferretdb serves FerretDB v1 with the SQLite handler (what
// package mongotest embeds in a test process) on a TCP address, so that
// several service processes can share one database in a test:
//
//	go run ./repository/mongo/mongotest/cmd/ferretdb -addr 127.0.0.1:27017 -dir /tmp/ferret
//
// It prints "listening on ADDR" once the server answers a ping, and stops
// on SIGINT or SIGTERM. Without -dir the SQLite files go to a new
// temporary directory, removed at exit. It is a test tool: the files are
// written without fsync. Its test is TestCommandServesAndStops, in package
// mongo's test binary (repository/mongo/mongotest_command_test.go), which
// runs the same main (mongotest.Command).
package main

import (
	"fmt"
	"os"

	"github.com/calendar/eventcal/repository/mongo/mongotest"
)

// main is mongotest.Command on the arguments (commandMain of
// repository/mongo/mongotest_command_test.go repeats it).
func main() {
	if err := mongotest.Command(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "ferretdb:", err)
		os.Exit(1)
	}
}
