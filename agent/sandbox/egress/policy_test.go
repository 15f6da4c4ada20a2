package egress

import (
	"net/netip"
	"testing"

	"github.com/agentbridge/agentbridge/config/profile"
)

func TestModelEndpoint(t *testing.T) {
	for _, tt := range []struct {
		url  string
		want Endpoint
		bad  bool
	}{
		{"", Endpoint{"api.anthropic.com", 443}, false},
		{"https://api.anthropic.com", Endpoint{"api.anthropic.com", 443}, false},
		{"http://127.0.0.1:8080", Endpoint{"127.0.0.1", 8080}, false},
		{"http://LocalHost.:9000/v1", Endpoint{"localhost", 9000}, false},
		{"http://[::1]:7000", Endpoint{"::1", 7000}, false},
		{"http://gateway.internal", Endpoint{"gateway.internal", 80}, false},
		{"unix:///tmp/x", Endpoint{}, true},
		{"http://h:0", Endpoint{}, true},
	} {
		got, err := ModelEndpoint(tt.url)
		if (err != nil) != tt.bad || got != tt.want {
			t.Errorf("ModelEndpoint(%q) = %v, %v; want %v (error %t)", tt.url, got, err, tt.want, tt.bad)
		}
	}
}

// TestPolicyDecide: the default refuses every non-public class and the
// metadata names and addresses; the model endpoint is always allowed;
// allow opens a host or range (a name only to public addresses); deny wins
// over allow and over "public".
func TestPolicyDecide(t *testing.T) {
	model := Endpoint{"127.0.0.1", 8080}
	allow := []string{"127.0.0.1:5432", "db.internal", "*.corp.example", "10.1.0.0/16", "[fd00::5]:443", "169.254.169.254:80"}
	deny := []string{"evil.example", "203.0.114.0/24", "*.corp.example:22", "10.1.2.3", "api.anthropic.com"}
	pol, err := NewPolicy(model, allow, deny)
	if err != nil {
		t.Fatal(err)
	}
	ip := netip.MustParseAddr
	for _, tt := range []struct {
		host   string
		port   int
		ip     string
		allow  bool
		reason string
	}{
		// The model endpoint, also on loopback; but not another port.
		{"127.0.0.1", 8080, "127.0.0.1", true, ReasonModel},
		{"127.0.0.1", 8081, "127.0.0.1", false, ReasonLoopback},
		{"localhost", 8080, "127.0.0.1", false, ReasonLoopback}, // named differently: judged like anything else
		// Public by default.
		{"example.com", 443, "93.184.215.14", true, ReasonPublic},
		{"2606:2800::1", 443, "2606:2800::1", true, ReasonPublic},
		// Classes refused by default.
		{"localhost", 80, "127.0.0.1", false, ReasonLoopback},
		{"x", 80, "127.8.9.10", false, ReasonLoopback},
		{"x", 80, "::1", false, ReasonLoopback},
		{"x", 80, "::ffff:127.0.0.1", false, ReasonLoopback},
		{"x", 80, "10.0.0.1", false, ReasonPrivate},
		{"x", 80, "172.16.3.4", false, ReasonPrivate},
		{"x", 80, "192.168.1.1", false, ReasonPrivate},
		{"x", 80, "100.64.0.1", false, ReasonPrivate},
		{"x", 80, "fc00::1", false, ReasonPrivate},
		{"x", 80, "fe80::1", false, ReasonLinkLocal},
		{"x", 80, "169.254.1.1", false, ReasonLinkLocal},
		{"x", 1234, "169.254.169.254", false, ReasonMetadata},
		{"169.254.169.254", 443, "169.254.169.254", false, ReasonMetadata},
		{"x", 80, "fd00:ec2::254", false, ReasonMetadata},
		{"x", 80, "100.100.100.200", false, ReasonMetadata},
		{"metadata.google.internal", 80, "8.8.8.8", false, ReasonMetadata},
		{"Metadata.Google.Internal.", 80, "8.8.8.8", false, ReasonMetadata},
		{"x", 80, "0.0.0.0", false, ReasonReserved},
		{"x", 80, "0.1.2.3", false, ReasonReserved},
		{"x", 80, "::", false, ReasonReserved},
		{"x", 80, "224.0.0.1", false, ReasonReserved},
		{"x", 80, "255.255.255.255", false, ReasonReserved},
		{"x", 80, "64:ff9b::7f00:1", false, ReasonReserved}, // NAT64 of 127.0.0.1
		{"x", 80, "2002:7f00:1::1", false, ReasonReserved},  // 6to4 of 127.0.0.1
		{"x", 80, "198.18.0.1", false, ReasonReserved},
		// Allowed by the list: address with port, name, wildcard, range.
		{"127.0.0.1", 5432, "127.0.0.1", true, ReasonAllowList},
		{"127.0.0.1", 5433, "127.0.0.1", false, ReasonLoopback},
		{"db.internal", 3306, "93.184.215.20", true, ReasonAllowList},
		{"a.b.corp.example", 443, "93.184.215.21", true, ReasonAllowList},
		{"db.internal", 3306, "10.1.9.9", true, ReasonAllowList}, // the name's address is listed too
		// A name entry never opens what only an address entry may.
		{"db.internal", 3306, "10.9.9.9", false, ReasonPrivate},
		{"a.b.corp.example", 443, "192.168.0.2", false, ReasonPrivate},
		{"corp.example", 443, "192.168.0.2", false, ReasonPrivate}, // *.domain is the names below it
		{"x", 80, "10.1.200.1", true, ReasonAllowList},
		{"x", 443, "fd00::5", true, ReasonAllowList},
		{"x", 80, "169.254.169.254", true, ReasonAllowList}, // listed with its port
		{"x", 81, "169.254.169.254", false, ReasonMetadata},
		// Deny wins.
		{"evil.example", 443, "93.184.215.14", false, ReasonDenyList},
		{"x", 443, "203.0.114.7", false, ReasonDenyList},
		{"git.corp.example", 22, "192.168.0.2", false, ReasonDenyList},
		{"x", 80, "10.1.2.3", false, ReasonDenyList},
		// A deny entry does not cut the agent off its own model endpoint
		// (here api.anthropic.com is not the model: it is denied).
		{"api.anthropic.com", 443, "160.79.104.10", false, ReasonDenyList},
	} {
		got := pol.Decide(tt.host, tt.port, ip(tt.ip), nil)
		if got.Allow != tt.allow || got.Reason != tt.reason {
			t.Errorf("Decide(%s:%d → %s) = %+v, want allow=%t reason=%s", tt.host, tt.port, tt.ip, got, tt.allow, tt.reason)
		}
	}
	// The default model endpoint is allowed even when denied.
	def, err := NewPolicy(Endpoint{"api.anthropic.com", 443}, nil, []string{"api.anthropic.com", "0.0.0.0/0", "::/0"})
	if err != nil {
		t.Fatal(err)
	}
	if v := def.Decide("api.anthropic.com", 443, ip("160.79.104.10"), nil); !v.Allow || v.Reason != ReasonModel {
		t.Errorf("model endpoint under deny-all: %+v", v)
	}
	if v := def.Decide("example.com", 443, ip("93.184.215.14"), nil); v.Allow {
		t.Errorf("deny 0.0.0.0/0 let example.com through: %+v", v)
	}
}

func TestPolicyDecideName(t *testing.T) {
	pol, err := NewPolicy(Endpoint{"api.anthropic.com", 443}, []string{"metadata.goog"}, []string{"*.evil.example"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		host   string
		allow  bool
		reason string
	}{
		{"api.anthropic.com", true, ReasonModel},
		{"x.evil.example", false, ReasonDenyList},
		{"metadata.google.internal", false, ReasonMetadata},
		{"metadata", false, ReasonMetadata},
		{"metadata.goog", true, ReasonAllowList},
		{"example.com", true, ReasonPublic}, // not final: each address is judged
	} {
		if got := pol.DecideName(tt.host, 443); got.Allow != tt.allow || got.Reason != tt.reason {
			t.Errorf("DecideName(%s) = %+v, want allow=%t reason=%s", tt.host, got, tt.allow, tt.reason)
		}
	}
}

// TestRuleForms: the proxy and check-config accept and refuse the same
// entries.
func TestRuleForms(t *testing.T) {
	for _, tt := range []struct {
		s  string
		ok bool
	}{
		{"example.com", true}, {"example.com:443", true}, {"*.example.com", true}, {"*.example.com:8443", true},
		{"10.0.0.0/8", true}, {"10.0.0.0/8:5432", true}, {"127.0.0.1", true}, {"127.0.0.1:80", true},
		{"::1", true}, {"[::1]", true}, {"[::1]:8080", true}, {"fc00::/7", true}, {"[fc00::/7]:80", true},
		{"localhost.", true},
		{"", false}, {" ", false}, {"http://example.com", false}, {"example.com:0", false},
		{"example.com:99999", false}, {"example.com:http", false}, {"a b", false}, {"user@host", false},
		{"*", false}, {"*.", false}, {"ex*ample.com", false}, {"host/path", false}, {"a,b", false},
	} {
		_, perr := parseRule(tt.s)
		cerr := profile.CheckHostPattern(tt.s)
		if (perr == nil) != tt.ok {
			t.Errorf("parseRule(%q) = %v, want ok=%t", tt.s, perr, tt.ok)
		}
		if (cerr == nil) != tt.ok {
			t.Errorf("profile.CheckHostPattern(%q) = %v, want ok=%t", tt.s, cerr, tt.ok)
		}
	}
}
