package datetext

import (
	"sync"
	"sync/atomic"
)

// watching is how many WatchReads are active: Read takes the lock of
// watches only then.
var watching atomic.Int32

// watches counts the reads of the texts being watched.
var watches = struct {
	sync.Mutex
	m map[string]*atomic.Int64
}{m: map[string]*atomic.Int64{}}

// WatchReads counts, until stop is called, the reads of one date text
// (Read, and a phrase read again in another zone by Value.In): the tests
// that show a request reads each of its dates once watch a text only they
// send. Reads of other texts cost one atomic load.
func WatchReads(text string) (reads func() int64, stop func()) {
	n := new(atomic.Int64)
	watches.Lock()
	watches.m[text] = n
	watches.Unlock()
	watching.Add(1)
	var once sync.Once
	return n.Load, func() {
		once.Do(func() {
			watches.Lock()
			if watches.m[text] == n {
				delete(watches.m, text)
			}
			watches.Unlock()
			watching.Add(-1)
		})
	}
}

// noteRead counts a read of text for WatchReads.
func noteRead(text string) {
	if watching.Load() == 0 {
		return
	}
	watches.Lock()
	n := watches.m[text]
	watches.Unlock()
	if n != nil {
		n.Add(1)
	}
}
