package egress

import (
	"net/netip"
	"testing"
)

// TestClassifySpecialIPv6: each special IPv6 prefix that may carry any
// IPv4 address or is otherwise not public is refused as reserved — its
// first address, one embedding a public IPv4 address and its last — while
// the addresses just outside it are public.
func TestClassifySpecialIPv6(t *testing.T) {
	for _, tt := range []struct {
		prefix string
		inside []string
		after  string // the first address after the prefix: public
	}{
		{"64:ff9b:1::/48 (local NAT64)", []string{"64:ff9b:1::", "64:ff9b:1::808:808", "64:ff9b:1:ffff:ffff:ffff:ffff:ffff"}, "64:ff9b:2::1"},
		{"2001::/32 (Teredo)", []string{"2001::", "2001:0:4136:e378:8000:63bf:f7f7:f7f7", "2001:0:ffff:ffff:ffff:ffff:ffff:ffff"}, "2001:1::1"},
		{"::ffff:0:0:0/96 (IPv4-translated)", []string{"::ffff:0:0:0", "::ffff:0:808:808", "::ffff:0:ffff:ffff"}, "::1:0:0:0:1"},
		{"::/96 (IPv4-compatible)", []string{"::2", "::808:808", "::ffff:ffff"}, "::1:0:0"},
		{"fec0::/10 (site-local)", []string{"fec0::", "fec0::1", "feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"}, "2606:2800::1"},
		{"64:ff9b::/96 (NAT64)", []string{"64:ff9b::", "64:ff9b::808:808", "64:ff9b::ffff:ffff"}, "64:ff9b::1:0:0"},
		{"2002::/16 (6to4)", []string{"2002::", "2002:808:808::1", "2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff"}, "2003::1"},
	} {
		for _, s := range tt.inside {
			if got := Classify(netip.MustParseAddr(s)); got != ReasonReserved {
				t.Errorf("%s: Classify(%s) = %q, want %q", tt.prefix, s, got, ReasonReserved)
			}
		}
		if got := Classify(netip.MustParseAddr(tt.after)); got != "" {
			t.Errorf("%s: Classify(%s), outside it, = %q, want public", tt.prefix, tt.after, got)
		}
	}
}

// TestMappedRules: allow and deny entries written as IPv4-mapped IPv6
// (an address, a range, with a port) match the IPv4 addresses they name,
// reached as IPv4 or as mapped IPv6, and nothing else.
func TestMappedRules(t *testing.T) {
	allow := []string{"::ffff:10.1.0.0/112", "[::ffff:192.168.1.5]:5432", "::ffff:172.16.0.9"}
	deny := []string{"::ffff:93.184.215.0/120", "[::ffff:8.8.8.8]:53"}
	pol, err := NewPolicy(Endpoint{"api.anthropic.com", 443}, allow, deny)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		port   int
		ip     string
		allow  bool
		reason string
	}{
		{80, "10.1.2.3", true, ReasonAllowList},
		{80, "::ffff:10.1.2.3", true, ReasonAllowList},
		{80, "10.1.255.255", true, ReasonAllowList},
		{80, "10.2.0.1", false, ReasonPrivate},
		{5432, "192.168.1.5", true, ReasonAllowList},
		{5433, "192.168.1.5", false, ReasonPrivate},
		{5432, "192.168.1.6", false, ReasonPrivate},
		{22, "172.16.0.9", true, ReasonAllowList},
		{22, "172.16.0.10", false, ReasonPrivate},
		{443, "93.184.215.14", false, ReasonDenyList},
		{443, "::ffff:93.184.215.14", false, ReasonDenyList},
		{443, "93.184.216.14", true, ReasonPublic},
		{53, "8.8.8.8", false, ReasonDenyList},
		{443, "8.8.8.8", true, ReasonPublic},
	} {
		if got := pol.Decide("x", tt.port, netip.MustParseAddr(tt.ip), nil); got.Allow != tt.allow || got.Reason != tt.reason {
			t.Errorf("Decide(x:%d → %s) = %+v, want allow=%t reason=%s", tt.port, tt.ip, got, tt.allow, tt.reason)
		}
	}
}

// TestWarmUpOneAddressAndPort: the warm-up exception admits the stand-in's
// address on its port only — not another port of that address, nor that
// port of another address — also when admitted as mapped IPv6, and
// nothing once revoked.
func TestWarmUpOneAddressAndPort(t *testing.T) {
	pol, _ := NewPolicy(Endpoint{"api.anthropic.com", 443}, nil, nil)
	g, _, _ := testGate(t, Config{}, pol, nil, nil)
	for _, admitted := range []string{"127.0.0.1:4000", "[::ffff:127.0.0.1]:4000"} {
		revoke := g.AdmitWarmUp(netip.MustParseAddrPort(admitted))
		for _, tt := range []struct {
			ip    string
			port  int
			allow bool
		}{
			{"127.0.0.1", 4000, true},
			{"127.0.0.1", 4001, false},
			{"127.0.0.1", 3999, false},
			{"127.0.0.1", 443, false},
			{"127.0.0.2", 4000, false},
			{"::1", 4000, false},
		} {
			v := g.judge("127.0.0.1", tt.port, netip.MustParseAddr(tt.ip))
			if v.Allow != tt.allow || (tt.allow && v.Reason != ReasonWarmUp) {
				t.Errorf("admitted %s: judge(%s:%d) = %+v, want allow=%t", admitted, tt.ip, tt.port, v, tt.allow)
			}
		}
		revoke()
		if v := g.judge("127.0.0.1", 4000, netip.MustParseAddr("127.0.0.1")); v.Allow {
			t.Errorf("admitted %s, revoked: judge = %+v", admitted, v)
		}
	}
}
