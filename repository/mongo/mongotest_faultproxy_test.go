package mongo_test

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/calendar/eventcal/config/testdeadline"
	"github.com/calendar/eventcal/repository/mongo/mongotest"
)

// connectNoRetry returns a client of uri closed when t ends. Retryable
// writes are off so that a lost reply reaches the caller (the test server
// is no replica set anyway).
func connectNoRetry(t *testing.T, uri string) *mongo.Client {
	t.Helper()
	client, err := mongo.Connect(options.Client().ApplyURI(uri).SetRetryWrites(false).SetRetryReads(false))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Disconnect(context.Background()) })
	return client
}

func TestFaultProxy(t *testing.T) {
	t.Parallel()
	uri := mongotest.Start(t)
	direct := connectNoRetry(t, uri)
	cases := []struct {
		name   string
		faults []mongotest.Fault
		// wantErr and wantStored are per insert of the two the case
		// makes.
		wantErr    [2]bool
		wantStored [2]bool
		wantHits   int
	}{
		{name: "no fault", wantStored: [2]bool{true, true}},
		{
			name:       "drop reply of insert once",
			faults:     []mongotest.Fault{{Command: "insert", Action: mongotest.DropReply, Times: 1}},
			wantErr:    [2]bool{true, false},
			wantStored: [2]bool{true, true},
			wantHits:   1,
		},
		{
			name:       "cut insert every time",
			faults:     []mongotest.Fault{{Command: "insert", Collection: "c", Action: mongotest.Cut}},
			wantErr:    [2]bool{true, true},
			wantStored: [2]bool{false, false},
			wantHits:   2,
		},
		{
			name:       "other collection untouched",
			faults:     []mongotest.Fault{{Command: "insert", Collection: "other", Action: mongotest.Cut}},
			wantStored: [2]bool{true, true},
		},
		{
			name:       "other command untouched",
			faults:     []mongotest.Fault{{Command: "update", Action: mongotest.DropReply}},
			wantStored: [2]bool{true, true},
		},
		{
			name: "first matching rule decides",
			faults: []mongotest.Fault{
				{Command: "insert", Action: mongotest.Cut, Times: 1},
				{Command: "insert", Action: mongotest.DropReply, Times: 1},
			},
			wantErr:    [2]bool{true, true},
			wantStored: [2]bool{false, true},
			wantHits:   2,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testdeadline.Context(t)
			p, puri := mongotest.ProxyURI(t, uri)
			client := connectNoRetry(t, puri)
			db := mongotest.Database(t)
			// A first command through the proxy so the handshake is done.
			if err := client.Database(db).RunCommand(ctx, bson.D{{Key: "ping", Value: 1}}).Err(); err != nil {
				t.Fatal(err)
			}
			for _, f := range tc.faults {
				p.Inject(f)
			}
			for i := range 2 {
				_, err := client.Database(db).Collection("c").InsertOne(ctx, bson.D{{Key: "_id", Value: i}})
				if (err != nil) != tc.wantErr[i] {
					t.Errorf("insert %d: error %v, want error %v", i, err, tc.wantErr[i])
				}
				if err != nil && !mongo.IsNetworkError(err) {
					t.Errorf("insert %d: %v is no network error", i, err)
				}
				n, err := direct.Database(db).Collection("c").CountDocuments(ctx, bson.D{{Key: "_id", Value: i}})
				if err != nil {
					t.Fatal(err)
				}
				if (n == 1) != tc.wantStored[i] {
					t.Errorf("insert %d: stored %v, want %v", i, n == 1, tc.wantStored[i])
				}
			}
			if got := p.Applied(); got != tc.wantHits {
				t.Errorf("Applied() = %d, want %d", got, tc.wantHits)
			}
			// Once the rules are gone, the proxy forwards again.
			p.Reset()
			if err := client.Database(db).RunCommand(ctx, bson.D{{Key: "ping", Value: 1}}).Err(); err != nil {
				t.Errorf("ping after Reset: %v", err)
			}
		})
	}
}

// TestFaultProxyWriteError: WriteError answers the command without
// forwarding it, with a write error of its code (a duplicate key unless
// told otherwise), after Before ran; later commands pass.
func TestFaultProxyWriteError(t *testing.T) {
	t.Parallel()
	uri := mongotest.Start(t)
	direct := connectNoRetry(t, uri)
	for _, tc := range []struct {
		name     string
		code     int32
		before   bool // Before inserts the document (the race's winner)
		wantCode int
		wantBy   string // the stored document's "by", "" for none
	}{
		{name: "duplicate key after the winner's insert", before: true, wantCode: 11000, wantBy: "winner"},
		{name: "other code, nothing forwarded", code: 50, wantCode: 50},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testdeadline.Context(t)
			p, puri := mongotest.ProxyURI(t, uri)
			client := connectNoRetry(t, puri)
			db := mongotest.Database(t)
			coll := client.Database(db).Collection("c")
			var befores int
			f := mongotest.Fault{Command: "insert", Collection: "c", Action: mongotest.WriteError, Code: tc.code, Times: 1,
				Before: func() { befores++ }}
			if tc.before {
				f.Before = func() {
					befores++
					if _, err := direct.Database(db).Collection("c").InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "by", Value: "winner"}}); err != nil {
						t.Errorf("the winner's insert: %v", err)
					}
				}
			}
			p.Inject(f)
			_, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "by", Value: "proxy"}})
			var we mongo.WriteException
			if !errors.As(err, &we) || len(we.WriteErrors) != 1 || we.WriteErrors[0].Code != tc.wantCode {
				t.Fatalf("insert through the proxy: %v, want a write error of code %d", err, tc.wantCode)
			}
			if got := mongo.IsDuplicateKeyError(err); got != (tc.wantCode == 11000) {
				t.Errorf("IsDuplicateKeyError = %v for code %d", got, tc.wantCode)
			}
			if befores != 1 || p.Applied() != 1 {
				t.Errorf("Before ran %d times, the rule applied %d times; want 1 and 1", befores, p.Applied())
			}
			var doc struct{ By string }
			switch err := direct.Database(db).Collection("c").FindOne(ctx, bson.D{{Key: "_id", Value: 1}}).Decode(&doc); {
			case tc.wantBy == "" && !errors.Is(err, mongo.ErrNoDocuments):
				t.Errorf("stored %+v (%v), want nothing", doc, err)
			case tc.wantBy != "" && (err != nil || doc.By != tc.wantBy):
				t.Errorf("stored %+v (%v), want by %q", doc, err, tc.wantBy)
			}
			// The rule is used up: the next insert passes.
			if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 2}}); err != nil {
				t.Errorf("the next insert: %v", err)
			}
		})
	}
}

func TestFaultProxyDelayAndCutAll(t *testing.T) {
	t.Parallel()
	uri := mongotest.Start(t)
	p, puri := mongotest.ProxyURI(t, uri)
	client := connectNoRetry(t, puri)
	ctx := testdeadline.Context(t)
	db := client.Database(mongotest.Database(t))
	if err := db.RunCommand(ctx, bson.D{{Key: "ping", Value: 1}}).Err(); err != nil {
		t.Fatal(err)
	}

	// A delay far longer than the caller waits: the caller's deadline
	// ends the command, whatever the machine's speed.
	p.Inject(mongotest.Fault{Command: "find", Action: mongotest.Delay, Delay: time.Hour, Times: 1})
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	err := db.Collection("c").FindOne(short, bson.D{}).Err()
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) && !mongo.IsTimeout(err) {
		t.Errorf("delayed find: %v, want a timeout", err)
	}
	if p.Applied() != 1 {
		t.Errorf("Applied() = %d, want 1", p.Applied())
	}
	// The rule was used up: the next find passes.
	if err := db.Collection("c").FindOne(ctx, bson.D{}).Err(); !errors.Is(err, mongo.ErrNoDocuments) {
		t.Errorf("find after the delay rule: %v", err)
	}

	// A connection the proxy has relayed a command on is tracked, so
	// CutAll closes it: its next read ends at once (were CutAll to do
	// nothing, the read would wait until the test's deadline and fail).
	raw, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if err := raw.SetDeadline(testdeadline.Of(t)); err != nil {
		t.Fatal(err)
	}
	ping, err := bson.Marshal(bson.D{{Key: "ping", Value: 1}, {Key: "$db", Value: "admin"}})
	if err != nil {
		t.Fatal(err)
	}
	msg := make([]byte, 20, 21+len(ping)) // header and flags, then a kind-0 section
	binary.LittleEndian.PutUint32(msg[12:], 2013)
	msg = append(append(msg, 0), ping...)
	binary.LittleEndian.PutUint32(msg, uint32(len(msg)))
	if _, err := raw.Write(msg); err != nil {
		t.Fatal(err)
	}
	size := make([]byte, 4)
	if _, err := io.ReadFull(raw, size); err != nil {
		t.Fatalf("reply to a ping through the proxy: %v", err)
	}
	if _, err := io.ReadFull(raw, make([]byte, binary.LittleEndian.Uint32(size)-4)); err != nil {
		t.Fatalf("reply to a ping through the proxy: %v", err)
	}
	p.CutAll()
	if _, err := raw.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("read on a relayed connection after CutAll: %v, want it closed", err)
	}

	// CutAll fails the connections in use; the driver reconnects.
	p.CutAll()
	if _, err := db.Collection("c").InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err == nil {
		// The pool may hand out a connection opened after the cut; then
		// the insert passes, which is fine too.
		t.Log("insert after CutAll used a new connection")
	}
	deadline := testdeadline.Of(t)
	for {
		err := db.RunCommand(ctx, bson.D{{Key: "ping", Value: 1}}).Err()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no reconnection after CutAll: %v", err)
		}
	}
}

func TestCommandOf(t *testing.T) {
	t.Parallel()
	doc, err := bson.Marshal(bson.D{{Key: "insert", Value: "posts"}, {Key: "$db", Value: "x"}})
	if err != nil {
		t.Fatal(err)
	}
	other, err := bson.Marshal(bson.D{{Key: "ping", Value: 1}})
	if err != nil {
		t.Fatal(err)
	}
	msg := func(op uint32, sections ...[]byte) []byte {
		b := make([]byte, 20)
		binary.LittleEndian.PutUint32(b[12:], op)
		for _, s := range sections {
			b = append(b, s...)
		}
		binary.LittleEndian.PutUint32(b, uint32(len(b)))
		return b
	}
	seq := func(docs ...[]byte) []byte { // a kind-1 section
		body := append([]byte{}, "documents\x00"...)
		for _, d := range docs {
			body = append(body, d...)
		}
		s := make([]byte, 5, 5+len(body))
		s[0] = 1
		binary.LittleEndian.PutUint32(s[1:], uint32(4+len(body)))
		return append(s, body...)
	}
	kind0 := func(d []byte) []byte { return append([]byte{0}, d...) }
	cases := []struct {
		name           string
		msg            []byte
		wantName, coll string
		ok             bool
	}{
		{"insert", msg(2013, kind0(doc)), "insert", "posts", true},
		{"sequence first", msg(2013, seq(other), kind0(doc)), "insert", "posts", true},
		{"non-string first value", msg(2013, kind0(other)), "ping", "", true},
		{"OP_QUERY", msg(2004, kind0(doc)), "", "", false},
		{"truncated", msg(2013, kind0(doc[:7])), "", "", false},
		{"empty", msg(2013), "", "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			name, coll, ok := mongotest.CommandOf(tc.msg)
			if name != tc.wantName || coll != tc.coll || ok != tc.ok {
				t.Errorf("CommandOf = %q, %q, %v; want %q, %q, %v", name, coll, ok, tc.wantName, tc.coll, tc.ok)
			}
		})
	}
}
