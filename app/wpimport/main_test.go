package wpimport_test

import (
	"os"
	"testing"

	"github.com/calendar/eventcal/repository/mongo/mongotest"
)

// TestMain runs the tests with one embedded FerretDB for the process
// (mongotest.Main), which the MongoDB tests share.
func TestMain(m *testing.M) {
	os.Exit(mongotest.Main(m))
}
