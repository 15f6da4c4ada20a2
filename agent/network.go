package agent

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"path/filepath"
	"sort"
	"strings"

	"github.com/agentbridge/agentbridge/agent/sandbox"
	"github.com/agentbridge/agentbridge/agent/sandbox/egress"
	"github.com/agentbridge/agentbridge/agent/sandbox/egress/launch"
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
// the CLI starts behind the launcher (Launcher, the bridge binary, run with
// launch.Command): it opens the proxy's listener on the
// namespace's loopback, hands it to the bridge and becomes the CLI; the
// bridge serves the process's gate on Proxy there, judged by Policy.
// HTTPS_PROXY, HTTP_PROXY, https_proxy, http_proxy point at it while
// NO_PROXY and no_proxy are removed, but for an ACP agent's loopback names
// (networkEnv): nothing reachable bypasses the proxy. With NetworkNone the
// namespace has no way out at all, not even to the model. Both need a sandbox that can unshare
// the network (bwrap): Start refuses them with sandbox.None.
type Network struct {
	Mode     string
	Proxy    *egress.Proxy
	Policy   *egress.Policy
	Profile  string // names the agent in the proxy's logs and events
	Launcher string // absolute path of the bridge binary
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
		if n.Proxy == nil || n.Policy == nil || !filepath.IsAbs(n.Launcher) {
			return fmt.Errorf("network mode proxy needs a proxy, a policy and the launcher's absolute path")
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

// egressLink is one process's way out: the hand-off that brings the
// listener its launcher opened in the sandbox, then the gate served on it.
type egressLink struct {
	handOff *egress.HandOff
	ready   chan struct{} // closed when the hand-off ended, with gate set or not
	gate    *egress.Gate  // set before ready closes; nil when the hand-off failed
	started bool          // serve runs (or ran): close waits for ready
}

// openEgress prepares the process's hand-off when opts route it through
// the proxy (nil otherwise).
func openEgress(opts Options) (*egressLink, error) {
	if err := opts.Network.check(opts.Sandbox); err != nil {
		return nil, err
	}
	if !opts.Network.proxied() {
		return nil, nil
	}
	h, err := egress.NewHandOff()
	if err != nil {
		return nil, err
	}
	return &egressLink{handOff: h, ready: make(chan struct{})}, nil
}

// startedCLI is called once the process started (or failed to): with ok,
// the gate is served in the background as soon as the launcher hands its
// listener over. close ends it.
func (l *egressLink) startedCLI(ok bool, n Network, session string, log *slog.Logger) {
	if l == nil {
		return
	}
	l.handOff.Started()
	if !ok {
		return
	}
	l.started = true
	go l.serve(n, session, log)
}

// serve waits for the launcher's listener and serves the gate on it.
func (l *egressLink) serve(n Network, session string, log *slog.Logger) {
	defer close(l.ready)
	ln, err := l.handOff.Receive()
	if err == nil {
		if l.gate, err = n.Proxy.Serve(ln, n.Policy, n.Profile, session); err != nil {
			ln.Close()
		}
	}
	switch {
	case err == nil:
		log.Debug("agent network: through the egress proxy", "session", session)
	case !errors.Is(err, net.ErrClosed): // not stopped by close
		log.Warn("agent network: the egress gate is not open, the agent has no way out", "session", session, "err", err)
	}
}

// waitGate returns the gate once the hand-off ended, or an error when it
// failed.
func (l *egressLink) waitGate() (*egress.Gate, error) {
	if !l.started {
		return nil, errors.New("agent network: the process never started")
	}
	<-l.ready
	if l.gate == nil {
		return nil, errors.New("agent network: no egress gate (the sandbox's launcher handed no listener over)")
	}
	return l.gate, nil
}

// close ends the hand-off and closes the gate (nil-safe).
func (l *egressLink) close() {
	if l == nil {
		return
	}
	l.handOff.Close()
	if !l.started {
		return
	}
	<-l.ready
	if l.gate != nil {
		l.gate.Close()
	}
}

// networkSpec adds opts.Network to spec: its own network namespace, and
// with link the launcher in front of the command, the launcher's binary
// read-only.
func networkSpec(opts Options, link *egressLink, spec sandbox.Spec) sandbox.Spec {
	if !opts.Network.isolated() {
		return spec
	}
	spec.UnshareNet = true
	if link != nil {
		spec.Argv = launch.Args(opts.Network.Launcher, spec.Argv)
		spec.ReadOnly = append(append([]string(nil), spec.ReadOnly...), opts.Network.Launcher)
	}
	return spec
}

// networkEnv sets the proxy variables in env (KEY=VALUE entries) when link
// is set, and drops any NO_PROXY — but, with ownLoopback (an agent of kind
// acp), the loopback names of a NO_PROXY the profile set (localhost,
// 127.0.0.1, ::1), which then mean the sandbox's own loopback: OpenCode
// talks to a server of its own there through a fetch that follows
// HTTP_PROXY. This opens nothing: the process has its own network
// namespace, whose loopback holds only the proxy's listener (the bridge's,
// handed over by the launcher) and the agent's own processes, and a connection that skips the proxy reaches nothing else
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
	g, err := s.egress.waitGate()
	if err != nil {
		return nil, err
	}
	return g.AdmitWarmUp(ap), nil
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
