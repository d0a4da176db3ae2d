//go:build race

package memindex

// raceEnabled reports that the tests run under the race detector, which
// allocates for its own bookkeeping: the allocation bounds do not hold
// there.
const raceEnabled = true
