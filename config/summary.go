package config

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agentbridge/agentbridge/config/decode"
	"github.com/agentbridge/agentbridge/config/profile"
	"github.com/agentbridge/agentbridge/config/schedules"
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
		profile.WriteSummary(&b, c.Agents[n])
	}

	writeWebSummary(&b, c)
	writeHandoffSummary(&b, c)
	writeLimitsSummary(&b, c)
	fmt.Fprintf(&b, "bots (%d):\n", len(c.Bots))
	for _, bot := range c.Bots {
		fmt.Fprintf(&b, "  %s: platform=%s agent=%s verbosity=%s channels=%s users=%s approvers=%s admins=%s",
			bot.Name, bot.Platform, bot.Agent, bot.Verbosity,
			decode.ListOr(bot.Access.Channels, "any"), decode.ListOr(bot.Access.Users, "any"),
			decode.ListOr(bot.Access.Approvers, "none"), decode.ListOr(bot.Access.Admins, "none"))
		if len(bot.Agents) > 0 {
			fmt.Fprintf(&b, " agents=%s", strings.Join(bot.Agents, ","))
		}
		if bot.Settings != nil {
			b.WriteString(bot.Settings.Summary())
		}
		b.WriteByte('\n')
	}
	schedules.WriteSummary(&b, c.Schedules)
	return b.String()
}
