package sources_test

import (
	"os"
	"testing"

	"github.com/calendar/eventcal/config/testsupport"
)

// TestMain runs the tests without a DNS server (testsupport.NoDNS): the
// sources they save name made-up hosts.
func TestMain(m *testing.M) {
	testsupport.NoDNS()
	os.Exit(m.Run())
}
