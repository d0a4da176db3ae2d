package connlimit

import (
	"io"
	"net"
	"net/netip"
	"testing"
)

// addrConn is one end of a pipe with a chosen remote address.
type addrConn struct {
	net.Conn
	remote net.Addr
	peer   net.Conn
}

func (c *addrConn) RemoteAddr() net.Addr { return c.remote }

// queueListener accepts the connections queued in it, then fails.
type queueListener struct{ conns []net.Conn }

func (l *queueListener) Accept() (net.Conn, error) {
	if len(l.conns) == 0 {
		return nil, net.ErrClosed
	}
	c := l.conns[0]
	l.conns = l.conns[1:]
	return c, nil
}
func (l *queueListener) Close() error   { return nil }
func (l *queueListener) Addr() net.Addr { return &net.TCPAddr{} }

// dialFrom makes a connection whose remote address is addr; the peer end
// reads whatever the listener answers.
func dialFrom(t *testing.T, addr string) *addrConn {
	t.Helper()
	var remote net.Addr = &net.UnixAddr{Name: addr, Net: "unix"}
	if ap, err := netip.ParseAddrPort(addr); err == nil {
		remote = net.TCPAddrFromAddrPort(ap)
	}
	server, client := net.Pipe()
	t.Cleanup(func() { server.Close(); client.Close() })
	return &addrConn{Conn: server, remote: remote, peer: client}
}

// TestListenerShares: the connections one address group may hold, by
// kind of address. Each case queues its connections in order and lists
// which of them are accepted.
func TestListenerShares(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	for _, tt := range []struct {
		name     string
		from     []string
		accepted []bool
	}{
		{"one IPv4 address over the share", []string{"192.0.2.1:1", "192.0.2.1:2", "192.0.2.1:3"}, []bool{true, true, false}},
		{"two IPv4 addresses", []string{"192.0.2.1:1", "192.0.2.1:2", "192.0.2.2:3", "192.0.2.2:4"}, []bool{true, true, true, true}},
		{"IPv4-mapped IPv6 is the IPv4 address", []string{"192.0.2.1:1", "[::ffff:192.0.2.1]:2", "192.0.2.1:3"}, []bool{true, true, false}},
		{"one IPv6 /64", []string{"[2001:db8:1:2::1]:1", "[2001:db8:1:2::ffff]:2", "[2001:db8:1:2:aaaa::]:3"}, []bool{true, true, false}},
		{"two IPv6 /64s", []string{"[2001:db8:1:2::1]:1", "[2001:db8:1:2::2]:2", "[2001:db8:1:3::1]:3"}, []bool{true, true, true}},
		{"a trusted proxy", []string{"10.1.2.3:1", "10.1.2.3:2", "10.1.2.3:3"}, []bool{true, true, true}},
		{"not an IP address", []string{"/run/a.sock", "/run/a.sock", "/run/a.sock"}, []bool{true, true, true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			q := &queueListener{}
			conns := make([]*addrConn, len(tt.from))
			for i, a := range tt.from {
				conns[i] = dialFrom(t, a)
				q.conns = append(q.conns, conns[i])
			}
			refused := 0
			ln := New(q, Options{PerAddress: 2, Trusted: trusted, Answer: []byte("no"), Refused: func(netip.Addr) { refused++ }})
			answers := make([]chan string, len(conns))
			for i, c := range conns {
				answers[i] = make(chan string, 1)
				go func() { b, _ := io.ReadAll(c.peer); answers[i] <- string(b) }()
			}
			var accepted []net.Conn
			for {
				c, err := ln.Accept()
				if err != nil {
					break
				}
				accepted = append(accepted, c)
			}
			want := 0
			for i, ok := range tt.accepted {
				if ok {
					want++
					continue
				}
				if got := <-answers[i]; got != "no" {
					t.Errorf("refused connection %d read %q", i, got)
				}
			}
			if len(accepted) != want || refused != len(tt.from)-want {
				t.Errorf("accepted %d, refused %d; want %d accepted", len(accepted), refused, want)
			}
		})
	}
}

// TestListenerRelease: a closed connection gives its share back once,
// however often it is closed.
func TestListenerRelease(t *testing.T) {
	a, b, c := dialFrom(t, "192.0.2.1:1"), dialFrom(t, "192.0.2.1:2"), dialFrom(t, "192.0.2.1:3")
	q := &queueListener{conns: []net.Conn{a, b}}
	ln := New(q, Options{PerAddress: 2}).(*Listener)
	first, _ := ln.Accept()
	_, _ = ln.Accept()
	ip := netip.MustParseAddr("192.0.2.1")
	if n := ln.Open(ip); n != 2 {
		t.Fatalf("open %d, want 2", n)
	}
	first.Close()
	first.Close()
	if n := ln.Open(ip); n != 1 {
		t.Fatalf("open after closing one (twice): %d, want 1", n)
	}
	q.conns = append(q.conns, c)
	if _, err := ln.Accept(); err != nil {
		t.Fatalf("the released share was not given back: %v", err)
	}
}

// TestNoBound: without a share the listener is returned unchanged.
func TestNoBound(t *testing.T) {
	q := &queueListener{}
	if New(q, Options{}) != net.Listener(q) {
		t.Error("New without a share wrapped the listener")
	}
}

// TestListenerMakesRoom: at MaxOpen connections a new one closes one that
// is not serving a request, from the address group holding the most, a
// connection still sending (or new) before an idle one, the one in its
// state longest first; with every connection serving, the new one is
// refused. Each case accepts its connections in order, puts them in the
// states listed, then accepts one more from 192.0.2.9.
func TestListenerMakesRoom(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	type held struct {
		from  string
		state int32
	}
	for _, tt := range []struct {
		name string
		held []held
		// order in which the held connections enter their states (indexes);
		// nil is the order of held.
		order []int
		// closed is the index of the connection closed, -1 for a refusal.
		closed int
		state  string
	}{
		{"the address holding the most", []held{{"192.0.2.1:1", stateNew}, {"192.0.2.2:1", stateNew}, {"192.0.2.2:2", stateNew}}, nil, 1, "new"},
		{"serving connections are never closed", []held{{"192.0.2.1:1", stateIdle}, {"192.0.2.2:1", stateServing}, {"192.0.2.2:2", stateServing}}, nil, 0, "idle"},
		{"sending before idle in a group", []held{{"192.0.2.1:1", stateIdle}, {"192.0.2.1:2", stateSending}, {"192.0.2.2:1", stateNew}}, nil, 1, "sending"},
		{"new before idle in a group", []held{{"192.0.2.1:1", stateIdle}, {"192.0.2.1:2", stateNew}, {"192.0.2.2:1", stateNew}}, nil, 1, "new"},
		{"longest in its state first", []held{{"192.0.2.1:1", stateSending}, {"192.0.2.1:2", stateSending}, {"192.0.2.2:1", stateServing}}, []int{2, 1, 0}, 1, "sending"},
		{"groups of one: idle last", []held{{"192.0.2.1:1", stateIdle}, {"192.0.2.2:1", stateSending}, {"192.0.2.3:1", stateSending}}, []int{2, 1, 0}, 2, "sending"},
		{"a trusted proxy's connections count alone", []held{{"10.0.0.1:1", stateNew}, {"10.0.0.1:2", stateNew}, {"192.0.2.2:1", stateSending}}, []int{0, 1, 2}, 0, "new"},
		{"one address against a proxy", []held{{"10.0.0.1:1", stateSending}, {"192.0.2.2:1", stateIdle}, {"192.0.2.2:2", stateIdle}}, nil, 1, "idle"},
		{"all serving: refused", []held{{"192.0.2.1:1", stateServing}, {"192.0.2.2:1", stateServing}, {"192.0.2.2:2", stateServing}}, nil, -1, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			q := &queueListener{}
			refused := 0
			var closedStates []string
			ln := New(q, Options{MaxOpen: len(tt.held), Trusted: trusted, FullAnswer: []byte("full"),
				Refused: func(netip.Addr) { refused++ }, Closed: func(s string) { closedStates = append(closedStates, s) }}).(*Listener)
			accepted := make([]*conn, len(tt.held))
			for i, h := range tt.held {
				q.conns = append(q.conns, dialFrom(t, h.from))
				c, err := ln.Accept()
				if err != nil {
					t.Fatal(err)
				}
				accepted[i] = c.(*conn)
			}
			order := tt.order
			if order == nil {
				for i := range tt.held {
					order = append(order, i)
				}
			}
			for _, i := range order {
				switch tt.held[i].state {
				case stateSending:
					ln.setState(accepted[i], stateSending)
				case stateServing:
					Serving(accepted[i])
				case stateIdle:
					Serving(accepted[i])
					Idle(accepted[i])
				}
			}
			newcomer := dialFrom(t, "192.0.2.9:1")
			answer := make(chan string, 1)
			go func() { b, _ := io.ReadAll(newcomer.peer); answer <- string(b) }()
			q.conns = append(q.conns, newcomer)
			c, err := ln.Accept()
			if tt.closed < 0 {
				if err == nil || refused != 1 || len(closedStates) != 0 || <-answer != "full" {
					t.Fatalf("want a refusal: err %v, refused %d, closed %v", err, refused, closedStates)
				}
				if ln.Total() != len(tt.held) {
					t.Fatalf("total %d after a refusal", ln.Total())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for i, a := range accepted {
				if a.released != (i == tt.closed) {
					t.Errorf("connection %d (%s) released=%v, want closed: %d", i, tt.held[i].from, a.released, tt.closed)
				}
			}
			if len(closedStates) != 1 || closedStates[0] != tt.state {
				t.Errorf("closed states %v, want [%s]", closedStates, tt.state)
			}
			if ln.Total() != len(tt.held) {
				t.Errorf("total %d, want %d", ln.Total(), len(tt.held))
			}
			// The closed connection's own Close later releases nothing more.
			accepted[tt.closed].Close()
			c.Close()
			if ln.Total() != len(tt.held)-1 {
				t.Errorf("total %d after closing the newcomer, want %d", ln.Total(), len(tt.held)-1)
			}
		})
	}
}

// TestListenerReadMarksSending: a connection's first bytes, when new or
// idle, put it in the sending state; while serving, reads change nothing.
func TestListenerReadMarksSending(t *testing.T) {
	a := dialFrom(t, "192.0.2.1:1")
	ln := New(&queueListener{conns: []net.Conn{a}}, Options{MaxOpen: 4}).(*Listener)
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	cc := c.(*conn)
	read := func() {
		t.Helper()
		go func() { _, _ = a.peer.Write([]byte("x")) }()
		if _, err := c.Read(make([]byte, 1)); err != nil {
			t.Fatal(err)
		}
	}
	for _, step := range []struct {
		name string
		do   func()
		want int32
	}{
		{"accepted", func() {}, stateNew},
		{"first bytes", read, stateSending},
		{"request complete", func() { Serving(c) }, stateServing},
		{"read while serving", read, stateServing},
		{"answered", func() { Idle(c) }, stateIdle},
		{"next request's bytes", read, stateSending},
	} {
		step.do()
		if got := cc.state.Load(); got != step.want {
			t.Fatalf("%s: state %s, want %s", step.name, stateNames[got], stateNames[step.want])
		}
	}
	// Serving and Idle ignore connections the listener did not accept.
	Serving(a)
	Idle(a)
}
