package config

import (
	"testing"

	"github.com/agentbridge/agentbridge/config/profile"
)

// TestWarmSparesAuto: warm_spares: auto (any letter case) sets the
// automatic count with its defaults or the values given; a number still
// works and keeps the defaults unused.
func TestWarmSparesAuto(t *testing.T) {
	bot := []string{"bots:", "  - name: b", "    platform: discord", "    agent: coder", "    discord: {token: tok}"}
	parse := func(agent ...string) *profile.Agent {
		t.Helper()
		c := mustParse(t, src(append(append([]string{"agents:", "  coder:"}, agent...), bot...)...), nil)
		return c.Agents["coder"]
	}
	a := parse("    warm_spares: Auto")
	if !a.WarmSparesAuto || a.WarmSpares != 0 || a.MaxWarmSpares != profile.DefaultMaxWarmSpares || a.SpareMemory != profile.DefaultSpareMemory ||
		!a.KeepsSpares() || a.WarmSparesText() != "auto" {
		t.Errorf("warm_spares: Auto gave %+v", a)
	}
	a = parse("    warm_spares: auto", "    max_warm_spares: 3", "    spare_memory: 512MiB")
	if !a.WarmSparesAuto || a.MaxWarmSpares != 3 || a.SpareMemory != 512<<20 {
		t.Errorf("auto with max 3, 512MiB gave %+v", a)
	}
	a = parse("    warm_spares: 2")
	if a.WarmSparesAuto || a.WarmSpares != 2 || a.WarmSparesText() != "2" || !a.KeepsSpares() {
		t.Errorf("warm_spares: 2 gave %+v", a)
	}
	if a := parse("    warm_spares: 0"); a.KeepsSpares() {
		t.Errorf("warm_spares: 0 keeps spares")
	}
}
