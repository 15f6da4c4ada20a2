package app

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentbridge/agentbridge/agent"
	"github.com/agentbridge/agentbridge/agent/sandbox"
	"github.com/agentbridge/agentbridge/agent/sandbox/egress"
	"github.com/agentbridge/agentbridge/bridges/core/agents"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/profile"
)

// containment builds how each agent profile's agents are confined: a
// sandbox per profile (agents.*.sandbox), checked once per kind, so that a
// machine that cannot confine agents fails with what to do; and its
// network (agents.*.network): one egress proxy, made when a profile first
// needs it, for the profiles in mode proxy, whose decisions are counted in
// agentbridge_egress_total. It builds at start and again for each
// reloaded config: a profile whose sandbox, network and model endpoint
// did not change keeps what it had (its warm spares stay valid). Close it
// after the agents stopped. Safe for concurrent use.
type containment struct {
	logger    *slog.Logger
	decisions *prometheus.CounterVec

	mu         sync.Mutex
	checked    map[string]error // sandbox.Sandbox.Check by sandbox name
	netChecked map[string]error // CheckNetwork by sandbox name
	proxy      *egress.Proxy
	built      map[string]builtProfile // by profile name
}

// builtProfile is what containment built for one profile, and from what.
type builtProfile struct {
	sandbox string
	network profile.Network
	model   string // env ANTHROPIC_BASE_URL: the proxy lets the model's endpoint through
	sb      sandbox.Sandbox
	net     *agent.Network // nil: the host's network
}

func newContainment(reg prometheus.Registerer, logger *slog.Logger) *containment {
	decisions := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "agentbridge_egress_total",
		Help: "Connections the agents' egress proxy judged, by profile, decision (allowed, refused) and reason " +
			"(model, warm-up, allow-list, public, deny-list, loopback, own-address, private, link-local, metadata, reserved, unresolved, bad-request, busy).",
	}, []string{"profile", "decision", "reason"})
	reg.MustRegister(decisions)
	return &containment{logger: logger, decisions: decisions, checked: map[string]error{}, netChecked: map[string]error{},
		built: map[string]builtProfile{}}
}

// build returns the sandboxes and networks of cfg's profiles. Nothing
// changes when it fails (a reload is then refused).
func (c *containment) build(ctx context.Context, cfg *config.Config) (agents.Containment, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := agents.Containment{Sandboxes: map[string]sandbox.Sandbox{}, Networks: map[string]agent.Network{}}
	built := map[string]builtProfile{}
	for _, name := range slices.Sorted(maps.Keys(cfg.Agents)) {
		a := cfg.Agents[name]
		b, ok := c.built[name]
		if !ok || b.sandbox != a.Sandbox || !reflect.DeepEqual(b.network, a.Network) || b.model != a.Env["ANTHROPIC_BASE_URL"] {
			var err error
			if b, err = c.buildProfile(ctx, a); err != nil {
				return agents.Containment{}, err
			}
		}
		built[name] = b
		out.Sandboxes[name] = b.sb
		if b.net != nil {
			out.Networks[name] = *b.net
		}
	}
	c.built = built
	return out, nil
}

// buildProfile makes and checks a's sandbox and network; c.mu is held.
func (c *containment) buildProfile(ctx context.Context, a *profile.Agent) (builtProfile, error) {
	b := builtProfile{sandbox: a.Sandbox, network: a.Network, model: a.Env["ANTHROPIC_BASE_URL"]}
	sb, err := sandbox.New(a.Sandbox, "")
	if err != nil {
		return b, ConfigError{fmt.Errorf("agent profile %q: %w", a.Name, err)}
	}
	if a.Sandbox == profile.SandboxNone {
		c.logger.Warn("agent profile runs without a sandbox: its agents can read and signal what the bridge's Unix user can (see SECURITY.md)",
			"profile", a.Name)
	}
	cerr, done := c.checked[sb.Name()]
	if !done {
		cerr = sb.Check(ctx)
		c.checked[sb.Name()] = cerr
	}
	if cerr != nil {
		return b, fmt.Errorf("agent profile %q: sandbox %s: %w", a.Name, sb.Name(), cerr)
	}
	b.sb = sb
	mode := a.Network.Mode
	if mode == profile.NetworkHost || mode == "" {
		return b, nil
	}
	if a.Sandbox == profile.SandboxNone {
		c.logger.Warn("agent profile has no sandbox: its agents share the host's network, network mode "+mode+" is not enforced (see SECURITY.md)",
			"profile", a.Name)
		return b, nil
	}
	if err := checkNetworkSandbox(ctx, sb, c.netChecked); err != nil {
		return b, fmt.Errorf("agent profile %q: network mode %s: %w", a.Name, mode, err)
	}
	n := agent.Network{Mode: mode, Profile: a.Name}
	if mode == profile.NetworkProxy {
		model, err := egress.ModelEndpoint(a.Env["ANTHROPIC_BASE_URL"])
		if err != nil {
			return b, ConfigError{fmt.Errorf("agent profile %q: %w", a.Name, err)}
		}
		if n.Policy, err = egress.NewPolicy(model, a.Network.Allow, a.Network.Deny); err != nil {
			return b, ConfigError{fmt.Errorf("agent profile %q: %w", a.Name, err)}
		}
		if n.Launcher, err = bridgeExecutable(); err != nil {
			return b, err
		}
		n.Proxy = c.proxyLocked()
		c.logger.Info("agent network: through the egress proxy", "profile", a.Name, "model", model.String(),
			"allow", a.Network.Allow, "deny", a.Network.Deny)
	} else {
		c.logger.Info("agent network: none (not even the model API)", "profile", a.Name)
	}
	b.net = &n
	return b, nil
}

// proxyLocked returns the egress proxy, making it on first use; c.mu is
// held.
func (c *containment) proxyLocked() *egress.Proxy {
	if c.proxy == nil {
		c.proxy = egress.New(egress.Config{Log: c.logger, Observe: func(ev egress.Event) {
			decision := "refused"
			if ev.Allow {
				decision = "allowed"
			}
			c.decisions.WithLabelValues(ev.Profile, decision, ev.Reason).Inc()
		}})
	}
	return c.proxy
}

// close closes the egress proxy, if one was made; call it after the
// agents stopped.
func (c *containment) close() {
	c.mu.Lock()
	p := c.proxy
	c.mu.Unlock()
	if p != nil {
		p.Close()
	}
}

// checkNetworkSandbox checks once per sandbox that it can give an agent
// its own network namespace, so that a machine that cannot fails at start
// with what to do.
func checkNetworkSandbox(ctx context.Context, sb sandbox.Sandbox, checked map[string]error) error {
	nc, ok := sb.(interface{ CheckNetwork(context.Context) error })
	if !ok {
		return fmt.Errorf("the profile's sandbox cannot give the agent its own network")
	}
	err, done := checked[sb.Name()]
	if !done {
		err = nc.CheckNetwork(ctx)
		checked[sb.Name()] = err
	}
	if err != nil {
		return fmt.Errorf("%w; or set network.mode: host on the profile (no egress control, see docs/network.md)", err)
	}
	return nil
}

// bridgeExecutable is the bridge binary's path: the sandboxes' launcher,
// and the relay of the tools of agents of kind acp.
func bridgeExecutable() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find the bridge binary: %w", err)
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	return exe, nil
}
