package config

import "testing"

func TestParseByteSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		bad  bool
	}{
		{"0", 0, false}, {"1024", 1024, false}, {"4GiB", 4 << 30, false}, {"512MiB", 512 << 20, false},
		{"1.5G", 3 << 29, false}, {"2GB", 2e9, false}, {"64K", 64 << 10, false}, {"10 MiB", 10 << 20, false},
		{"-1G", 0, true}, {"lots", 0, true}, {"GiB", 0, true}, {"1e300T", 0, true},
	} {
		got, err := ParseByteSize(c.in)
		if (err != nil) != c.bad || got != c.want {
			t.Errorf("ParseByteSize(%q) = %d, %v; want %d, bad=%v", c.in, got, err, c.want, c.bad)
		}
	}
}

// TestContainmentDefaults: an agent that says nothing gets the safe
// defaults: 4 GiB, 512 processes, one CPU, the proxy, schedules asked.
func TestContainmentDefaults(t *testing.T) {
	c, err := Parse([]byte("agents: {coder: {}}\nbots:\n  - {name: b, platform: discord, agent: coder, discord: {token: t}}\n"), "bridge.yaml", func(string) (string, bool) { return "", false }, testPlatforms)
	if err != nil {
		t.Fatal(err)
	}
	a := c.Agents["coder"]
	if a.Resources != (Resources{Memory: 4 << 30, Processes: 512, CPU: 1}) {
		t.Errorf("resources = %+v", a.Resources)
	}
	if a.Network.Mode != NetworkProxy || a.AgentSchedules != AgentSchedulesAsk {
		t.Errorf("network mode %q, agent_schedules %q", a.Network.Mode, a.AgentSchedules)
	}
}
