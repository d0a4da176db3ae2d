package mongotest

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// FaultAction is what a FaultProxy does to a command a Fault matches.
type FaultAction int

// The fault actions.
const (
	// DropReply forwards the command, waits for the server's reply (so the
	// server has applied the command) and then closes the client's
	// connection instead of passing the reply on: the driver sees a
	// network error for a command that took effect.
	DropReply FaultAction = iota + 1
	// Cut closes the client's connection without forwarding the command:
	// the driver sees a network error for a command that never reached
	// the server.
	Cut
	// Delay holds the command for Fault.Delay (or until the proxy closes)
	// before forwarding it.
	Delay
	// WriteError answers the command itself, without forwarding it, with
	// a reply that reports a write error of code Fault.Code (11000, a
	// duplicate key, when Code is 0): what a server answers the loser of
	// two upserts of the same _id that ran at once.
	WriteError
)

// String names the action.
func (a FaultAction) String() string {
	switch a {
	case DropReply:
		return "drop-reply"
	case Cut:
		return "cut"
	case Delay:
		return "delay"
	case WriteError:
		return "write-error"
	}
	return fmt.Sprintf("FaultAction(%d)", int(a))
}

// Fault is a rule of a FaultProxy: which commands it matches and what it
// does to them.
type Fault struct {
	// Command is the command name to match (the first key of the OP_MSG
	// body, e.g. "insert", "update", "findAndModify"); empty matches
	// every OP_MSG command.
	Command string
	// Collection, when set, restricts the match to commands whose first
	// value (the collection they act on) is this name.
	Collection string
	// Action is what happens to a matched command.
	Action FaultAction
	// Delay is how long Delay holds a command.
	Delay time.Duration
	// Code is the error code WriteError reports (0 means 11000).
	Code int32
	// Before, when set, is called when the rule matches a command, before
	// its action: what another process does while this command is on its
	// way (e.g. the winning insert of a race WriteError then reports).
	Before func()
	// Times is how many commands the rule applies to before it stops
	// matching; 0 means no limit.
	Times int
}

// FaultProxy is a TCP proxy between a MongoDB driver and a server that
// reads the MongoDB wire protocol (message header and OP_MSG section 0) far
// enough to inject faults into chosen commands: lose the reply of a command
// the server applied, cut the connection before it is sent, or delay it.
// Other messages (and commands no rule matches) pass unchanged. Tests use it
// to show how the store behaves when the network fails after a write.
type FaultProxy struct {
	target string
	ln     net.Listener

	mu     sync.Mutex
	rules  []*faultRule
	conns  map[net.Conn]struct{}
	closed bool
	done   chan struct{}
	wg     sync.WaitGroup
}

// faultRule is an installed Fault with its use count.
type faultRule struct {
	Fault
	hits int
}

// wire-protocol constants.
const (
	headerLen   = 16
	opMsg       = 2013
	maxMsgBytes = 48 << 20 // MongoDB's maxMessageSizeBytes
)

// NewFaultProxy listens on a random loopback port and forwards every
// connection to target (host:port). It closes when t finishes.
func NewFaultProxy(t testing.TB, target string) *FaultProxy {
	t.Helper()
	p, err := ListenFaultProxy(target)
	if err != nil {
		t.Fatalf("mongotest: %v", err)
	}
	t.Cleanup(p.Close)
	return p
}

// ListenFaultProxy is NewFaultProxy without a test: the caller closes the
// proxy.
func ListenFaultProxy(target string) (*FaultProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("fault proxy: listen: %w", err)
	}
	p := &FaultProxy{target: target, ln: ln, conns: map[net.Conn]struct{}{}, done: make(chan struct{})}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr returns the proxy's host:port.
func (p *FaultProxy) Addr() string { return p.ln.Addr().String() }

// ProxyURI returns the MongoDB URI uri with its host replaced by the proxy
// of its (single) host, started for t. Options in uri are kept.
func ProxyURI(t testing.TB, uri string) (*FaultProxy, string) {
	t.Helper()
	u, err := url.Parse(uri)
	if err != nil {
		t.Fatalf("mongotest: parse %q: %v", uri, err)
	}
	p := NewFaultProxy(t, u.Host)
	u.Host = p.Addr()
	return p, u.String()
}

// Inject installs a rule. Rules are tried in the order they were added;
// the first that matches a command decides.
func (p *FaultProxy) Inject(f Fault) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rules = append(p.rules, &faultRule{Fault: f})
}

// Reset removes every rule.
func (p *FaultProxy) Reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rules = nil
}

// Applied returns how many commands the rules have acted on so far.
func (p *FaultProxy) Applied() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, r := range p.rules {
		n += r.hits
	}
	return n
}

// CutAll closes every open connection (the driver sees network errors on
// the commands in flight and reconnects).
func (p *FaultProxy) CutAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
}

// Close stops the proxy and closes every connection.
func (p *FaultProxy) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	close(p.done)
	p.ln.Close()
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// track registers c as open; it returns false when the proxy is closed.
func (p *FaultProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

// untrack closes c and forgets it.
func (p *FaultProxy) untrack(c net.Conn) {
	c.Close()
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

// accept serves connections until the listener closes.
func (p *FaultProxy) accept() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.wg.Add(1)
		go p.serve(client)
	}
}

// serve relays one client connection to a new server connection.
func (p *FaultProxy) serve(client net.Conn) {
	defer p.wg.Done()
	if !p.track(client) {
		client.Close()
		return
	}
	defer p.untrack(client)
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	if !p.track(server) {
		server.Close()
		return
	}
	defer p.untrack(server)

	// drops holds the request IDs whose replies are to be lost; the
	// reply goroutine closes both connections when it meets one.
	// clientMu serialises writes to client: the reply goroutine's and
	// the answers of WriteError.
	var dropMu, clientMu sync.Mutex
	drops := map[int32]bool{}
	replies := make(chan struct{})
	go func() {
		defer close(replies)
		for {
			msg, err := readMessage(server)
			if err != nil {
				client.Close()
				return
			}
			responseTo := int32(binary.LittleEndian.Uint32(msg[8:12]))
			dropMu.Lock()
			drop := drops[responseTo]
			delete(drops, responseTo)
			dropMu.Unlock()
			if drop {
				client.Close()
				server.Close()
				return
			}
			clientMu.Lock()
			_, err = client.Write(msg)
			clientMu.Unlock()
			if err != nil {
				server.Close()
				return
			}
		}
	}()
	defer func() { <-replies }()
	defer server.Close()

	for {
		msg, err := readMessage(client)
		if err != nil {
			return
		}
		r := p.match(msg)
		if r != nil && r.Before != nil {
			r.Before()
		}
		switch {
		case r == nil:
		case r.Action == Cut:
			return
		case r.Action == Delay:
			t := time.NewTimer(r.Delay)
			select {
			case <-t.C:
			case <-p.done:
				t.Stop()
				return
			}
		case r.Action == WriteError:
			clientMu.Lock()
			_, err := client.Write(writeErrorReply(msg, r.Code))
			clientMu.Unlock()
			if err != nil {
				return
			}
			continue
		case r.Action == DropReply:
			dropMu.Lock()
			drops[int32(binary.LittleEndian.Uint32(msg[4:8]))] = true
			dropMu.Unlock()
		}
		if _, err := server.Write(msg); err != nil {
			return
		}
	}
}

// match returns a copy of the rule that applies to msg, counting its use,
// or nil.
func (p *FaultProxy) match(msg []byte) *Fault {
	name, coll, ok := CommandOf(msg)
	if !ok {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range p.rules {
		if r.Times > 0 && r.hits >= r.Times {
			continue
		}
		if r.Command != "" && r.Command != name {
			continue
		}
		if r.Collection != "" && r.Collection != coll {
			continue
		}
		r.hits++
		f := r.Fault
		return &f
	}
	return nil
}

// writeErrorReply returns the OP_MSG reply to the request msg that reports
// one write error of code (11000 when 0) for its first document.
func writeErrorReply(msg []byte, code int32) []byte {
	if code == 0 {
		code = 11000
	}
	body, err := bson.Marshal(bson.D{
		{Key: "n", Value: int32(0)},
		{Key: "nModified", Value: int32(0)},
		{Key: "writeErrors", Value: bson.A{bson.D{
			{Key: "index", Value: int32(0)},
			{Key: "code", Value: code},
			{Key: "errmsg", Value: fmt.Sprintf("E%d duplicate key error (injected by the fault proxy)", code)},
		}}},
		{Key: "ok", Value: 1.0},
	})
	if err != nil {
		panic(err) // a fixed document always marshals
	}
	out := make([]byte, headerLen+4+1+len(body))
	binary.LittleEndian.PutUint32(out[0:4], uint32(len(out)))
	binary.LittleEndian.PutUint32(out[4:8], 0)
	copy(out[8:12], msg[4:8]) // responseTo: the request's ID
	binary.LittleEndian.PutUint32(out[12:16], opMsg)
	// flagBits (4 bytes, zero), then section 0 (kind byte 0, the body).
	out[headerLen+4] = 0
	copy(out[headerLen+5:], body)
	return out
}

// readMessage reads one wire-protocol message (header included).
func readMessage(r io.Reader) ([]byte, error) {
	var head [4]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return nil, err
	}
	n := int(int32(binary.LittleEndian.Uint32(head[:])))
	if n < headerLen || n > maxMsgBytes {
		return nil, fmt.Errorf("fault proxy: message length %d", n)
	}
	msg := make([]byte, n)
	copy(msg, head[:])
	if _, err := io.ReadFull(r, msg[4:]); err != nil {
		return nil, err
	}
	return msg, nil
}

// CommandOf returns the command name of an OP_MSG message (the first key
// of its section 0 document) and, when that key's value is a string, that
// value (the collection of CRUD commands). ok is false for other messages
// (OP_QUERY handshakes, OP_COMPRESSED) and for malformed ones.
func CommandOf(msg []byte) (name, coll string, ok bool) {
	if len(msg) < headerLen+5 || binary.LittleEndian.Uint32(msg[12:16]) != opMsg {
		return "", "", false
	}
	body := msg[headerLen+4:] // after the flag bits
	for len(body) > 0 {
		kind := body[0]
		body = body[1:]
		if len(body) < 4 {
			return "", "", false
		}
		size := int(int32(binary.LittleEndian.Uint32(body[:4])))
		if size < 5 || size > len(body) {
			return "", "", false
		}
		if kind == 0 {
			el, err := bson.Raw(body[:size]).IndexErr(0)
			if err != nil {
				return "", "", false
			}
			coll, _ := el.Value().StringValueOK()
			return el.Key(), coll, true
		}
		body = body[size:] // kind 1: a document sequence, size includes itself
	}
	return "", "", false
}
