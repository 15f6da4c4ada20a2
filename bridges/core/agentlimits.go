package core

import (
	"context"
	"fmt"
	"time"

	"github.com/agentbridge/agentbridge/agent/sandbox"
	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/config"
)

// The agent's resource limits (agents.*.resources) are enforced by the
// agent package in a cgroup per process (see sandbox.Cgroups). Here a hit
// is counted in metrics and told in the conversation: at most once per
// limitNoticeEvery and kind, since a fork bomb hits its cap thousands of
// times a second.

// limitNoticeEvery spaces the notices of one kind of limit hit.
const limitNoticeEvery = 5 * time.Minute

// sandboxLimits are a profile's resources as the sandbox takes them.
func sandboxLimits(r config.Resources) sandbox.Limits {
	return sandbox.Limits{Memory: r.Memory, Processes: r.Processes, CPU: r.CPU}
}

// onLimitHit counts a hit of the agent's cgroup limits and tells the
// conversation (a kill of the agent itself is told by onExit).
func (cv *conversation) onLimitHit(ctx context.Context, e streamjson.LimitHit) {
	cv.core.opts.Metrics.LimitHit(cv.profile.Name, e.Limit, e.Count)
	if e.AfterExit {
		return
	}
	now := cv.core.clock.Now()
	if last, ok := cv.limitNoticed[e.Limit]; ok && now.Sub(last) < limitNoticeEvery {
		return
	}
	if cv.limitNoticed == nil {
		cv.limitNoticed = map[string]time.Time{}
	}
	cv.limitNoticed[e.Limit] = now
	r := cv.profile.Resources
	switch e.Limit {
	case sandbox.LimitMemory:
		cv.notice(ctx, fmt.Sprintf("⚠️ A command of the agent ran out of the agent's %s memory limit and was killed. "+
			"The agent goes on; the command's output says what failed.", sandbox.FormatBytes(r.Memory)))
	case sandbox.LimitProcesses:
		cv.notice(ctx, fmt.Sprintf("⚠️ The agent reached its limit of %d processes: starting more failed until some ended. "+
			"`!new` stops everything it runs.", r.Processes))
	}
}

// limitExitNotice is what onExit tells when the agent itself was killed by
// its memory cap, or "".
func (cv *conversation) limitExitNotice(e streamjson.Exit) string {
	if e.Limit != sandbox.LimitMemory {
		return ""
	}
	return fmt.Sprintf("⚠️ The agent ran out of its %s memory limit and was restarted; history is kept.",
		sandbox.FormatBytes(cv.profile.Resources.Memory))
}

// limitsStatusLine describes the profile's resource limits for !status.
func (cv *conversation) limitsStatusLine() string {
	l := sandboxLimits(cv.profile.Resources)
	if l.IsZero() {
		return "\n• limits: none configured"
	}
	return "\n• limits: " + cv.core.opts.Cgroups.Enforcement(l).Summary(l)
}
