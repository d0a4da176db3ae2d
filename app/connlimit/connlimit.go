// Package connlimit bounds the connections one client address may hold
// open at once, so that a single client (a slowloris trickling header
// lines, or one announcing bodies it never sends) cannot take every
// connection the server serves.
//
// The bound is applied where connections are accepted, before the server
// reads a byte: a connection over the share is answered with a fixed
// response and closed at once, and never takes one of the server's
// connection slots. fasthttp's own MaxConnsPerIP does the same but only
// for IPv4, answers in plain text and cannot be counted; this listener
// also groups IPv6 clients by /64 (what one subscriber usually holds) and
// reports each refusal.
//
// The address is the connection's remote address: behind a reverse proxy
// every connection comes from the proxy, so connections from trusted
// proxies are not bounded (the proxy is where per-client limits belong).
package connlimit

import (
	"net"
	"net/netip"
	"sync"
	"time"
)

// Options configure a Listener.
type Options struct {
	// PerAddress is how many connections one address may hold open at
	// once; 0 (or less) means no bound.
	PerAddress int
	// Trusted are the addresses (reverse proxies) whose connections are
	// never bounded.
	Trusted []netip.Prefix
	// Answer is written to a refused connection before it is closed (a
	// complete HTTP response).
	Answer []byte
	// Refused, when set, is called once for every refused connection,
	// with its address's group (the IPv4 address, or the /64 of an IPv6
	// one).
	Refused func(group netip.Addr)
}

// answerWriteTimeout bounds the write of Answer to a refused connection:
// the accept loop must never wait on a client.
const answerWriteTimeout = time.Second

// Listener wraps a net.Listener and refuses connections from an address
// that already holds PerAddress of them.
type Listener struct {
	net.Listener
	opts Options

	mu   sync.Mutex
	open map[netip.Addr]int
}

// New returns ln with the per-address bound of opts; with no bound it
// returns ln itself.
func New(ln net.Listener, opts Options) net.Listener {
	if opts.PerAddress <= 0 {
		return ln
	}
	return &Listener{Listener: ln, opts: opts, open: map[netip.Addr]int{}}
}

// Accept returns the next connection within its address's share; the
// connections over it are answered, closed and counted meanwhile.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		key, ok := l.key(c.RemoteAddr())
		if !ok {
			return c, nil
		}
		l.mu.Lock()
		if l.open[key] >= l.opts.PerAddress {
			l.mu.Unlock()
			l.refuse(c, key)
			continue
		}
		l.open[key]++
		l.mu.Unlock()
		return &conn{Conn: c, l: l, key: key}, nil
	}
}

// Open returns how many connections from addr's group are open now.
func (l *Listener) Open(addr netip.Addr) int {
	key, ok := l.key(net.TCPAddrFromAddrPort(netip.AddrPortFrom(addr, 0)))
	if !ok {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open[key]
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

// refuse answers c, closes it and reports it (key is its group).
func (l *Listener) refuse(c net.Conn, key netip.Addr) {
	if len(l.opts.Answer) > 0 {
		_ = c.SetWriteDeadline(time.Now().Add(answerWriteTimeout))
		_, _ = c.Write(l.opts.Answer)
	}
	_ = c.Close()
	if l.opts.Refused != nil {
		l.opts.Refused(key)
	}
}

// release gives back one connection of key's share.
func (l *Listener) release(key netip.Addr) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[key]--; l.open[key] <= 0 {
		delete(l.open, key)
	}
}

// conn is an accepted connection that gives its share back once closed.
type conn struct {
	net.Conn
	l    *Listener
	key  netip.Addr
	once sync.Once
}

// Close closes the connection and releases its share (once).
func (c *conn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c.key) })
	return err
}
