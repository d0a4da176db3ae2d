package mongo

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/repository/mongo/mongotest"
)

// TestDuplicateKeyIsErrDuplicate: a duplicate key error of the server (a
// unique index refusing a write) leaves the store as repository.ErrDuplicate,
// which the API answers with 409, keeping the server's message; every other
// error stays what it was (a store failure: 503).
func TestDuplicateKeyIsErrDuplicate(t *testing.T) {
	t.Parallel()
	s := leaseStore(t, mongotest.Start(t))
	ctx := t.Context()
	if _, err := s.users.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "login", Value: "taken"}}); err != nil {
		t.Fatal(err)
	}
	_, serverDup := s.users.InsertOne(ctx, bson.D{{Key: "_id", Value: 2}, {Key: "login", Value: "taken"}})
	if !mongo.IsDuplicateKeyError(serverDup) {
		t.Fatalf("the second insert of one login: %v, want a duplicate key error", serverDup)
	}
	other := errors.New("connection reset")
	for _, tc := range []struct {
		name string
		err  error
		dup  bool
	}{
		{"server's duplicate key", serverDup, true},
		{"wrapped duplicate key", fmt.Errorf("mongo: update: %w", serverDup), true},
		{"write exception 11000", mongo.WriteException{WriteErrors: []mongo.WriteError{{Code: 11000, Message: "E11000"}}}, true},
		{"command error 11000", mongo.CommandError{Code: 11000, Message: "E11000"}, true},
		{"already ErrDuplicate", fmt.Errorf("post 5 exists: %w", repository.ErrDuplicate), true},
		{"other server error", mongo.CommandError{Code: 50, Message: "operation exceeded time limit"}, false},
		{"network error", other, false},
		{"nil", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := asDuplicate(tc.err)
			if errors.Is(got, repository.ErrDuplicate) != tc.dup {
				t.Errorf("asDuplicate(%v) = %v; ErrDuplicate %v, want %v", tc.err, got, !tc.dup, tc.dup)
			}
			if tc.err != nil && !strings.Contains(got.Error(), tc.err.Error()) {
				t.Errorf("asDuplicate(%v) = %v lost the cause", tc.err, got)
			}
			if tc.err == nil && got != nil {
				t.Errorf("asDuplicate(nil) = %v", got)
			}
		})
	}
}
