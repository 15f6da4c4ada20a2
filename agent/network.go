package agent

import (
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/agentbridge/agentbridge/agent/sandbox"
	"github.com/agentbridge/agentbridge/agent/sandbox/egress"
)

// Network modes (Options.Network.Mode), as in the config's agents.*.network.mode.
const (
	NetworkHost  = "host"  // the host's network ("" too)
	NetworkProxy = "proxy" // own network namespace, out only through the egress proxy
	NetworkNone  = "none"  // own network namespace, no way out
)

// Network is how an agent process reaches the network.
//
// With Mode NetworkProxy the sandbox gets its own network namespace and
// Start opens a gate on Proxy for the process (a Unix socket in a fresh
// directory shown read-only in the sandbox, judged by Policy); the CLI
// runs behind the forwarder (Forwarder, the bridge binary, run with
// egress.ForwarderCommand), and HTTPS_PROXY, HTTP_PROXY, https_proxy,
// http_proxy point at it while NO_PROXY and no_proxy are removed (nothing
// reachable bypasses the proxy). With NetworkNone the namespace has no way
// out at all, not even to the model. Both need a sandbox that can unshare
// the network (bwrap): Start refuses them with sandbox.None.
type Network struct {
	Mode      string
	Proxy     *egress.Proxy
	Policy    *egress.Policy
	Profile   string // names the agent in the proxy's logs and events
	Forwarder string // absolute path of the bridge binary
}

// proxied reports whether n routes the process through the proxy.
func (n Network) proxied() bool { return n.Mode == NetworkProxy }

// isolated reports whether n needs its own network namespace.
func (n Network) isolated() bool { return n.Mode == NetworkProxy || n.Mode == NetworkNone }

// check reports options the sandbox cannot honour.
func (n Network) check(sb sandbox.Sandbox) error {
	switch n.Mode {
	case "", NetworkHost:
		return nil
	case NetworkProxy:
		if n.Proxy == nil || n.Policy == nil || !filepath.IsAbs(n.Forwarder) {
			return fmt.Errorf("network mode proxy needs a proxy, a policy and the forwarder's absolute path")
		}
	case NetworkNone:
	default:
		return fmt.Errorf("unknown network mode %q", n.Mode)
	}
	if _, ok := sb.(sandbox.None); ok {
		return fmt.Errorf("network mode %s needs a sandbox (sandbox none shares the host's network)", n.Mode)
	}
	return nil
}

// egressLink is one process's gate and the directory holding its socket.
type egressLink struct {
	gate   *egress.Gate
	dir    string
	socket string
}

// openEgress opens the process's gate when opts route it through the
// proxy (nil otherwise).
func openEgress(opts Options, log *slog.Logger) (*egressLink, error) {
	if err := opts.Network.check(opts.Sandbox); err != nil {
		return nil, err
	}
	if !opts.Network.proxied() {
		return nil, nil
	}
	dir, err := os.MkdirTemp("", "agentbridge-net-")
	if err != nil {
		return nil, fmt.Errorf("egress socket directory: %w", err)
	}
	socket := filepath.Join(dir, "proxy.sock")
	g, err := opts.Network.Proxy.Attach(socket, opts.Network.Policy, opts.Network.Profile, opts.SessionID)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	log.Debug("agent network: through the egress proxy", "session", opts.SessionID, "socket", socket)
	return &egressLink{gate: g, dir: dir, socket: socket}, nil
}

// close closes the gate and removes its directory (nil-safe).
func (l *egressLink) close() {
	if l == nil {
		return
	}
	l.gate.Close()
	_ = os.RemoveAll(l.dir)
}

// networkSpec adds opts.Network to spec: its own network namespace, and
// with link the forwarder in front of the command, the socket's
// directory and the forwarder's binary read-only.
func networkSpec(opts Options, link *egressLink, spec sandbox.Spec) sandbox.Spec {
	if !opts.Network.isolated() {
		return spec
	}
	spec.UnshareNet = true
	if link != nil {
		spec.Argv = egress.ForwarderArgs(opts.Network.Forwarder, link.socket, spec.Argv)
		spec.ReadOnly = append(append([]string(nil), spec.ReadOnly...), link.dir, opts.Network.Forwarder)
	}
	return spec
}

// networkEnv sets the proxy variables in env (KEY=VALUE entries) when link
// is set, and drops any NO_PROXY — but, with ownLoopback (an agent of kind
// acp), the loopback names of a NO_PROXY the profile set (localhost,
// 127.0.0.1, ::1), which then mean the sandbox's own loopback: OpenCode
// talks to a server of its own there through a fetch that follows
// HTTP_PROXY. This opens nothing: the process has its own network
// namespace, whose loopback holds only the forwarder and the agent's own
// processes, and a connection that skips the proxy reaches nothing else
// (no route); only the loopback of the namespace, never the host's.
func networkEnv(env []string, link *egressLink, ownLoopback bool) []string {
	if link == nil {
		return env
	}
	out := make([]string, 0, len(env)+4)
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		switch strings.ToUpper(k) {
		case "NO_PROXY":
			if keep := loopbackNames(v); ownLoopback && keep != "" {
				out = append(out, k+"="+keep)
			}
			continue
		case "HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY":
			continue
		}
		out = append(out, kv)
	}
	for _, k := range []string{"HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy"} {
		out = append(out, k+"="+egress.ProxyURL)
	}
	sort.Strings(out)
	return out
}

// AdmitWarmUp lets s reach the warm-up stand-in at addr through its gate
// until revoke is called; a no-op without a gate.
func (s *Session) AdmitWarmUp(addr string) (revoke func(), err error) {
	if s.egress == nil {
		return func() {}, nil
	}
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return nil, fmt.Errorf("warm-up stand-in address %q: %w", addr, err)
	}
	return s.egress.gate.AdmitWarmUp(ap), nil
}

// loopbackNames is the loopback entries of a NO_PROXY list (localhost,
// 127.0.0.1, ::1, [::1]), comma-separated; "" when it has none.
func loopbackNames(list string) string {
	var keep []string
	for _, e := range strings.Split(list, ",") {
		switch e = strings.TrimSpace(e); e {
		case "localhost", "127.0.0.1", "::1", "[::1]":
			keep = append(keep, e)
		}
	}
	return strings.Join(keep, ",")
}
