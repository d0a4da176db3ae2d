package wpimport_test

import (
	"os"
	"testing"

	"github.com/calendar/eventcal/config/testsupport"
	"github.com/calendar/eventcal/repository/mongo/mongotest"
)

// testGCPercent is the collector's target (GOGC) of the package's test
// binary (testsupport.CollectLessOften): the imports allocate much and
// keep little. At the default 100 the collector's mark took about 5 % of
// the binary's CPU (0.5-0.6 s in its profile); at 400 about a fifth of
// that, for a peak RSS of about 0.32 GB instead of 0.16.
const testGCPercent = 400

// TestMain runs the tests with one embedded FerretDB for the process
// (mongotest.Main), which the MongoDB tests share, and the collector
// running less often (testGCPercent).
func TestMain(m *testing.M) {
	testsupport.CollectLessOften(testGCPercent)
	os.Exit(mongotest.Main(m))
}
