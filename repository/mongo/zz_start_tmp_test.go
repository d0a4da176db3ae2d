package mongo_test

import (
	"context"
	"testing"

	"github.com/calendar/eventcal/repository/mongo"
	"github.com/calendar/eventcal/repository/mongo/mongotest"
)

func TestZZStartOnly(t *testing.T) {
	for range 20 {
		t.Run("x", func(t *testing.T) { mongotest.Start(t) })
	}
}

func TestZZOpenOnly(t *testing.T) {
	uri := mongotest.Start(t)
	for range 20 {
		t.Run("x", func(t *testing.T) {
			s, err := mongo.Open(t.Context(), uri, mongotest.Database(t), mongo.WithoutIndexBuildForTest())
			if err != nil {
				t.Fatal(err)
			}
			s.Close(context.Background())
		})
	}
}
func TestZZNothing(t *testing.T) {}
