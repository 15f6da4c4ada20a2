package config

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Summary describes the configuration for `bridge check-config`: paths,
// logging, the HTTP listener, every agent profile and every bot (name,
// platform, agent, access). It never includes a secret: tokens are not
// mentioned at all and only the names of agent env entries are shown.
func (c *Config) Summary() string {
	var b strings.Builder
	if c.Store.Driver == StorePostgres {
		fmt.Fprintf(&b, "data_dir: %s\n", c.DataDir)
	} else {
		fmt.Fprintf(&b, "data_dir: %s (database %s)\n", c.DataDir, c.DBPath())
	}
	fmt.Fprintf(&b, "retention: %s\n", retentionString(c.Retention))
	fmt.Fprintf(&b, "status_delay: %s\n", c.StatusDelay)
	fmt.Fprintf(&b, "delivery: %s\n", deliveryString(c.Delivery))
	b.WriteString(storeString(c.Store))
	if c.Transcription.Enabled() { // absent: the summary stays as it was
		fmt.Fprintf(&b, "transcription: %s\n", transcriptionString(c.Transcription))
	}
	fmt.Fprintf(&b, "log: level=%s format=%s\n", c.Log.Level, c.Log.Format)
	if c.HTTP.Listen == "" {
		b.WriteString("http: disabled\n")
	} else {
		fmt.Fprintf(&b, "http: listen=%s\n", c.HTTP.Listen)
	}

	names := make([]string, 0, len(c.Agents))
	for n := range c.Agents {
		names = append(names, n)
	}
	slices.Sort(names)
	fmt.Fprintf(&b, "agents (%d):\n", len(names))
	for _, n := range names {
		a := c.Agents[n]
		fmt.Fprintf(&b, "  %s: command=%s workdir=%s model=%s permission_mode=%s max_live=%d warm_spares=%s max_turns=%s idle_timeout=%s approval_timeout=%s rules=%d sandbox=%s binds=%d worktree=%t env=%s\n",
			a.Name, a.Command, a.Workdir, orDefault(a.Model, "default"), a.PermissionMode, a.MaxLive, a.WarmSparesText(),
			intOr(a.MaxTurns, "unlimited"), durOr(a.IdleTimeout, "never"), durOr(a.ApprovalTimeout, "forever"),
			len(a.Rules), a.Sandbox, len(a.SandboxBinds), a.Worktree, listOr(envKeys(a.Env), "none"))
		writeNetworkSummary(&b, a) // network.go
		writeMCPSummary(&b, a)     // mcpservers.go
	}

	writeWebSummary(&b, c)
	writeHandoffSummary(&b, c)
	writeLimitsSummary(&b, c)
	fmt.Fprintf(&b, "bots (%d):\n", len(c.Bots))
	for _, bot := range c.Bots {
		fmt.Fprintf(&b, "  %s: platform=%s agent=%s verbosity=%s channels=%s users=%s approvers=%s admins=%s",
			bot.Name, bot.Platform, bot.Agent, bot.Verbosity,
			listOr(bot.Access.Channels, "any"), listOr(bot.Access.Users, "any"),
			listOr(bot.Access.Approvers, "none"), listOr(bot.Access.Admins, "none"))
		if bot.Settings != nil {
			b.WriteString(bot.Settings.Summary())
		}
		b.WriteByte('\n')
	}
	writeSchedules(&b, c.Schedules)
	return b.String()
}

func listOr(s []string, empty string) string {
	if len(s) == 0 {
		return empty
	}
	return strings.Join(s, ",")
}

func intOr(n int, zero string) string {
	if n == 0 {
		return zero
	}
	return fmt.Sprint(n)
}

// durOr formats d compactly ("30m", "1h30m", "45s"), or zero for 0.
func durOr(d time.Duration, zero string) string {
	if d == 0 {
		return zero
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
