package verify_test

import (
	"context"
	"strings"
	"testing"

	"github.com/calendar/eventcal/app/verify"
	"github.com/calendar/eventcal/config/testdeadline"
)

// compare runs verify.Compare between two stacks as anonymous, an editor
// and a contributor, listing every difference.
func compare(t *testing.T, from, against *stack, opts verify.Options) *verify.Report {
	t.Helper()
	ctx, cancel := context.WithDeadline(context.Background(), testdeadline.Of(t))
	defer cancel()
	if opts.Tokens == nil {
		opts.Tokens = []string{"", editorToken, contribTok}
	}
	if opts.MaxDifferences == 0 {
		opts.MaxDifferences = 10000
	}
	rep, err := verify.Compare(ctx, verify.Service{URL: from.url}, verify.Service{URL: against.url}, opts)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// dump writes a report's differences, one a line.
func dump(rep *verify.Report) string {
	var b strings.Builder
	for _, d := range rep.Differences {
		b.WriteString(d.String() + "\n")
	}
	return b.String()
}

func TestEqualServices(t *testing.T) {
	t.Parallel()
	a, b := newStack(t), newStack(t)
	seed(t, a, b)
	var progress strings.Builder
	rep := compare(t, a, b, verify.Options{Progress: &progress})
	if !rep.Equal() {
		t.Fatalf("%d differences between equal services:\n%s", len(rep.Differences)+rep.More, dump(rep))
	}
	t.Logf("items %d, requests %d\n%s", rep.Items, rep.Requests, progress.String())
}
