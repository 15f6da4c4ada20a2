package app

import (
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/agentbridge/agentbridge/agent/sandbox"
	"github.com/agentbridge/agentbridge/config"
)

// openLimits prepares the agents' cgroups (one group per bridge, named
// after its data directory) and says at start, per profile, which of its
// resources (agents.*.resources) hold and which do not. It returns the
// summaries by profile for /healthz.
//
// Where limits are configured but cannot be enforced (no cgroup the
// bridge may manage), agents still start: the warning names what is not
// enforced, and !status and /healthz repeat it. Where the cgroups were
// usable at start, an agent whose cgroup cannot be made does not start.
func openLimits(cfg *config.Config, logger *slog.Logger) (*sandbox.Cgroups, map[string]string) {
	cg := sandbox.OpenCgroups(sandbox.CgroupName(cfg.DataDir), logger)
	summaries := make(map[string]string, len(cfg.Agents))
	for _, name := range slices.Sorted(maps.Keys(cfg.Agents)) {
		r := cfg.Agents[name].Resources
		l := sandbox.Limits{Memory: r.Memory, Processes: r.Processes, CPU: r.CPU}
		if l.IsZero() {
			summaries[name] = "none configured"
			continue
		}
		e := cg.Enforcement(l)
		summaries[name] = e.Summary(l)
		if len(e.Missing) > 0 {
			logger.Warn("agent resource limits NOT enforced: one conversation's agent can take the machine's memory or processes "+
				"(run the bridge as root or in a delegated cgroup: see docs/deploy.md; or set the limits to 0 to silence this)",
				"profile", name, "not_enforced", strings.Join(e.Missing, ","), "why", e.Why,
				"instead", e.Summary(l))
		}
		if len(e.Enforced) > 0 {
			logger.Info("agent resource limits enforced", "profile", name, "limits", e.Summary(l))
		}
	}
	return cg, summaries
}
