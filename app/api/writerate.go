package api

import (
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"

	"github.com/calendar/eventcal/app/apierr"
	"github.com/calendar/eventcal/repository"
)

// writeRates bounds how fast one contributor or author may write
// (WRITE_RATE, WRITE_BURST): a token bucket per user, refilled at the rate
// and holding at most the burst. A contributor who posts large drafts back
// to back would otherwise keep both cores tokenizing and slow every reader
// (issue 19); editors and admins, who are trusted with the whole calendar,
// are not bounded. One bucket per authenticated user: the map is bounded
// by the number of users, and anonymous writes never get this far.
type writeRates struct {
	limit rate.Limit
	burst int
	// refused counts writes answered 429 (eventcal_write_rate_limited_total).
	refused prometheus.Counter
	// charged counts the tokens taken (eventcal_write_rate_tokens_total).
	charged prometheus.Counter

	mu    sync.Mutex
	users map[int64]*rate.Limiter
}

// newWriteRates returns the limiter for perSecond writes a user with a
// burst of burst, or nil when perSecond is 0 (no bound). refused and
// charged may be nil.
func newWriteRates(perSecond float64, burst int, refused, charged prometheus.Counter) *writeRates {
	if perSecond <= 0 {
		return nil
	}
	if burst < 1 {
		burst = 1
	}
	return &writeRates{limit: rate.Limit(perSecond), burst: burst, refused: refused, charged: charged, users: map[int64]*rate.Limiter{}}
}

// bounded reports whether u's writes are rate-limited.
func bounded(u *repository.User) bool {
	return u != nil && (u.Role == repository.RoleContributor || u.Role == repository.RoleAuthor)
}

// writeCostBytes is how many body bytes cost one more token: a write costs
// 1 + its body's length / writeCostBytes tokens (at most the burst), so a
// 200,000-character draft costs as much as seven small writes. What a
// write costs the index grows with its text, not with the request count.
// The length is the bytes actually read, whatever the body's framing
// (writeCharge): a chunked body costs what the same body sent with
// Content-Length costs.
const writeCostBytes = 32 << 10

// cost is the tokens a write with a body of bodyBytes costs (less than 0:
// unknown, counted as none).
func (w *writeRates) cost(bodyBytes int) int {
	return min(1+max(bodyBytes, 0)/writeCostBytes, w.burst)
}

// allow takes a write of bodyBytes (the announced Content-Length, or less
// than 0 when unknown) from u's bucket at now, the real clock. When the
// bucket lacks the tokens it returns the error to answer: 429
// rest_too_many_requests with data.retry_after in seconds.
func (w *writeRates) allow(u *repository.User, now time.Time, bodyBytes int) *apierr.Error {
	if w == nil || !bounded(u) {
		return nil
	}
	return w.take(u, now, w.cost(bodyBytes))
}

// take takes n tokens from u's bucket at now, or takes none and returns
// the 429 to answer.
func (w *writeRates) take(u *repository.User, now time.Time, n int) *apierr.Error {
	w.mu.Lock()
	l, ok := w.users[u.ID]
	if !ok {
		l = rate.NewLimiter(w.limit, w.burst)
		w.users[u.ID] = l
	}
	r := l.ReserveN(now, n)
	delay := r.DelayFrom(now)
	if delay > 0 {
		r.CancelAt(now)
	}
	w.mu.Unlock()
	if delay <= 0 {
		if w.charged != nil {
			w.charged.Add(float64(n))
		}
		return nil
	}
	if w.refused != nil {
		w.refused.Inc()
	}
	secs := int(math.Ceil(delay.Seconds()))
	return apierr.New(429, "rest_too_many_requests",
		"Too many writes: this account may make "+strconv.FormatFloat(float64(w.limit), 'g', -1, 64)+
			" writes a second (bursts of "+strconv.Itoa(w.burst)+"; a write counts once more per 32 KiB of body). Try again in "+strconv.Itoa(secs)+" s.").
		With("retry_after", secs)
}

// tokens returns the tokens left in u's bucket at now (the burst for a
// user who has not written yet).
func (w *writeRates) tokens(u *repository.User, now time.Time) float64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	if l, ok := w.users[u.ID]; ok {
		return l.TokensAt(now)
	}
	return float64(w.burst)
}

// writeCharge is one write's account with its user's bucket. The write is
// charged for its announced Content-Length before any of its body is read
// (so that a write the bucket cannot pay for is refused unread), then for
// the bytes actually read, as they arrive: a chunked body, whose length is
// not announced, is charged a token at every 32 KiB boundary it crosses.
// Either way a body of n bytes costs cost(n) tokens in all. The nil
// *writeCharge (a caller that is not rate-limited) charges nothing.
type writeCharge struct {
	w *writeRates
	u *repository.User
	// taken is what the write has taken so far.
	taken int
	// now is the server's clock (Options.Now), read as the body is read.
	now func() time.Time
}

// start charges u's write for its announced body length (less than 0 when
// not announced) at clock's time (the server's clock), or returns the 429 to answer. The charge is nil
// when u is not rate-limited.
func (w *writeRates) start(u *repository.User, clock func() time.Time, announced int) (*writeCharge, *apierr.Error) {
	if w == nil || !bounded(u) {
		return nil, nil
	}
	n := w.cost(announced)
	if err := w.take(u, clock(), n); err != nil {
		return nil, err
	}
	return &writeCharge{w: w, u: u, taken: n, now: clock}, nil
}

// read charges the write for read bytes of body read so far, now: the
// tokens cost(read) asks beyond those already taken, or the 429 to answer
// (the tokens already taken stay taken: those bytes were read).
func (ch *writeCharge) read(read int) *apierr.Error {
	if ch == nil {
		return nil
	}
	more := ch.w.cost(read) - ch.taken
	if more <= 0 {
		return nil
	}
	if err := ch.w.take(ch.u, ch.now(), more); err != nil {
		return err
	}
	ch.taken += more
	return nil
}
