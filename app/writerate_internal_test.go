package app

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/calendar/eventcal/repository"
)

func TestWriteRates(t *testing.T) {
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
			w := newWriteRates(tc.rate, tc.burst, refused)
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
	if newWriteRates(0, 10, nil) != nil {
		t.Fatal("WRITE_RATE=0 must disable the bound")
	}
	var off *writeRates
	if err := off.allow(author, t0, 0); err != nil {
		t.Fatal(err)
	}
}
