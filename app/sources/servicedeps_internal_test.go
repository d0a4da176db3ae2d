package sources

import (
	"log/slog"
	"testing"

	"github.com/calendar/eventcal/config"
)

// TestServiceRunnerDeps: the service's runner reads with the SOURCE_*
// settings' bounds, in the default language, logging to the logger given,
// and writes through a calendar.
func TestServiceRunnerDeps(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	cfg.SourceMaxEvents, cfg.SourceMaxBytes, cfg.DefaultLanguage = 7, 1234, "fr"
	log := slog.New(slog.DiscardHandler)
	d := ServiceRunnerDeps(cfg, nil, log)
	if d.Config != cfg || d.Logger != log || d.Calendar == nil {
		t.Errorf("deps %+v: want the configuration, the logger and a calendar", d)
	}
	r, ok := d.Reader.(*reader)
	if !ok {
		t.Fatalf("reader %T, want NewReader's", d.Reader)
	}
	if o := r.o; o.Fetcher == nil || o.MaxEvents != 7 || o.MaxBytes != 1234 || o.Language != "fr" || o.Logger != log {
		t.Errorf("reader options %+v: want a fetcher, 7 events, 1234 bytes, fr and the logger", o)
	}
}
