package repository

import (
	"errors"
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// MaxDocumentBytes is the largest document MongoDB stores (16 MiB, the
// server's BSON document limit): a larger one is refused by the server.
const MaxDocumentBytes = 16 << 20

// MaxRecordBytes is the largest record (record or label) every engine
// stores, measured as the BSON encoding of the record (RecordSize): the
// MongoDB limit less room for what the MongoDB engine adds to the stored
// document (its string _id, name keys of labels). Both engines refuse a
// larger record with a *TooLargeError before writing anything, so that
// the stacks accept the same records and MongoDB's own limit is never
// what refuses a write.
const MaxRecordBytes = MaxDocumentBytes - 64<<10

// ErrTooLarge means a record is over MaxRecordBytes; the error is a
// *TooLargeError naming its largest field.
var ErrTooLarge = errors.New("repository: record too large")

// TooLargeError is the error of a record over MaxRecordBytes.
type TooLargeError struct {
	// Bytes is the record's size (RecordSize).
	Bytes int
	// Field is the dotted path of the record's largest field, as stored
	// (e.g. "event.overrides", "content.en"), and FieldBytes its size.
	Field      string
	FieldBytes int
}

// Error describes the refusal.
func (e *TooLargeError) Error() string {
	return fmt.Sprintf("repository: record of %d bytes is over %d (largest field %s: %d bytes)", e.Bytes, MaxRecordBytes, e.Field, e.FieldBytes)
}

// Is makes errors.Is(err, ErrTooLarge) true.
func (e *TooLargeError) Is(target error) bool { return target == ErrTooLarge }

// RecordSize returns the size of the BSON encoding of the record v (a
// *Record or *Label).
func RecordSize(v any) (int, error) {
	raw, err := bson.Marshal(v)
	if err != nil {
		return 0, fmt.Errorf("repository: measure record: %w", err)
	}
	return len(raw), nil
}

// CheckRecordSize returns a *TooLargeError when the record v (a *Record or
// *Label) is over MaxRecordBytes, nil otherwise.
func CheckRecordSize(v any) error {
	raw, err := bson.Marshal(v)
	if err != nil {
		return fmt.Errorf("repository: measure record: %w", err)
	}
	return CheckDocumentSize(raw, MaxRecordBytes)
}

// CheckDocumentSize returns a *TooLargeError when the BSON document raw is
// over limit bytes, nil otherwise.
func CheckDocumentSize(raw []byte, limit int) error {
	if len(raw) <= limit {
		return nil
	}
	field, n := LargestField(raw)
	return &TooLargeError{Bytes: len(raw), Field: field, FieldBytes: n}
}

// maxFieldDepth bounds how deep LargestField descends into embedded
// documents.
const maxFieldDepth = 4

// LargestField returns the dotted path of the largest field of the BSON
// document raw and its size, descending into embedded documents (not
// arrays: a list is named as a whole, e.g. "event.overrides").
func LargestField(raw []byte) (string, int) {
	var path []string
	size := 0
	doc := bson.Raw(raw)
	for range maxFieldDepth {
		elems, err := doc.Elements()
		if err != nil || len(elems) == 0 {
			break
		}
		best := elems[0]
		for _, e := range elems[1:] {
			if len(e) > len(best) {
				best = e
			}
		}
		path = append(path, best.Key())
		size = len(best.Value().Value)
		sub, ok := best.Value().DocumentOK()
		if !ok {
			break
		}
		doc = sub
	}
	return strings.Join(path, "."), size
}
