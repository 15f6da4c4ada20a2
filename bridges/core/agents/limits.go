package agents

import (
	"fmt"
	"time"

	"github.com/agentbridge/agentbridge/agent/sandbox"
	"github.com/agentbridge/agentbridge/config/profile"
)

// The agent's resource limits (agents.*.resources) are enforced by the
// agent package in a cgroup per process (see sandbox.Cgroups). These are
// what the conversation tells of them.

// sandboxLimits are a profile's resources as the sandbox takes them.
func sandboxLimits(r profile.Resources) sandbox.Limits {
	return sandbox.Limits{Memory: r.Memory, Processes: r.Processes, CPU: r.CPU}
}

// LimitNotice is what a conversation tells when a command of its agent
// hit limit (streamjson.LimitHit's Limit) of resources r, or "" for a
// limit not told.
func LimitNotice(limit string, r profile.Resources) string {
	switch limit {
	case sandbox.LimitMemory:
		return fmt.Sprintf("⚠️ A command of the agent ran out of the agent's %s memory limit and was killed. "+
			"The agent goes on; the command's output says what failed.", sandbox.FormatBytes(r.Memory))
	case sandbox.LimitProcesses:
		return fmt.Sprintf("⚠️ The agent reached its limit of %d processes: starting more failed until some ended. "+
			"`!new` stops everything it runs.", r.Processes)
	}
	return ""
}

// LimitExitNotice is what a conversation tells when its agent itself was
// killed by limit (streamjson.Exit's Limit) of resources r: only for its
// memory cap, else "".
func LimitExitNotice(limit string, r profile.Resources) string {
	if limit != sandbox.LimitMemory {
		return ""
	}
	return fmt.Sprintf("⚠️ The agent ran out of its %s memory limit and was restarted; history is kept.",
		sandbox.FormatBytes(r.Memory))
}

// LimitsStatusLine describes resources r of a profile for !status (a line
// starting with a newline): how the spawner's cgroups enforce them.
func (s Spawner) LimitsStatusLine(r profile.Resources) string {
	l := sandboxLimits(r)
	if l.IsZero() {
		return "\n• limits: none configured"
	}
	return "\n• limits: " + s.Cgroups.Enforcement(l).Summary(l)
}

// LimitNoticeEvery spaces the notices of one kind of limit hit
// (LimitNotices).
const LimitNoticeEvery = 5 * time.Minute

// LimitNotices are when each kind of limit hit was last told in one
// conversation: at most once per LimitNoticeEvery and kind, since a fork
// bomb hits its cap thousands of times a second.
type LimitNotices map[string]time.Time

// Due is the notice to tell of a hit of limit of resources r at now
// (LimitNotice), "" when none is due; it notes the hit as told.
func (n LimitNotices) Due(limit string, r profile.Resources, now time.Time) string {
	if last, ok := n[limit]; ok && now.Sub(last) < LimitNoticeEvery {
		return ""
	}
	n[limit] = now
	return LimitNotice(limit, r)
}
