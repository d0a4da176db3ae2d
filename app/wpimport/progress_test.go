package wpimport_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/calendar/eventcal/app/wpimport"
	"github.com/calendar/eventcal/app/wpimport/replay"
)

// phases records the phases an import reports.
type phases struct{ names []string }

func (p *phases) Start(phase string, _ int) { p.names = append(p.names, phase) }
func (p *phases) Total(int)                 {}
func (p *phases) Add(int)                   {}
func (p *phases) Finish()                   {}

// TestProgressPhaseNames: the write phases are named in plain English
// ("write categories", not "write categorys").
func TestProgressPhaseNames(t *testing.T) {
	src := replay.NewSite(t, &replay.Site{
		Categories: []map[string]any{replay.Term(601, "Concerts", "concerts")},
		Tags:       []map[string]any{replay.Term(602, "Jazz", "jazz")},
		Events:     []map[string]any{replay.Event(603, "Jazz night")},
	})
	p := &phases{}
	opts := siteOptions(src)
	opts.Progress = p
	runImport(t, openSQLite(t), opts)
	for _, want := range []string{"write categories", "write tags", "write events"} {
		if !slices.Contains(p.names, want) {
			t.Errorf("phases %q lack %q", p.names, want)
		}
	}
	for _, n := range p.names {
		if strings.Contains(n, "ys") {
			t.Errorf("phase %q", n)
		}
	}
}

var _ wpimport.Progress = (*phases)(nil)
