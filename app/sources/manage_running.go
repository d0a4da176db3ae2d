package sources

import "errors"

// ErrRunning is returned by the runner's Start and Run when a run of the
// source is in progress (the API answers 409 source_running).
//
// Declared here until the runner (run.go) declares it: remove this file
// when both are merged.
var ErrRunning = errors.New("a run of this source is in progress")
