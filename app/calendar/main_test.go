package calendar

import (
	"os"
	"testing"

	"github.com/calendar/eventcal/repository/mongo/mongotest"
)

// TestMain runs the tests with one embedded FerretDB for the process
// (mongotest.Main): the tests that run on both stores (openStores) each
// open their MongoDB store in a database of their own on it, instead of
// each starting and stopping a server.
func TestMain(m *testing.M) {
	os.Exit(mongotest.Main(m))
}
