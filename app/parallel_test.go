package app

import (
	"flag"
	"os"
	"runtime"
	"strconv"
	"testing"

	"github.com/calendar/eventcal/config/testsupport"
	"github.com/calendar/eventcal/repository/mongo/mongotest"
)

// testGCPercent is the collector's target (GOGC) of the package's test
// binary (testsupport.CollectLessOften): its services and commands
// allocate much and keep little. At the default 100 the collector's mark
// took about 7 % of the binary's CPU (0.8-0.9 s in its profile); at 400
// about a third of that, for a peak RSS of about 0.5 GB instead of 0.25.
const testGCPercent = 400

// TestMain runs more of the package's parallel tests at once than go
// test's default -parallel (GOMAXPROCS) unless -parallel is given: most
// of them spend their time waiting (on a service's start and stop, a
// scheduled slot, a subprocess, the timeout a test is about) rather than
// computing, and on a 2-core machine two waiting tests held both slots
// while the cores idled. The MongoDB tests share one embedded FerretDB
// (mongotest.Main). The collector runs less often (testGCPercent).
func TestMain(m *testing.M) {
	testsupport.CollectLessOften(testGCPercent)
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		if err := flag.Set("test.parallel", strconv.Itoa(waitingParallel(runtime.GOMAXPROCS(0)))); err != nil {
			panic(err)
		}
	}
	os.Exit(mongotest.Main(m)) // the MongoDB tests share one embedded FerretDB
}

// waitingParallel is how many parallel tests run at once on procs
// processors: four per processor, at least eight.
func waitingParallel(procs int) int { return max(8, 4*procs) }
