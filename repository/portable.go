package repository

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// A portable export carries everything a store keeps, with every ID, from
// one engine to another (or into a fresh store of the same engine), and a
// load writes it back through the ordinary write path. Beyond the other
// concerns it needs the ID sequences (so that the target never hands out
// an ID the source used, a deleted item's ID included) and creates that
// keep an item's ID and revision (see CreateRecord, CreateLabel,
// CreateWebhook, CreateSource and CreateSourceRun).

// Sequence names: the ID sequences every engine keeps.
const (
	// SeqRecords numbers events, venues, organizers and images.
	SeqRecords = "records"
	// SeqLabels numbers categories and tags.
	SeqLabels = "labels"
	// SeqUsers numbers the user accounts.
	SeqUsers = "users"
	// SeqWebhooks numbers the webhook endpoints.
	SeqWebhooks = "webhooks"
	// SeqSources numbers the calendar sources.
	SeqSources = "sources"
	// SeqSourceRuns numbers the runs of the calendar sources.
	SeqSourceRuns = "source_runs"
)

// ErrUnknownSequence is returned by RaiseSequences for a name that is not
// one of SequenceNames.
var ErrUnknownSequence = errors.New("repository: unknown sequence")

// SequenceNames lists the sequence names, in the order of their constants.
var SequenceNames = []string{SeqRecords, SeqLabels, SeqUsers, SeqWebhooks, SeqSources, SeqSourceRuns}

// PortableStore is what a portable export and load need beyond the other
// concerns.
type PortableStore interface {
	// Sequences returns, for every name of SequenceNames, the largest value the
	// sequence handed out or was moved past (0 for one never used). IDs of
	// deleted items count: the value never goes down.
	Sequences(ctx context.Context) (map[string]int64, error)
	// RaiseSequences moves each named sequence to at least the value given
	// (never down), so that later draws come after it. An unknown name is
	// an error (ErrUnknownSequence) and nothing is changed; so is a value below 0 or above
	// MaxID (ErrIDRange). A value of 0 changes nothing. Raising a
	// sequence to MaxID leaves it with no value to hand out (as in the
	// store the value came from).
	RaiseSequences(ctx context.Context, values map[string]int64) error
}

// CheckSequenceValues checks what RaiseSequences is given: every name is
// one of SequenceNames and every value within 0..MaxID. Engines call it
// before they change anything.
func CheckSequenceValues(values map[string]int64) error {
	names := make([]string, 0, len(values))
	for name := range values {
		names = append(names, name)
	}
	slices.Sort(names) // one error for one input, whatever the map's order
	for _, name := range names {
		if !slices.Contains(SequenceNames, name) {
			return fmt.Errorf("%w %q (the sequences are %s)", ErrUnknownSequence, name, strings.Join(SequenceNames, ", "))
		}
		if v := values[name]; v < 0 || v > MaxID {
			return fmt.Errorf("repository: sequence %s: value %d is outside 0..%d: %w", name, v, MaxID, ErrIDRange)
		}
	}
	return nil
}
