package main

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentbridge/agentbridge/agent"
	"github.com/agentbridge/agentbridge/agent/sandbox"
	"github.com/agentbridge/agentbridge/agent/sandbox/egress"
	"github.com/agentbridge/agentbridge/config"
)

// buildNetworks sets up each agent profile's network (agents.*.network):
// one egress proxy for the profiles in mode proxy, whose decisions are
// counted in agentbridge_egress_total. A profile without a sandbox cannot
// be isolated: it shares the host's network, with a warning (check-config
// refuses mode none there). Close the proxy after the agents stopped.
func buildNetworks(ctx context.Context, cfg *config.Config, sandboxes map[string]sandbox.Sandbox, reg prometheus.Registerer,
	logger *slog.Logger) (map[string]agent.Network, *egress.Proxy, error) {
	decisions := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "agentbridge_egress_total",
		Help: "Connections the agents' egress proxy judged, by profile, decision (allowed, refused) and reason " +
			"(model, warm-up, allow-list, public, deny-list, loopback, private, link-local, metadata, reserved, unresolved, bad-request, busy).",
	}, []string{"profile", "decision", "reason"})
	reg.MustRegister(decisions)
	var proxy *egress.Proxy
	out := map[string]agent.Network{}
	checked := map[string]error{} // by sandbox name
	for _, name := range slices.Sorted(maps.Keys(cfg.Agents)) {
		a := cfg.Agents[name]
		mode := a.Network.Mode
		if mode == config.NetworkHost || mode == "" {
			continue
		}
		if a.Sandbox == config.SandboxNone {
			logger.Warn("agent profile has no sandbox: its agents share the host's network, network mode "+mode+" is not enforced (see SECURITY.md)",
				"profile", name)
			continue
		}
		if err := checkNetworkSandbox(ctx, sandboxes[name], checked); err != nil {
			return nil, nil, fmt.Errorf("agent profile %q: network mode %s: %w", name, mode, err)
		}
		n := agent.Network{Mode: mode, Profile: name}
		if mode == config.NetworkProxy {
			model, err := egress.ModelEndpoint(a.Env["ANTHROPIC_BASE_URL"])
			if err != nil {
				return nil, nil, usageError{fmt.Errorf("agent profile %q: %w", name, err)}
			}
			if n.Policy, err = egress.NewPolicy(model, a.Network.Allow, a.Network.Deny); err != nil {
				return nil, nil, usageError{fmt.Errorf("agent profile %q: %w", name, err)}
			}
			if n.Forwarder, err = bridgeExecutable(); err != nil {
				return nil, nil, err
			}
			if proxy == nil {
				proxy = egress.New(egress.Config{Log: logger, Observe: func(ev egress.Event) {
					decision := "refused"
					if ev.Allow {
						decision = "allowed"
					}
					decisions.WithLabelValues(ev.Profile, decision, ev.Reason).Inc()
				}})
			}
			n.Proxy = proxy
			logger.Info("agent network: through the egress proxy", "profile", name, "model", model.String(),
				"allow", a.Network.Allow, "deny", a.Network.Deny)
		} else {
			logger.Info("agent network: none (not even the model API)", "profile", name)
		}
		out[name] = n
	}
	return out, proxy, nil
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

// bridgeExecutable is the bridge binary's path (the sandboxes' forwarder).
func bridgeExecutable() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("egress forwarder: find the bridge binary: %w", err)
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	return exe, nil
}
