package netguard

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"slices"
	"syscall"
	"testing"

	"github.com/calendar/eventcal/config/testsupport"
)

func TestBlocked(t *testing.T) {
	t.Parallel()
	for s, blocked := range map[string]bool{
		"8.8.8.8": false, "1.1.1.1": false, "93.184.216.34": false, "2001:4860:4860::8888": false,
		"::ffff:8.8.8.8": false,
		"127.0.0.1":      true, "127.255.0.1": true, "10.0.0.5": true, "10.255.255.255": true, "172.16.0.1": true,
		"172.31.255.255": true, "192.168.1.1": true, "169.254.169.254": true, "100.64.0.1": true,
		"100.127.255.255": true, "0.0.0.0": true, "0.1.2.3": true, "192.0.0.8": true, "192.0.2.1": true,
		"198.18.0.1": true, "198.51.100.7": true, "203.0.113.9": true, "240.0.0.1": true, "224.0.0.1": true,
		"255.255.255.255": true, "::": true, "::1": true, "fe80::1": true, "fd00::1": true, "fc00::1": true,
		"ff02::1": true, "64:ff9b::a00:1": true, "2001:db8::1": true, "::ffff:127.0.0.1": true,
		"::ffff:10.0.0.1": true,
	} {
		if got := Blocked(netip.MustParseAddr(s)); got != blocked {
			t.Errorf("Blocked(%s) = %v, want %v", s, got, blocked)
		}
	}
	if !Blocked(netip.Addr{}) {
		t.Error("Blocked(invalid address) = false, want true")
	}
}

func TestHostBlocked(t *testing.T) {
	t.Parallel()
	for host, blocked := range map[string]bool{
		"calendar.example.org": false, "93.184.216.34": false, "2606:2800:220:1:248:1893:25c8:1946": false,
		"localhost": true, "LOCALHOST.": true, "api.localhost": true, "127.0.0.1": true, "::1": true,
		"10.1.2.3": true, "169.254.169.254": true, "::ffff:192.168.0.1": true,
		"notlocalhost.org": false,
	} {
		if got := HostBlocked(host); got != blocked {
			t.Errorf("HostBlocked(%q) = %v, want %v", host, got, blocked)
		}
	}
}

// TestDialerChecksResolvedAddresses: the Dialer judges the addresses a
// name resolves to (here through a fake resolver, so no network is
// needed), connects only to accepted ones, and with AllowPrivate connects
// to any.
func TestDialerChecksResolvedAddresses(t *testing.T) {
	t.Parallel()
	resolver := testsupport.StaticResolver{
		"public.example":   {"93.184.216.34"},
		"internal.example": {"10.0.0.5"},
		"rebound.example":  {"127.0.0.1", "::1"},
		"mixed.example":    {"169.254.169.254", "93.184.216.34"},
		"mapped.example":   {"::ffff:192.168.1.1"},
	}
	errMine := errors.New("mine")
	cases := []struct {
		address      string
		allowPrivate bool
		dialled      []string // addresses Connect was asked for
		blocked      string   // the refused address, "" when accepted
	}{
		{"public.example:443", false, []string{"93.184.216.34:443"}, ""},
		{"internal.example:80", false, nil, "10.0.0.5"},
		{"rebound.example:8080", false, nil, "127.0.0.1"},
		{"mixed.example:443", false, []string{"93.184.216.34:443"}, ""},
		{"mapped.example:443", false, nil, "192.168.1.1"},
		{"127.0.0.1:80", false, nil, "127.0.0.1"},
		{"[::1]:80", false, nil, "::1"},
		{"internal.example:80", true, []string{"10.0.0.5:80"}, ""},
		{"rebound.example:8080", true, []string{"127.0.0.1:8080"}, ""},
	}
	for _, c := range cases {
		var dialled []string
		d := &Dialer{AllowPrivate: c.allowPrivate, Refuse: errMine, Resolver: resolver,
			Connect: func(_ context.Context, _, address string) (net.Conn, error) {
				dialled = append(dialled, address)
				a, b := net.Pipe()
				b.Close()
				return a, nil
			}}
		conn, err := d.DialContext(context.Background(), "tcp", c.address)
		if conn != nil {
			conn.Close()
		}
		if !slices.Equal(dialled, c.dialled) {
			t.Errorf("%s (allowPrivate %v): dialled %v, want %v", c.address, c.allowPrivate, dialled, c.dialled)
		}
		var be *BlockedError
		switch {
		case c.blocked == "" && err != nil:
			t.Errorf("%s: %v, want a connection", c.address, err)
		case c.blocked != "" && (!errors.As(err, &be) || be.Addr.String() != c.blocked || !errors.Is(err, errMine)):
			t.Errorf("%s: %v, want a BlockedError for %s wrapping the Refuse reason", c.address, err, c.blocked)
		}
	}
}

// TestDialerDefaultReason: without Refuse, a refused connection wraps
// ErrBlocked; an unknown name is the resolver's error.
func TestDialerDefaultReason(t *testing.T) {
	t.Parallel()
	d := &Dialer{Resolver: testsupport.StaticResolver{"internal.example": {"10.0.0.5"}}}
	_, err := d.DialContext(context.Background(), "tcp", "internal.example:80")
	if !errors.Is(err, ErrBlocked) {
		t.Errorf("dial internal.example: %v, want ErrBlocked", err)
	}
	_, err = d.DialContext(context.Background(), "tcp", "unknown.example:80")
	var dnsErr *net.DNSError
	if !errors.As(err, &dnsErr) {
		t.Errorf("dial unknown.example: %v, want a DNS error", err)
	}
}

// TestControl: the net.Dialer check refuses a socket to a blocked address
// (here a real loopback listener) and lets a public one through.
func TestControl(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	nd := &net.Dialer{Control: Control(nil)}
	_, err = nd.Dial("tcp", ln.Addr().String())
	if !errors.Is(err, ErrBlocked) {
		t.Errorf("dial %s through Control: %v, want ErrBlocked", ln.Addr(), err)
	}
	if err := Control(nil)("tcp4", "93.184.216.34:443", syscall.RawConn(nil)); err != nil {
		t.Errorf("Control(public address) = %v, want nil", err)
	}
	// The real dialer (no Connect hook) refuses the loopback listener too.
	_, err = (&Dialer{}).DialContext(context.Background(), "tcp", ln.Addr().String())
	if !errors.Is(err, ErrBlocked) {
		t.Errorf("Dialer to %s: %v, want ErrBlocked", ln.Addr(), err)
	}
	conn, err := (&Dialer{AllowPrivate: true}).DialContext(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatalf("Dialer with AllowPrivate to %s: %v", ln.Addr(), err)
	}
	conn.Close()
}
