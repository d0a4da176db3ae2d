package api

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/calendar/eventcal/repository"
)

func TestWriteRates(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2027, 1, 1, 12, 0, 0, 0, time.UTC)
	author := &repository.User{ID: 1, Role: repository.RoleAuthor}
	contributor := &repository.User{ID: 2, Role: repository.RoleContributor}
	editor := &repository.User{ID: 3, Role: repository.RoleEditor}
	admin := &repository.User{ID: 4, Role: repository.RoleAdmin}
	type write struct {
		who   *repository.User
		at    time.Duration // after t0
		bytes int
		ok    bool
	}
	cases := []struct {
		name   string
		rate   float64
		burst  int
		writes []write
	}{
		{"burst then refused", 2, 3, []write{
			{author, 0, 0, true}, {author, 0, 0, true}, {author, 0, 0, true}, {author, 0, 0, false},
		}},
		{"refilled at the rate", 2, 3, []write{
			{author, 0, 0, true}, {author, 0, 0, true}, {author, 0, 0, true}, {author, 0, 0, false},
			{author, 499 * time.Millisecond, 0, false}, {author, 500 * time.Millisecond, 0, true},
			{author, 500 * time.Millisecond, 0, false},
		}},
		{"a bucket per user", 1, 1, []write{
			{author, 0, 0, true}, {author, 0, 0, false}, {contributor, 0, 0, true}, {contributor, 0, 0, false},
		}},
		{"editors and admins unbounded", 1, 1, []write{
			{editor, 0, 0, true}, {editor, 0, 0, true}, {admin, 0, 0, true}, {admin, 0, 0, true}, {nil, 0, 0, true},
		}},
		{"large bodies cost more", 1, 10, []write{
			{author, 0, 200_000, true},  // 1 + 6 tokens
			{author, 0, 100_000, false}, // 1 + 3 > the 3 left
			{author, 0, 64 << 10, true}, // 1 + 2
			{author, 0, 0, false},
		}},
		{"a body over the burst costs the burst", 1, 4, []write{
			{author, 0, 1 << 20, true}, {author, 0, 0, false}, {author, 4 * time.Second, 0, true},
		}},
		{"unknown length costs one", 1, 1, []write{{author, 0, -1, true}, {author, 0, -1, false}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			refused := prometheus.NewCounter(prometheus.CounterOpts{Name: "refused"})
			w := newWriteRates(tc.rate, tc.burst, refused, nil)
			want := 0
			for i, wr := range tc.writes {
				err := w.allow(wr.who, t0.Add(wr.at), wr.bytes)
				if (err == nil) != wr.ok {
					t.Fatalf("write %d: refused=%v, want ok=%v (%v)", i, err != nil, wr.ok, err)
				}
				if err != nil {
					want++
					if err.Status != 429 || err.Code != "rest_too_many_requests" || err.Data["retry_after"].(int) < 1 {
						t.Fatalf("write %d: %+v", i, err)
					}
				}
			}
			if got := testutil.ToFloat64(refused); got != float64(want) {
				t.Fatalf("refused counter %v, want %d", got, want)
			}
		})
	}
	if newWriteRates(0, 10, nil, nil) != nil {
		t.Fatal("WRITE_RATE=0 must disable the bound")
	}
	var off *writeRates
	if err := off.allow(author, t0, 0); err != nil {
		t.Fatal(err)
	}
}

// TestWriteCharge: a body read in pieces (a chunked body, whose length is
// not announced) leaves its user's bucket exactly where the same body
// announced with Content-Length does: 1 + length / 32 KiB tokens (at most
// the burst), read from the limiter itself.
func TestWriteCharge(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2027, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name         string
		size, pieces int
		burst        int
	}{
		{"small", 100, 3, 100},
		{"just under 32 KiB", 32<<10 - 1, 7, 100},
		{"32 KiB", 32 << 10, 1, 100},
		{"198,000 bytes", 198_000, 48, 100},
		{"1 MiB capped at the burst", 1 << 20, 256, 10},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newWriteRates(0.0001, tt.burst, nil, nil)
			announced := &repository.User{ID: 1, Role: repository.RoleAuthor}
			chunked := &repository.User{ID: 2, Role: repository.RoleContributor}
			ch, err := w.start(announced, at(t0), tt.size)
			if err != nil {
				t.Fatal(err)
			}
			if err := ch.read(tt.size); err != nil {
				t.Fatal(err)
			}
			ch, err = w.start(chunked, at(t0), -1)
			if err != nil {
				t.Fatal(err)
			}
			step := (tt.size + tt.pieces - 1) / tt.pieces
			for read := 0; read < tt.size; {
				read = min(read+step, tt.size)
				if err := ch.read(read); err != nil {
					t.Fatalf("at %d bytes: %v", read, err)
				}
			}
			want := float64(tt.burst - min(1+tt.size/(32<<10), tt.burst))
			a, c := w.tokens(announced, t0), w.tokens(chunked, t0)
			if a != want || c != want {
				t.Errorf("tokens left: %v with Content-Length, %v chunked; want %v", a, c, want)
			}
		})
	}
	// Refused mid-body (one token spent before): the bytes read stay
	// charged, nothing more.
	w := newWriteRates(0.0001, 4, nil, nil)
	u := &repository.User{ID: 3, Role: repository.RoleAuthor}
	if err := w.allow(u, t0, 0); err != nil {
		t.Fatal(err)
	}
	ch, _ := w.start(u, at(t0), -1)
	var refusedAt int
	for read := 4096; read <= 1<<20; read += 4096 {
		if err := ch.read(read); err != nil {
			if err.Status != 429 {
				t.Fatal(err)
			}
			refusedAt = read
			break
		}
	}
	if refusedAt != 96<<10 || w.tokens(u, t0) != 0 {
		t.Errorf("refused at %d bytes with %v tokens left; want at 96 KiB with 0", refusedAt, w.tokens(u, t0))
	}
	var none *writeCharge
	if err := none.read(1 << 20); err != nil {
		t.Fatal(err)
	}
}

// TestBodyBudget: reservations within the caller's share and the
// process's total, refusals naming the bound at fault, and returns.
func TestBodyBudget(t *testing.T) {
	t.Parallel()
	b := newBodyBudget(10, 4, nil, nil)
	for i, step := range []struct {
		caller string
		take   int64 // negative: give back
		status int
	}{
		{"a", 4, 0},
		{"a", 1, 429},
		{"b", 4, 0},
		{"c", 3, 503},
		{"c", 2, 0},
		{"a", -4, 0},
		{"c", 2, 0},
		{"c", 1, 429},
		{"d", 3, 503},
		{"d", 2, 0},
	} {
		if step.take < 0 {
			b.give(step.caller, -step.take)
			continue
		}
		err := b.take(step.caller, step.take)
		if (err == nil) != (step.status == 0) || (err != nil && err.Status != step.status) {
			t.Fatalf("step %d: %v, want status %d", i, err, step.status)
		}
	}
	if total, c := b.held("c"); total != 10 || c != 4 {
		t.Errorf("held %d in all, %d by c; want 10 and 4", total, c)
	}
	var off *bodyBudget
	if err := off.take("x", 1<<30); err != nil {
		t.Fatal(err)
	}
}

// at is a clock stopped at t.
func at(t time.Time) func() time.Time { return func() time.Time { return t } }
