package core_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/agentbridge/agentbridge/agent/sandbox"
	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges/core/metrics"
	"github.com/agentbridge/agentbridge/config/profile"
)

// TestAgentLimitHits: hits of the agent's cgroup limits are counted in
// metrics and told in the conversation, the process cap once however often
// it is hit; a kill of the agent itself by the memory cap says so, and the
// interrupted message goes to the restarted agent.
func TestAgentLimitHits(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := start(t, setup{script: toolScript, metrics: metrics.New(reg), profile: func(p *profile.Agent) {
		p.Resources = profile.Resources{Memory: 512 << 20, Processes: 64, CPU: 1}
	}})
	k := key("T1")
	h.send(k, "m1", "alice", "hang")
	first := h.session(1)
	if _, err := first.WaitSent(ctxT(t), 1); err != nil {
		t.Fatal(err)
	}
	first.Emit(streamjson.LimitHit{Limit: sandbox.LimitProcesses, Count: 40})
	first.Emit(streamjson.LimitHit{Limit: sandbox.LimitProcesses, Count: 2})
	first.Emit(streamjson.LimitHit{Limit: sandbox.LimitMemory, Count: 1})
	h.waitText(k, "reached its limit of 64 processes")
	h.waitText(k, "A command of the agent ran out of the agent's 512 MiB memory limit and was killed")

	first.Emit(streamjson.LimitHit{Limit: sandbox.LimitMemory, Count: 1, AfterExit: true})
	first.End(streamjson.Exit{Code: 137, Reason: "crashed", Limit: sandbox.LimitMemory})
	h.waitText(k, "The agent ran out of its 512 MiB memory limit and was restarted; history is kept. Delivering the interrupted message again")
	second := h.session(2)
	if _, err := second.WaitSent(ctxT(t), 1); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, m := range h.plat.Messages(k) {
		if strings.Contains(m.Text, "limit of 64 processes") {
			n++
		}
		if strings.Contains(m.Text, "stopped unexpectedly") {
			t.Errorf("a kill by the memory cap told as a plain crash: %q", m.Text)
		}
	}
	if n != 1 {
		t.Errorf("the process cap was told %d times, want once", n)
	}
	want := `
# HELP agentbridge_agent_limit_hits_total Hits of an agent's resource limits by profile and limit: memory (processes killed by the memory cap), processes (forks and threads refused by the process cap).
# TYPE agentbridge_agent_limit_hits_total counter
agentbridge_agent_limit_hits_total{limit="memory",profile="coder"} 2
agentbridge_agent_limit_hits_total{limit="processes",profile="coder"} 42
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "agentbridge_agent_limit_hits_total"); err != nil {
		t.Error(err)
	}
	if acq := h.pool.Acquisitions(); acq[0].Opts.Limits != (sandbox.Limits{Memory: 512 << 20, Processes: 64, CPU: 1}) {
		t.Errorf("spawn limits = %+v", acq[0].Opts.Limits)
	}
}
