package agent

import (
	"time"

	"github.com/agentbridge/agentbridge/agent/sandbox"
	"github.com/agentbridge/agentbridge/agent/streamjson"
)

// limitPoll is how often a session reads its cgroup's limit counters.
const limitPoll = time.Second

// oomExitWindow is how recent a kill by the memory cap must be for an
// unexpected exit to be put down to it (Exit.Limit).
const oomExitWindow = 3 * limitPoll

// limitWatch is a session's view of its cgroup's counters.
type limitWatch struct {
	cg      *sandbox.Cgroup
	last    sandbox.Counters
	lastOOM time.Time // when a new kill by the memory cap was last seen
}

// watchLimits polls the cgroup's counters until the process exited.
func (s *Session) watchLimits() {
	t := time.NewTicker(limitPoll)
	defer t.Stop()
	for {
		select {
		case <-s.exited:
			return
		case <-t.C:
			s.pollLimits(false)
		}
	}
}

// pollLimits queues a LimitHit for each counter that grew. Only one
// goroutine calls it at a time: watchLimits, then waitLoop after it ended.
func (s *Session) pollLimits(afterExit bool) {
	w := &s.limits
	now := w.cg.Counters()
	if d := now.OOMKills - w.last.OOMKills; d > 0 {
		w.lastOOM = time.Now()
		s.log.Warn("agent hit its memory limit: processes killed", "count", d, "after_exit", afterExit)
		s.events.Push(streamjson.LimitHit{Limit: sandbox.LimitMemory, Count: d, AfterExit: afterExit})
	}
	if d := now.ForkRefusals - w.last.ForkRefusals; d > 0 {
		s.log.Warn("agent hit its process limit: forks refused", "count", d, "after_exit", afterExit)
		s.events.Push(streamjson.LimitHit{Limit: sandbox.LimitProcesses, Count: d, AfterExit: afterExit})
	}
	w.last = now
}

// exitLimit reads the counters a last time after the process exited and
// returns sandbox.LimitMemory when an unexpected exit follows a kill by the
// memory cap, else "". It then removes the cgroup.
func (s *Session) exitLimit(expected bool) string {
	if s.limits.cg == nil {
		return ""
	}
	<-s.limitsDone
	s.pollLimits(true)
	if err := s.limits.cg.Remove(); err != nil {
		s.log.Warn("agent cgroup not removed", "err", err)
	}
	if !expected && !s.limits.lastOOM.IsZero() && time.Since(s.limits.lastOOM) < oomExitWindow {
		return sandbox.LimitMemory
	}
	return ""
}

// UseFullCPU gives a session started with Options.StartCPU the CPU share
// of its Limits from now on (a warm spare taken by a conversation). It does
// nothing without a CPU share to change.
func (s *Session) UseFullCPU() error {
	if s.opts.StartCPU <= 0 || s.opts.Limits.CPU <= 0 {
		return nil
	}
	return s.limits.cg.SetCPU(s.opts.Limits.CPU)
}

// leftoverCPUWait multiplies Options.ControlTimeout while a session still
// runs on its Options.StartCPU share (a warm spare or warm resume booting
// on leftover CPU): on a saturated machine such a process gets almost no
// CPU until a conversation takes it, so its boot's control requests
// (initialize, the warm-up) may take far longer than a running agent's —
// giving it up after the usual bound only to boot another the same way
// would waste the work done. Nobody waits on it meanwhile: a conversation
// that takes it gives it the full share first.
const leftoverCPUWait = 6

// controlTimeout is how long a control request waits for the CLI's
// answer: Options.ControlTimeout, leftoverCPUWait times that while the
// session runs on leftover CPU.
func (s *Session) controlTimeout() time.Duration {
	if share := s.limits.cg.CPU(); share > 0 && share < s.opts.Limits.CPU {
		return s.opts.ControlTimeout * leftoverCPUWait
	}
	return s.opts.ControlTimeout
}

// CPUShare is the share of the CPU, in cores, the session's cgroup gives
// it when the machine is busy (0 = none).
func (s *Session) CPUShare() float64 { return s.limits.cg.CPU() }
