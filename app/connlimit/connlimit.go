// Package connlimit bounds the connections the server holds open: how many
// one client address may hold at once, and how many the process holds in
// all, keeping room for clients that send whole requests promptly.
//
// Both bounds are applied where connections are accepted, before the
// server reads a byte.
//
// The share per address: a connection over it is answered with a fixed
// response and closed at once, and never takes one of the server's
// connection slots. fasthttp's own MaxConnsPerIP does the same but only
// for IPv4, answers in plain text and cannot be counted; this listener
// also groups IPv6 clients by /64 (what one subscriber usually holds) and
// reports each refusal.
//
// The process-wide bound: per-address shares alone do not hold against a
// few addresses (seventeen addresses with 256 connections each fill 4,096
// slots). When a new connection arrives and every slot is taken, the
// listener makes room by closing one connection that is not serving a
// request: one that is idle between requests, has sent nothing yet, or is
// still sending its request (headers, or a body the handler is reading).
// It is taken from the address group that holds the most connections, so
// a client holding one or a few connections is not closed while another
// address holds more; within that group, a connection that has not
// finished sending a request goes before one idle after a finished
// request, and the one in that state longest goes first. The order is by
// events (a counter), not by a clock. Only when every connection is
// serving a request is the new one answered 503 and closed.
//
// Which connections are serving is told by the server: Serving once a
// request is complete (headers and body read), Idle once its response is
// written. Until the first of these, a connection counts as sending: it
// becomes so when its first bytes are read.
//
// The address is the connection's remote address: behind a reverse proxy
// every connection comes from the proxy, so connections from trusted
// proxies are not bounded per address (the proxy is where per-client
// limits belong), and each counts as a group of its own for the
// process-wide bound.
package connlimit

import (
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// Options configure a Listener.
type Options struct {
	// PerAddress is how many connections one address may hold open at
	// once; 0 (or less) means no bound.
	PerAddress int
	// MaxOpen is how many connections the listener holds open in all; at
	// the bound a new connection closes one that is not serving a request
	// (see the package documentation). 0 (or less) means no bound.
	MaxOpen int
	// Trusted are the addresses (reverse proxies) whose connections are
	// never bounded per address.
	Trusted []netip.Prefix
	// Answer is written to a connection refused for its address's share
	// before it is closed (a complete HTTP response).
	Answer []byte
	// FullAnswer is written to a connection refused because MaxOpen
	// connections are all serving requests (a complete HTTP response).
	FullAnswer []byte
	// Refused, when set, is called once for every refused connection,
	// with its address's group (the IPv4 address, or the /64 of an IPv6
	// one) when it was refused for its address's share, and the zero Addr
	// when refused because every connection is serving.
	Refused func(group netip.Addr)
	// Closed, when set, is called once for every connection closed to make
	// room for a new one, with the state it was in: "new" (nothing sent
	// yet), "sending" (a request begun and not complete) or "idle"
	// (between requests).
	Closed func(state string)
}

// answerWriteTimeout bounds the write of an answer to a refused
// connection: the accept loop must never wait on a client.
const answerWriteTimeout = time.Second

// The states of a connection.
const (
	// stateNew: accepted, nothing read yet.
	stateNew int32 = iota
	// stateSending: bytes of a request read, the request not complete.
	stateSending
	// stateServing: a complete request is being served; never closed to
	// make room.
	stateServing
	// stateIdle: between requests on a kept-alive connection.
	stateIdle
)

// stateNames are the names Options.Closed reports.
var stateNames = [...]string{stateNew: "new", stateSending: "sending", stateServing: "serving", stateIdle: "idle"}

// groupKey names an address group: an IPv4 address or IPv6 /64, or, for a
// connection not bounded per address, the connection alone (solo is its
// sequence number).
type groupKey struct {
	addr netip.Addr
	solo uint64
}

// group is the connections of one address group.
type group struct {
	conns map[*conn]struct{}
	// evictable counts the group's connections that are not serving.
	evictable int
}

// Listener wraps a net.Listener with the per-address and process-wide
// bounds of its Options.
type Listener struct {
	net.Listener
	opts Options

	mu     sync.Mutex
	groups map[groupKey]*group
	open   int
	// seq numbers events: accepts and state changes. A connection's since
	// is the event that put it in its state.
	seq uint64
}

// New returns ln with the bounds of opts; with no bound it returns ln
// itself.
func New(ln net.Listener, opts Options) net.Listener {
	if opts.PerAddress <= 0 && opts.MaxOpen <= 0 {
		return ln
	}
	return &Listener{Listener: ln, opts: opts, groups: map[groupKey]*group{}}
}

// Accept returns the next connection within the bounds; connections over
// them are answered, closed and counted meanwhile, and connections closed
// to make room are closed before it is returned.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		addr, bounded := l.key(c.RemoteAddr())
		l.mu.Lock()
		l.seq++
		key := groupKey{addr: addr}
		if !bounded {
			key.solo = l.seq
		}
		g := l.groups[key]
		if bounded && l.opts.PerAddress > 0 && g != nil && len(g.conns) >= l.opts.PerAddress {
			l.mu.Unlock()
			l.refuse(c, l.opts.Answer, addr)
			continue
		}
		var victim *conn
		var victimState int32
		if l.opts.MaxOpen > 0 && l.open >= l.opts.MaxOpen {
			if victim = l.victim(); victim == nil {
				l.mu.Unlock()
				l.refuse(c, l.opts.FullAnswer, netip.Addr{})
				continue
			}
			victimState = victim.state.Load()
			l.releaseLocked(victim)
			// The release may have removed the new connection's group.
			g = l.groups[key]
		}
		if g == nil {
			g = &group{conns: map[*conn]struct{}{}}
			l.groups[key] = g
		}
		cc := &conn{Conn: c, l: l, key: key, since: l.seq}
		g.conns[cc] = struct{}{}
		g.evictable++
		l.open++
		l.mu.Unlock()
		if victim != nil {
			_ = victim.Conn.Close()
			if l.opts.Closed != nil {
				l.opts.Closed(stateNames[victimState])
			}
		}
		return cc, nil
	}
}

// victim returns the connection to close to make room, or nil when every
// connection is serving a request: from the group holding the most
// connections among those with one that is not serving, the connection
// that has not finished sending a request (else the idle one) in its state
// for the longest. l.mu is held.
func (l *Listener) victim() *conn {
	var best *conn
	bestOpen := 0
	for _, g := range l.groups {
		if g.evictable == 0 || len(g.conns) < bestOpen {
			continue
		}
		for c := range g.conns {
			if c.state.Load() == stateServing {
				continue
			}
			if best == nil || len(g.conns) > bestOpen || rankBefore(c, best) {
				best, bestOpen = c, len(g.conns)
			}
		}
	}
	return best
}

// rankBefore reports whether a goes before b among connections of groups
// of the same size: one that has not finished a request (new or sending)
// before an idle one, then the one in its state longest.
func rankBefore(a, b *conn) bool {
	ai, bi := a.state.Load() == stateIdle, b.state.Load() == stateIdle
	if ai != bi {
		return bi
	}
	return a.since < b.since
}

// Open returns how many connections from addr's group are open now.
func (l *Listener) Open(addr netip.Addr) int {
	key, ok := l.key(net.TCPAddrFromAddrPort(netip.AddrPortFrom(addr, 0)))
	if !ok {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if g := l.groups[groupKey{addr: key}]; g != nil {
		return len(g.conns)
	}
	return 0
}

// Total returns how many connections are open now.
func (l *Listener) Total() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open
}

// key is the group of a remote address: the IPv4 address, or the /64 of
// an IPv6 one. ok is false for addresses that are not bounded (trusted
// proxies, and anything that is not an IP address, such as a Unix socket).
func (l *Listener) key(a net.Addr) (key netip.Addr, ok bool) {
	tcp, isTCP := a.(*net.TCPAddr)
	if !isTCP {
		return netip.Addr{}, false
	}
	ip, valid := netip.AddrFromSlice(tcp.IP)
	if !valid {
		return netip.Addr{}, false
	}
	ip = ip.Unmap()
	for _, p := range l.opts.Trusted {
		if p.Contains(ip) {
			return netip.Addr{}, false
		}
	}
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return p.Addr(), true
	}
	return ip, true
}

// refuse answers c with answer, closes it and reports it (group is its
// address's group when it was refused for its address's share, the zero
// Addr when refused because the listener is full).
func (l *Listener) refuse(c net.Conn, answer []byte, group netip.Addr) {
	if len(answer) > 0 {
		_ = c.SetWriteDeadline(time.Now().Add(answerWriteTimeout))
		_, _ = c.Write(answer)
	}
	_ = c.Close()
	if l.opts.Refused != nil {
		l.opts.Refused(group)
	}
}

// releaseLocked gives back c's slot and its share, once. l.mu is held.
func (l *Listener) releaseLocked(c *conn) {
	if c.released {
		return
	}
	c.released = true
	g := l.groups[c.key]
	delete(g.conns, c)
	if c.state.Load() != stateServing {
		g.evictable--
	}
	if len(g.conns) == 0 {
		delete(l.groups, c.key)
	}
	l.open--
}

// setState moves c to state at a new event, keeping its group's count of
// connections that may be closed to make room.
func (l *Listener) setState(c *conn, state int32) {
	l.mu.Lock()
	defer l.mu.Unlock()
	old := c.state.Load()
	if c.released || old == state {
		return
	}
	if g := l.groups[c.key]; g != nil {
		switch {
		case old == stateServing:
			g.evictable++
		case state == stateServing:
			g.evictable--
		}
	}
	l.seq++
	c.since = l.seq
	c.state.Store(state)
}

// conn is an accepted connection that gives its slot back once closed and
// tracks whether it is serving a request.
type conn struct {
	net.Conn
	l   *Listener
	key groupKey
	// state is one of the state constants; it changes only with l.mu held
	// (setState) and is read without it on every Read.
	state atomic.Int32
	// since is the event that put the connection in its state; released
	// is set once its slot is given back. Both are guarded by l.mu.
	since    uint64
	released bool
}

// Read reads from the connection; the first bytes of a request mark it
// sending.
func (c *conn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		if s := c.state.Load(); s == stateNew || s == stateIdle {
			c.l.setState(c, stateSending)
		}
	}
	return n, err
}

// Close closes the connection and releases its slot (once).
func (c *conn) Close() error {
	err := c.Conn.Close()
	c.l.mu.Lock()
	c.l.releaseLocked(c)
	c.l.mu.Unlock()
	return err
}

// Serving tells the listener that c, a connection it accepted, holds a
// complete request (headers and body read): c is not closed to make room
// until Idle. Other connections are ignored.
func Serving(c net.Conn) {
	if cc, ok := c.(*conn); ok && cc.state.Load() != stateServing {
		cc.l.setState(cc, stateServing)
	}
}

// Idle tells the listener that c, a connection it accepted, has answered
// its request and waits for the next one. Other connections are ignored.
func Idle(c net.Conn) {
	if cc, ok := c.(*conn); ok {
		cc.l.setState(cc, stateIdle)
	}
}
