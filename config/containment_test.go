package config

import (
	"testing"

	"github.com/agentbridge/agentbridge/config/profile"
)

// TestContainmentDefaults: an agent that says nothing gets the safe
// defaults: 4 GiB, 512 processes, one CPU, the proxy, schedules asked.
func TestContainmentDefaults(t *testing.T) {
	c, err := Parse([]byte("agents: {coder: {}}\nbots:\n  - {name: b, platform: discord, agent: coder, discord: {token: t}}\n"), "bridge.yaml", func(string) (string, bool) { return "", false }, testPlatforms)
	if err != nil {
		t.Fatal(err)
	}
	a := c.Agents["coder"]
	if a.Resources != (profile.Resources{Memory: 4 << 30, Processes: 512, CPU: 1}) {
		t.Errorf("resources = %+v", a.Resources)
	}
	if a.Network.Mode != profile.NetworkProxy || a.AgentSchedules != profile.AgentSchedulesAsk {
		t.Errorf("network mode %q, agent_schedules %q", a.Network.Mode, a.AgentSchedules)
	}
}
