package profile

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"

	"github.com/agentbridge/agentbridge/config/decode"
)

// CheckHostPattern reports whether h is a usable network.allow/deny entry:
// a host name ("example.com"), a wildcard domain ("*.example.com": names
// below example.com, not example.com itself), an IP address, a CIDR range
// ("10.0.0.0/8"), any of them with ":port" (IPv6 addresses in brackets for
// a port: "[::1]:8080"). The egress proxy (agent/sandbox/egress) parses
// the same forms.
func CheckHostPattern(h string) error {
	s := strings.TrimSpace(h)
	bad := func(why string) error { return fmt.Errorf("bad host %q: %s", h, why) }
	const forms = "want a host name, *.domain, an IP address or a CIDR range, optionally with :port"
	switch {
	case s == "":
		return fmt.Errorf("empty host")
	case strings.Contains(s, "://"):
		return bad("give the host (and :port), not a URL")
	case strings.ContainsAny(s, " \t\\@?#,;"):
		return bad(forms)
	}
	host := s
	if hh, p, err := net.SplitHostPort(s); err == nil {
		if port, err := strconv.Atoi(p); err != nil || port <= 0 || port > 65535 {
			return bad("the port must be 1-65535")
		}
		host = hh
	} else if strings.Count(s, ":") == 1 && !strings.Contains(s, "/") {
		return bad("the port must be 1-65535")
	}
	host = strings.Trim(host, "[]")
	if _, err := netip.ParsePrefix(host); err == nil {
		return nil
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return nil
	}
	name := strings.TrimSuffix(strings.TrimPrefix(host, "*."), ".")
	if name == "" || strings.ContainsAny(name, "*/[]:") {
		return bad(forms)
	}
	return nil
}

// writeNetworkSummary adds an agent profile's network line to a Summary.
func writeNetworkSummary(b *strings.Builder, a *Agent) {
	switch {
	case a.Network.Mode == NetworkProxy && a.Sandbox == SandboxNone:
		fmt.Fprintf(b, "    network: %s NOT ENFORCED (sandbox none: the agent shares the host's network)\n", a.Network.Mode)
	case a.Network.Mode == NetworkProxy:
		fmt.Fprintf(b, "    network: proxy (the model endpoint and public hosts; loopback, private, metadata and the host's own addresses refused) allow=%s deny=%s\n",
			decode.ListOr(a.Network.Allow, "none"), decode.ListOr(a.Network.Deny, "none"))
	case a.Network.Mode == NetworkNone:
		b.WriteString("    network: none (WARNING: no network at all, not even the model API: the agent cannot answer)\n")
	default:
		fmt.Fprintf(b, "    network: %s (the host's network, no egress control)\n", a.Network.Mode)
	}
}
