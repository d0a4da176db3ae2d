// Package netguard holds the address rules of the requests the service
// sends to URLs that users chose (webhook endpoints, calendar sources):
// such a request must not be a way to reach the service's own network.
//
// Refused, unless a caller allows private addresses: loopback
// (127.0.0.0/8, ::1), private (10/8, 172.16/12, 192.168/16, fc00::/7),
// link-local (169.254/16, fe80::/10, which holds cloud metadata services),
// unspecified (0.0.0.0, ::), multicast and broadcast, and the other
// reserved ranges ("this network" 0/8, carrier-grade NAT 100.64/10, IETF
// protocol assignments 192.0.0/24, benchmarking 198.18/15, documentation,
// 240/4, NAT64 64:ff9b::/96), also in their IPv4-mapped IPv6 form; and
// the names "localhost" and "*.localhost".
//
// A URL is checked when it is saved (HostBlocked, for literal addresses
// and the localhost names), but the rule that counts is applied by Dialer
// to the address a connection actually goes to, after name resolution and
// on every connection, so a name that resolves (or starts resolving, DNS
// rebinding) to an internal address is refused, and so is every redirect
// hop of a client that dials through it.
package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"syscall"
	"time"
)

// ErrBlocked is the reason a Dialer gives for a refused address when its
// Refuse is nil.
var ErrBlocked = errors.New("private, loopback, link-local and reserved addresses are not allowed")

// reserved are ranges besides private, loopback, link-local, multicast
// and unspecified addresses that no public host is in: "this network",
// carrier-grade NAT, IETF protocol assignments, benchmark and
// documentation ranges, 240/4 and broadcast, and NAT64 forms of IPv4
// addresses.
var reserved = func() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range []string{"0.0.0.0/8", "100.64.0.0/10", "192.0.0.0/24", "192.0.2.0/24", "198.18.0.0/15",
		"198.51.100.0/24", "203.0.113.0/24", "240.0.0.0/4", "255.255.255.255/32", "64:ff9b::/96", "2001:db8::/32"} {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}()

// Blocked reports whether a is an address the rules refuse (an invalid
// address is refused too). An IPv4-mapped IPv6 address is judged as the
// IPv4 address it maps.
func Blocked(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsMulticast() || a.IsUnspecified() {
		return true
	}
	for _, p := range reserved {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// HostBlocked reports whether a URL's host (as url.URL.Hostname returns
// it: no brackets, no port) is refused without resolving it: a literal
// address that Blocked refuses, or "localhost" or a name under it (any
// case, with or without the final dot). Other names are judged by the
// address they resolve to (Dialer).
func HostBlocked(host string) bool {
	if a, err := netip.ParseAddr(host); err == nil {
		return Blocked(a)
	}
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	return h == "localhost" || strings.HasSuffix(h, ".localhost")
}

// BlockedError is a connection a Dialer refused: the address it would
// have gone to, and the reason (the Dialer's Refuse or ErrBlocked), which
// errors.Is finds.
type BlockedError struct {
	// Host is the name or address asked for.
	Host string
	// Addr is the address it resolved to that the rules refuse.
	Addr netip.Addr
	// Err is the reason given.
	Err error
}

// Error implements error.
func (e *BlockedError) Error() string {
	if e.Host != "" && e.Host != e.Addr.String() {
		return fmt.Sprintf("%s resolves to %s: %v", e.Host, e.Addr, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Addr, e.Err)
}

// Unwrap returns the reason.
func (e *BlockedError) Unwrap() error { return e.Err }

// Resolver looks up the addresses of a host name (*net.Resolver is one).
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Dialer opens TCP connections for an http.Transport (DialContext) under
// the rules: it resolves the name itself, refuses the addresses Blocked
// refuses (unless AllowPrivate), and connects only to an address it
// accepted; its net.Dialer checks the address once more as the socket
// connects. The zero value refuses private addresses and uses the system
// resolver.
type Dialer struct {
	// AllowPrivate turns the rules off.
	AllowPrivate bool
	// Timeout bounds each connection attempt; 0 means 30 seconds.
	Timeout time.Duration
	// Refuse is the reason a refused connection gives (a BlockedError
	// wraps it); nil means ErrBlocked.
	Refuse error
	// Resolver resolves host names; nil means net.DefaultResolver. Tests
	// substitute one to resolve names to chosen addresses.
	Resolver Resolver
	// Connect opens a connection to an address the rules accepted; nil
	// means a net.Dialer. Tests substitute it to reach a local server
	// under a public address.
	Connect func(ctx context.Context, network, address string) (net.Conn, error)
}

// reason returns the error a refused connection wraps.
func (d *Dialer) reason() error {
	if d.Refuse != nil {
		return d.Refuse
	}
	return ErrBlocked
}

// Control is a net.Dialer.Control function applying the rules to the
// address a socket connects to: it returns a *BlockedError wrapping
// refuse (nil: ErrBlocked) for a refused one.
func Control(refuse error) func(network, address string, c syscall.RawConn) error {
	if refuse == nil {
		refuse = ErrBlocked
	}
	return func(_, address string, _ syscall.RawConn) error {
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			return err
		}
		a, err := netip.ParseAddr(host)
		if err != nil || Blocked(a) {
			return &BlockedError{Addr: a, Err: refuse}
		}
		return nil
	}
}

// DialContext connects to address ("host:port") on network: each address
// the host resolves to in turn, skipping those the rules refuse, until one
// connects. When every address is refused, the error is a *BlockedError
// naming the first.
func (d *Dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		r := d.Resolver
		if r == nil {
			r = net.DefaultResolver
		}
		ipNet := "ip"
		switch network {
		case "tcp4":
			ipNet = "ip4"
		case "tcp6":
			ipNet = "ip6"
		}
		if addrs, err = r.LookupNetIP(ctx, ipNet, host); err != nil {
			return nil, err
		}
		if len(addrs) == 0 {
			return nil, &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true}
		}
	}
	connect := d.Connect
	if connect == nil {
		nd := &net.Dialer{Timeout: d.Timeout}
		if nd.Timeout <= 0 {
			nd.Timeout = 30 * time.Second
		}
		if !d.AllowPrivate {
			nd.Control = Control(d.reason())
		}
		connect = nd.DialContext
	}
	var refused, firstErr error
	for _, a := range addrs {
		if !d.AllowPrivate && Blocked(a) {
			if refused == nil {
				refused = &BlockedError{Host: host, Addr: a.Unmap(), Err: d.reason()}
			}
			continue
		}
		c, err := connect(ctx, network, net.JoinHostPort(a.String(), port))
		if err == nil {
			return c, nil
		}
		if firstErr == nil {
			firstErr = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	if firstErr != nil {
		return nil, firstErr
	}
	return nil, refused
}
