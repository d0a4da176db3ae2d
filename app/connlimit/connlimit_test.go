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
