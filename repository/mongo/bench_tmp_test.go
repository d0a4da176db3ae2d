package mongo_test

import (
	"github.com/calendar/eventcal/repository/mongo/mongotest"
	"fmt"
	"testing"
	"time"
)

func TestTmpBench(t *testing.T) {
	uri := mongotest.Start(t)
	s := openStore(t, uri)
	ctx := t.Context()
	t0 := time.Now()
	for i := range 100 {
		if err := s.CreatePost(ctx, event(fmt.Sprintf("s-%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("sequential 100: %v", time.Since(t0))
	t0 = time.Now()
	parallel(8, 25, func(w, i int) {
		if err := s.CreatePost(ctx, event(fmt.Sprintf("p-%d-%d", w, i))); err != nil {
			t.Error(err)
		}
	})
	t.Logf("parallel 200: %v", time.Since(t0))
}
