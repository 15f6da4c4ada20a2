package egress

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// Reasons of a decision, the metric's and the log's "reason" (a fixed set).
const (
	ReasonModel      = "model"       // the profile's model endpoint: always allowed
	ReasonWarmUp     = "warm-up"     // the bridge's warm-up stand-in, during this agent's warm-up turn
	ReasonAllowList  = "allow-list"  // matched network.allow
	ReasonPublic     = "public"      // a public address, allowed by default
	ReasonDenyList   = "deny-list"   // matched network.deny
	ReasonLoopback   = "loopback"    // 127.0.0.0/8, ::1
	ReasonOwnAddress = "own-address" // one of the host's own interface addresses (OwnAddrs)
	ReasonPrivate    = "private"     // RFC 1918, 100.64.0.0/10, fc00::/7
	ReasonLinkLocal  = "link-local"  // 169.254.0.0/16, fe80::/10
	ReasonMetadata   = "metadata"    // a cloud's instance metadata address or name
	ReasonReserved   = "reserved"    // unspecified, multicast, documentation, benchmarking, NAT64, …
	ReasonUnresolved = "unresolved"  // the name did not resolve
	ReasonBadRequest = "bad-request" // not a proxy request this proxy serves
	ReasonBusy       = "busy"        // the agent has too many connections open
)

// Endpoint is a host (a lower-case name or an IP address) and a port.
type Endpoint struct {
	Host string
	Port int
}

func (e Endpoint) String() string { return net.JoinHostPort(e.Host, strconv.Itoa(e.Port)) }

// ModelEndpoint is where the CLI sends its model requests for baseURL (an
// ANTHROPIC_BASE_URL; "" = the API's default, api.anthropic.com:443).
func ModelEndpoint(baseURL string) (Endpoint, error) {
	if baseURL == "" {
		return Endpoint{Host: "api.anthropic.com", Port: 443}, nil
	}
	u, err := url.Parse(baseURL)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return Endpoint{}, fmt.Errorf("ANTHROPIC_BASE_URL %q is not an http(s) URL", baseURL)
	}
	port := 443
	if u.Scheme == "http" {
		port = 80
	}
	if p := u.Port(); p != "" {
		if port, err = strconv.Atoi(p); err != nil || port <= 0 || port > 65535 {
			return Endpoint{}, fmt.Errorf("ANTHROPIC_BASE_URL %q: bad port", baseURL)
		}
	}
	return Endpoint{Host: normalHost(u.Hostname()), Port: port}, nil
}

// normalHost lower-cases a host name and drops a trailing dot; an IP
// address is written the canonical way (IPv4-mapped IPv6 as IPv4).
func normalHost(h string) string {
	h = strings.TrimSuffix(strings.ToLower(strings.Trim(h, "[]")), ".")
	if ip, err := netip.ParseAddr(h); err == nil {
		return ip.Unmap().String()
	}
	return h
}

// rule is one network.allow or network.deny entry.
type rule struct {
	name     string       // a lower-case host name ("" for an address rule)
	wildcard bool         // "*.name": any name below name (not name itself)
	prefix   netip.Prefix // an address or range (when name is "")
	port     int          // 0 = any port
}

// parseRule parses "host", "*.domain", "1.2.3.4", "10.0.0.0/8", "[::1]",
// "fc00::/7", each optionally with ":port" (IPv6 addresses in brackets
// then: "[::1]:8080").
func parseRule(s string) (rule, error) {
	var r rule
	s = strings.TrimSpace(s)
	bad := func(why string) (rule, error) {
		return rule{}, fmt.Errorf("bad host %q: %s", s, why)
	}
	if s == "" {
		return bad("empty")
	}
	if strings.Contains(s, "://") || strings.ContainsAny(s, " \t\\@?#,;") {
		return bad("want a host name, *.domain, an IP address or a CIDR range, optionally with :port")
	}
	host := s
	if h, p, err := net.SplitHostPort(s); err == nil {
		port, perr := strconv.Atoi(p)
		if perr != nil || port <= 0 || port > 65535 {
			return bad("the port must be 1-65535")
		}
		host, r.port = h, port
	} else if strings.Count(s, ":") == 1 && !strings.Contains(s, "/") {
		return bad("the port must be 1-65535")
	}
	host = strings.Trim(host, "[]")
	if p, err := netip.ParsePrefix(host); err == nil {
		if p.Addr().Is4In6() {
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		r.prefix = p.Masked()
		return r, nil
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		ip = ip.Unmap()
		r.prefix = netip.PrefixFrom(ip, ip.BitLen())
		return r, nil
	}
	name, wild := strings.CutPrefix(host, "*.")
	name = normalHost(name)
	if name == "" || strings.ContainsAny(name, "*/[]:") {
		return bad("want a host name, *.domain, an IP address or a CIDR range, optionally with :port")
	}
	r.name, r.wildcard = name, wild
	return r, nil
}

// matches reports whether a connection to host:port going to ip matches r.
// host is normalized; ip may be invalid (not resolved yet): address rules
// then match only when host is an address.
func (r rule) matches(host string, port int, ip netip.Addr) bool {
	if r.port != 0 && r.port != port {
		return false
	}
	if r.name != "" {
		if r.wildcard {
			return strings.HasSuffix(host, "."+r.name)
		}
		return host == r.name
	}
	if !ip.IsValid() {
		ip, _ = netip.ParseAddr(host)
	}
	return ip.IsValid() && r.prefix.Contains(ip.Unmap())
}

// Policy decides where one agent profile's connections may go. It is
// immutable and safe for concurrent use.
//
// In order: the profile's model endpoint (host and port as the agent
// names them) is always allowed; then a deny entry refuses; an allow
// entry by address or range that holds the address allows; a cloud
// metadata name is refused unless an allow entry names it; any loopback,
// private, link-local, metadata or otherwise special address, and any of
// the host's own interface addresses, is refused — also when an allow
// entry by name matches, since anyone who controls a name's DNS can point
// it there (*.example-user-content.com at 169.254.169.254); then an allow
// entry by name allows; anything else (a public address) is allowed.
type Policy struct {
	model       Endpoint
	allow, deny []rule
}

// NewPolicy compiles network.allow and network.deny; model is the
// profile's model endpoint (ModelEndpoint).
func NewPolicy(model Endpoint, allow, deny []string) (*Policy, error) {
	p := &Policy{model: Endpoint{Host: normalHost(model.Host), Port: model.Port}}
	for _, l := range []struct {
		dst  *[]rule
		list []string
		key  string
	}{{&p.allow, allow, "allow"}, {&p.deny, deny, "deny"}} {
		for _, s := range l.list {
			r, err := parseRule(s)
			if err != nil {
				return nil, fmt.Errorf("network.%s: %w", l.key, err)
			}
			*l.dst = append(*l.dst, r)
		}
	}
	return p, nil
}

// Model is the endpoint the policy always allows.
func (p *Policy) Model() Endpoint { return p.model }

// Verdict is a decision and why.
type Verdict struct {
	Allow  bool
	Reason string // one of the Reason constants
}

// DecideName judges host:port before it is resolved. A refusal is final
// (a deny entry naming it, or a metadata name); an allowance is not: each
// resolved address must then pass Decide.
func (p *Policy) DecideName(host string, port int) Verdict {
	host = normalHost(host)
	switch {
	case p.isModel(host, port):
		return Verdict{true, ReasonModel}
	case matchAny(p.deny, host, port, netip.Addr{}):
		return Verdict{false, ReasonDenyList}
	case matchAny(p.allow, host, port, netip.Addr{}):
		return Verdict{true, ReasonAllowList}
	case metadataName(host):
		return Verdict{false, ReasonMetadata}
	}
	return Verdict{true, ReasonPublic}
}

// Decide judges a connection to host:port (as the agent named it) going to
// the resolved address ip. own holds the host's own interface addresses
// (nil: none known).
func (p *Policy) Decide(host string, port int, ip netip.Addr, own *OwnAddrs) Verdict {
	host, ip = normalHost(host), ip.Unmap()
	switch {
	case p.isModel(host, port):
		return Verdict{true, ReasonModel}
	case matchAny(p.deny, host, port, ip):
		return Verdict{false, ReasonDenyList}
	case matchAddress(p.allow, port, ip):
		return Verdict{true, ReasonAllowList}
	}
	byName := matchName(p.allow, host, port)
	if !byName && metadataName(host) {
		return Verdict{false, ReasonMetadata}
	}
	if c := Classify(ip); c != "" {
		return Verdict{false, c}
	}
	if own.Contains(ip) {
		return Verdict{false, ReasonOwnAddress}
	}
	if byName {
		return Verdict{true, ReasonAllowList}
	}
	return Verdict{true, ReasonPublic}
}

// matchAddress reports whether an address or range entry of rules holds
// ip on port.
func matchAddress(rules []rule, port int, ip netip.Addr) bool {
	for _, r := range rules {
		if r.name == "" && r.matches("", port, ip) {
			return true
		}
	}
	return false
}

// matchName reports whether a name or wildcard entry of rules matches
// host:port.
func matchName(rules []rule, host string, port int) bool {
	for _, r := range rules {
		if r.name != "" && r.matches(host, port, netip.Addr{}) {
			return true
		}
	}
	return false
}

func (p *Policy) isModel(host string, port int) bool {
	return p.model.Host != "" && host == p.model.Host && port == p.model.Port
}

func matchAny(rules []rule, host string, port int, ip netip.Addr) bool {
	for _, r := range rules {
		if r.matches(host, port, ip) {
			return true
		}
	}
	return false
}

// metadataNames are the instance metadata services' host names.
var metadataNames = []string{"metadata.google.internal", "metadata.goog", "metadata", "metadata.azure.internal", "instance-data", "instance-data.ec2.internal"}

// metadataAddrs are the instance metadata services' addresses: AWS, GCP,
// Azure, OpenStack, DigitalOcean, Oracle (169.254.169.254), AWS IPv6
// (fd00:ec2::254), AWS ECS tasks (169.254.170.2), Alibaba (100.100.100.200).
var metadataAddrs = []netip.Addr{
	netip.MustParseAddr("169.254.169.254"), netip.MustParseAddr("fd00:ec2::254"),
	netip.MustParseAddr("169.254.170.2"), netip.MustParseAddr("100.100.100.200"),
}

func metadataName(host string) bool {
	for _, n := range metadataNames {
		if host == n {
			return true
		}
	}
	return false
}

// reservedPrefixes are special ranges netip's predicates do not cover.
var reservedPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"), // documentation
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, broadcast
	netip.MustParsePrefix("::/128"),          // unspecified
	netip.MustParsePrefix("64:ff9b::/96"),    // NAT64: may embed any IPv4 address
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local NAT64
	netip.MustParsePrefix("100::/64"),        // discard
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("2002::/16"),       // 6to4: may embed any IPv4 address
	netip.MustParsePrefix("2001::/32"),       // Teredo: may embed any IPv4 address
	netip.MustParsePrefix("::ffff:0:0:0/96"), // IPv4-translated
	netip.MustParsePrefix("::/96"),           // IPv4-compatible (deprecated)
	netip.MustParsePrefix("fec0::/10"),       // site-local (deprecated)
	netip.MustParsePrefix("255.255.255.255/32"),
}

// cgnat is 100.64.0.0/10, shared address space: private for our purpose.
var cgnat = netip.MustParsePrefix("100.64.0.0/10")

// Classify says why ip is not a public address ("" = it is): one of
// ReasonLoopback, ReasonPrivate, ReasonLinkLocal, ReasonMetadata,
// ReasonReserved. An invalid address is reserved.
func Classify(ip netip.Addr) string {
	ip = ip.Unmap()
	switch {
	case !ip.IsValid():
		return ReasonReserved
	case isMetadataAddr(ip):
		return ReasonMetadata
	case ip.IsLoopback():
		return ReasonLoopback
	case ip.IsPrivate() || cgnat.Contains(ip):
		return ReasonPrivate
	case ip.IsLinkLocalUnicast():
		return ReasonLinkLocal
	case ip.IsUnspecified() || ip.IsMulticast() || ip.IsLinkLocalMulticast() || ip.IsInterfaceLocalMulticast():
		return ReasonReserved
	}
	for _, p := range reservedPrefixes {
		if p.Contains(ip) {
			return ReasonReserved
		}
	}
	return ""
}

func isMetadataAddr(ip netip.Addr) bool {
	for _, m := range metadataAddrs {
		if ip == m {
			return true
		}
	}
	return false
}
