package pool

import (
	"slices"
	"strings"
	"time"

	"github.com/agentbridge/agentbridge/agent/streamjson"
)

// LiveInfo describes one live agent process of a Pool, for operators.
type LiveInfo struct {
	Key        string    // the pool key (the caller's conversation id)
	Profile    string    // Limit.Profile
	PID        int       // the process the pool started (the sandbox, when there is one)
	SessionID  string    // the Claude session id
	Started    time.Time // when the process was started
	LastActive time.Time // last input or output
	Busy       bool      // a turn is running
	// BackgroundTasks describes the background tasks running in the
	// session (shell commands, subagents), as the CLI last listed them.
	BackgroundTasks []string
}

// Snapshot lists the pool's live sessions (not those still starting),
// ordered by key. It is safe for concurrent use and never blocks on a
// session.
func (p *Pool) Snapshot() []LiveInfo {
	p.mu.Lock()
	out := make([]LiveInfo, 0, len(p.entries))
	for _, e := range p.entries {
		if e.s == nil || e.stopping {
			continue
		}
		out = append(out, LiveInfo{
			Key: e.key, Profile: e.limit.Profile, PID: e.s.PID(), SessionID: e.s.SessionID(),
			Started: e.s.Started(), LastActive: e.s.LastActive(), Busy: e.s.Busy(),
			BackgroundTasks: taskNames(e.s.BackgroundTasks()),
		})
	}
	p.mu.Unlock()
	slices.SortFunc(out, func(a, b LiveInfo) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// taskNames describes each task: its description, else its type and id.
func taskNames(ts []streamjson.BackgroundTask) []string {
	var out []string
	for _, t := range ts {
		name := t.Description
		if name == "" {
			name = strings.TrimSpace(t.TaskType + " " + t.TaskID)
		}
		out = append(out, name)
	}
	return out
}
