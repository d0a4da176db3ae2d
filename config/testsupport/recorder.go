package testsupport

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Recorder is an HTTP endpoint for tests that records every request it
// receives (a webhook receiver, say). It answers each with the next
// status of its plan (SetPlan); once the plan is spent, with 200, or 503
// while Failing is set.
type Recorder struct {
	// URL is the endpoint's base URL; any path below it is recorded too.
	URL string
	// Failing makes the endpoint answer 503 when no planned status is
	// left.
	Failing atomic.Bool

	mu   sync.Mutex
	plan []int
	got  []Recorded
}

// Recorded is one request a Recorder received.
type Recorded struct {
	// Path is the path it was sent to (which endpoint, where a test gives
	// several the one Recorder).
	Path   string
	Header http.Header
	Body   []byte
	// Got is when it arrived.
	Got time.Time
	// Status is what the Recorder answered.
	Status int
}

// NewRecorder starts a Recorder that stops when the test ends.
func NewRecorder(t testing.TB) *Recorder {
	rc := &Recorder{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		status := http.StatusOK
		switch {
		case len(rc.plan) > 0:
			status, rc.plan = rc.plan[0], rc.plan[1:]
		case rc.Failing.Load():
			status = http.StatusServiceUnavailable
		}
		rc.got = append(rc.got, Recorded{Path: r.URL.Path, Header: r.Header.Clone(), Body: body, Got: time.Now(), Status: status})
		rc.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	rc.URL = srv.URL
	return rc
}

// SetPlan sets the statuses of the next answers, in order (replacing
// those not answered yet).
func (rc *Recorder) SetPlan(statuses ...int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.plan = append([]int(nil), statuses...)
}

// All returns the requests received so far, in order.
func (rc *Recorder) All() []Recorded {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]Recorded(nil), rc.got...)
}
