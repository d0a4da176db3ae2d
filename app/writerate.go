package app

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

	mu    sync.Mutex
	users map[int64]*rate.Limiter
}

// newWriteRates returns the limiter for perSecond writes a user with a
// burst of burst, or nil when perSecond is 0 (no bound).
func newWriteRates(perSecond float64, burst int, refused prometheus.Counter) *writeRates {
	if perSecond <= 0 {
		return nil
	}
	if burst < 1 {
		burst = 1
	}
	return &writeRates{limit: rate.Limit(perSecond), burst: burst, refused: refused, users: map[int64]*rate.Limiter{}}
}

// bounded reports whether u's writes are rate-limited.
func bounded(u *repository.User) bool {
	return u != nil && (u.Role == repository.RoleContributor || u.Role == repository.RoleAuthor)
}

// writeCostBytes is how many body bytes cost one more token: a write costs
// 1 + its announced body length / writeCostBytes tokens (at most the burst),
// so a 200,000-character draft costs as much as seven small writes. What a
// write costs the index grows with its text, not with the request count.
const writeCostBytes = 32 << 10

// allow takes a write of bodyBytes (the announced Content-Length, or less
// than 0 when unknown) from u's bucket at now, the real clock. When the
// bucket lacks the tokens it returns the error to answer: 429
// rest_too_many_requests with data.retry_after in seconds.
func (w *writeRates) allow(u *repository.User, now time.Time, bodyBytes int) *apierr.Error {
	if w == nil || !bounded(u) {
		return nil
	}
	n := 1 + max(bodyBytes, 0)/writeCostBytes
	n = min(n, w.burst)
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
