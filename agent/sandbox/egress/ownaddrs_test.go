package egress

import (
	"errors"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeInterfaces is a host whose interface addresses a test changes.
type fakeInterfaces struct {
	mu    sync.Mutex
	addrs []netip.Addr
	err   error
	reads int
}

func (f *fakeInterfaces) list() ([]netip.Addr, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	return append([]netip.Addr(nil), f.addrs...), f.err
}

func (f *fakeInterfaces) set(err error, addrs ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.addrs, f.err = nil, err
	for _, a := range addrs {
		f.addrs = append(f.addrs, netip.MustParseAddr(a))
	}
}

// TestNameAllowStillRefusesSpecialAddresses: an allow entry by name (exact
// or wildcard) reaches only public addresses that are not the host's own:
// a name anyone can point at the metadata service, loopback, a private or
// link-local address, a special range or one of the host's interface
// addresses is refused, unless an entry by address or range allows that
// address. Deny still wins; the model endpoint is unaffected.
func TestNameAllowStillRefusesSpecialAddresses(t *testing.T) {
	host := &fakeInterfaces{}
	host.set(nil, "198.51.99.7", "2a01:4f8::7", "10.0.0.7", "127.0.0.1", "fe80::1%eth0")
	own := NewOwnAddrs(host.list, time.Hour, nil, nil)
	pol, err := NewPolicy(Endpoint{"api.anthropic.com", 443},
		[]string{"*.example-user-content.com", "files.example", "db.internal:5432", "10.1.0.0/16", "[2a01:4f8::8]", "metadata.goog"},
		[]string{"bad.example-user-content.com"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		host   string
		port   int
		ip     string
		allow  bool
		reason string
	}{
		{"a.example-user-content.com", 443, "93.184.215.14", true, ReasonAllowList},
		{"files.example", 443, "93.184.215.15", true, ReasonAllowList},
		// The wildcard pointed at what it must not reach.
		{"a.example-user-content.com", 80, "169.254.169.254", false, ReasonMetadata},
		{"a.example-user-content.com", 80, "::ffff:169.254.169.254", false, ReasonMetadata},
		{"a.example-user-content.com", 80, "fd00:ec2::254", false, ReasonMetadata},
		{"a.example-user-content.com", 80, "169.254.170.2", false, ReasonMetadata},
		{"a.example-user-content.com", 80, "100.100.100.200", false, ReasonMetadata},
		{"a.example-user-content.com", 8080, "127.0.0.1", false, ReasonLoopback},
		{"a.example-user-content.com", 8080, "127.0.0.53", false, ReasonLoopback},
		{"a.example-user-content.com", 8080, "::1", false, ReasonLoopback},
		{"a.example-user-content.com", 5432, "10.0.0.5", false, ReasonPrivate},
		{"a.example-user-content.com", 5432, "192.168.1.1", false, ReasonPrivate},
		{"a.example-user-content.com", 5432, "100.64.1.1", false, ReasonPrivate},
		{"a.example-user-content.com", 5432, "fd12::1", false, ReasonPrivate},
		{"a.example-user-content.com", 80, "169.254.10.10", false, ReasonLinkLocal},
		{"a.example-user-content.com", 80, "fe80::2", false, ReasonLinkLocal},
		{"a.example-user-content.com", 80, "0.0.0.0", false, ReasonReserved},
		{"a.example-user-content.com", 80, "64:ff9b::a9fe:a9fe", false, ReasonReserved},
		// The host's own public addresses: a bridge or database on 0.0.0.0 / [::].
		{"a.example-user-content.com", 9464, "198.51.99.7", false, ReasonOwnAddress},
		{"a.example-user-content.com", 9464, "2a01:4f8::7", false, ReasonOwnAddress},
		{"x.example", 9464, "198.51.99.7", false, ReasonOwnAddress},
		{"198.51.99.7", 9464, "198.51.99.7", false, ReasonOwnAddress},
		{"[::ffff:198.51.99.7]", 9464, "::ffff:198.51.99.7", false, ReasonOwnAddress},
		// An exact name entry is no different.
		{"files.example", 443, "127.0.0.1", false, ReasonLoopback},
		{"files.example", 443, "198.51.99.7", false, ReasonOwnAddress},
		{"metadata.goog", 80, "169.254.169.254", false, ReasonMetadata},
		// An address or range entry allows, also when reached by name.
		{"db.internal", 5432, "10.1.2.3", true, ReasonAllowList},
		{"db.internal", 5432, "10.2.2.3", false, ReasonPrivate},
		{"a.example-user-content.com", 443, "2a01:4f8::8", true, ReasonAllowList},
		// Deny wins.
		{"bad.example-user-content.com", 443, "93.184.215.14", false, ReasonDenyList},
		// The model endpoint stays allowed.
		{"api.anthropic.com", 443, "160.79.104.10", true, ReasonModel},
	} {
		got := pol.Decide(tt.host, tt.port, netip.MustParseAddr(tt.ip), own)
		if got.Allow != tt.allow || got.Reason != tt.reason {
			t.Errorf("Decide(%s:%d → %s) = %+v, want allow=%t reason=%s", tt.host, tt.port, tt.ip, got, tt.allow, tt.reason)
		}
	}
	// An address entry may open one of the host's own addresses.
	listed, err := NewPolicy(Endpoint{"api.anthropic.com", 443}, []string{"198.51.99.7:8080"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v := listed.Decide("198.51.99.7", 8080, netip.MustParseAddr("198.51.99.7"), own); !v.Allow || v.Reason != ReasonAllowList {
		t.Errorf("own address listed by address: %+v", v)
	}
	if v := listed.Decide("198.51.99.7", 8081, netip.MustParseAddr("198.51.99.7"), own); v.Allow || v.Reason != ReasonOwnAddress {
		t.Errorf("own address on another port: %+v", v)
	}
	// A deny range wins over a name entry too (docs/network.md, "Limits").
	denyAll, err := NewPolicy(Endpoint{"api.anthropic.com", 443}, []string{"files.example"}, []string{"0.0.0.0/0", "::/0"})
	if err != nil {
		t.Fatal(err)
	}
	if v := denyAll.Decide("files.example", 443, netip.MustParseAddr("93.184.215.15"), own); v.Allow || v.Reason != ReasonDenyList {
		t.Errorf("a name allowed under deny-all: %+v", v)
	}
}

// TestOwnAddrsKeptCurrent: the host's addresses are read again once the
// set is older than its maximum age (an address added to an interface is
// refused from then on, one removed is no longer), not on every request;
// a failed read keeps the last set.
func TestOwnAddrsKeptCurrent(t *testing.T) {
	host := &fakeInterfaces{}
	host.set(nil, "198.51.99.7")
	now := time.Unix(1_700_000_000, 0)
	clock := func() time.Time { return now }
	own := NewOwnAddrs(host.list, time.Second, clock, nil)
	added, first := netip.MustParseAddr("203.0.114.9"), netip.MustParseAddr("198.51.99.7")

	if !own.Contains(first) || own.Contains(added) {
		t.Fatal("first read wrong")
	}
	host.set(nil, "198.51.99.7", "203.0.114.9")
	for range 100 {
		own.Contains(added)
	}
	if host.reads != 1 {
		t.Errorf("%d reads within the maximum age, want 1", host.reads)
	}
	now = now.Add(time.Second)
	if !own.Contains(added) {
		t.Error("an address added to an interface is not refused after the maximum age")
	}
	host.set(nil, "203.0.114.9")
	now = now.Add(2 * time.Second)
	if own.Contains(first) {
		t.Error("a removed address is still counted as the host's")
	}
	host.set(errors.New("netlink: busy"))
	now = now.Add(2 * time.Second)
	if !own.Contains(added) {
		t.Error("a failed read dropped the last set")
	}
	reads := host.reads
	own.Contains(added)
	if host.reads != reads {
		t.Error("a failed read is retried on every request")
	}
	now = now.Add(-time.Hour) // a clock stepped back reads again
	own.Contains(added)
	if host.reads != reads+1 {
		t.Error("a clock stepped back did not read again")
	}
}

// TestOwnAddrsReal: the real interface list holds the loopback addresses
// (every Linux host, also in a network namespace of its own).
func TestOwnAddrsReal(t *testing.T) {
	addrs, err := InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	own := NewOwnAddrs(nil, 0, nil, nil)
	if !own.Contains(netip.MustParseAddr("127.0.0.1")) {
		t.Errorf("127.0.0.1 is not among the host's addresses %v", addrs)
	}
	for _, a := range addrs {
		if !own.Contains(a) {
			t.Errorf("%s listed but not contained", a)
		}
	}
}

// TestProxyRefusesNameAllowedSpecialAddresses: through the proxy, a
// wildcard allow entry whose names resolve (fake resolver) to the metadata
// address, loopback, a private address or one of the host's own addresses
// is refused with 403 before any dial, for CONNECT and plain HTTP alike; a
// public answer is dialed.
func TestProxyRefusesNameAllowedSpecialAddresses(t *testing.T) {
	host := &fakeInterfaces{}
	host.set(nil, "198.51.99.7", "127.0.0.1")
	pol, err := NewPolicy(Endpoint{"api.anthropic.com", 443}, []string{"*.example-user-content.com"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := netip.MustParseAddr
	names := map[string][]netip.Addr{
		"meta.example-user-content.com":  {a("169.254.169.254")},
		"lo.example-user-content.com":    {a("127.0.0.1")},
		"lan.example-user-content.com":   {a("10.0.0.5")},
		"self.example-user-content.com":  {a("198.51.99.7")},
		"mixed.example-user-content.com": {a("127.0.0.1"), a("198.51.99.7")},
	}
	_, sock, rec := testGate(t, Config{OwnAddrs: NewOwnAddrs(host.list, time.Hour, nil, nil)}, pol, names, nil)
	want := map[string]string{"meta": ReasonMetadata, "lo": ReasonLoopback, "lan": ReasonPrivate, "self": ReasonOwnAddress, "mixed": ReasonLoopback}
	for _, name := range []string{"meta", "lo", "lan", "self", "mixed"} {
		target := name + ".example-user-content.com"
		c, _, status := connect(t, sock, target+":80")
		c.Close()
		if !strings.HasPrefix(status, "403") {
			t.Errorf("CONNECT %s: %s, want 403", target, status)
		}
		resp, err := viaProxy(sock).Get("http://" + target + "/latest/meta-data/")
		if err != nil {
			t.Fatalf("GET %s: %v", target, err)
		}
		resp.Body.Close()
		if resp.StatusCode != 403 {
			t.Errorf("GET %s: %s, want 403", target, resp.Status)
		}
	}
	events, _, dials := rec.snapshot()
	if len(dials) != 0 {
		t.Errorf("dialed %v", dials)
	}
	for _, ev := range events {
		name := ev.Host[:len(ev.Host)-len(".example-user-content.com")]
		if ev.Allow || ev.Reason != want[name] {
			t.Errorf("%s %s: allow=%t reason %s, want refused (%s)", ev.Method, ev.Host, ev.Allow, ev.Reason, want[name])
		}
	}
	if len(events) != 2*len(want) {
		t.Errorf("%d decisions, want %d", len(events), 2*len(want))
	}
}
