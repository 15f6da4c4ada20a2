package config

import (
	"strings"

	"github.com/agentbridge/agentbridge/config/schedules"
)

// finishSchedules validates every schedule (after the bots and agents).
func (d *decoder) finishSchedules(c *Config) {
	c.Schedules = schedules.Finish(d.Decoder, c.Schedules, scheduleTargets{c: c, platforms: d.platforms})
}

// scheduleTargets is the config as the schedules are checked against it.
type scheduleTargets struct {
	c         *Config
	platforms []Platform
}

func (t scheduleTargets) HasAgent(name string) bool { return t.c.Agents[name] != nil }

func (t scheduleTargets) Bot(name string) (schedules.Bot, bool) {
	b := t.c.Bot(name)
	if b == nil {
		return schedules.Bot{}, false
	}
	return schedules.Bot{Name: b.Name, Platform: b.Platform, Agent: b.Agent, Channels: b.Access.Channels}, true
}

// Target returns the channel of a schedule of a bot of platform as stored,
// and why it (with thread, if any) is not an id of the platform, or "":
// the platform's Target, else any channel without spaces or slashes.
func (t scheduleTargets) Target(platform, channel, thread string) (string, string) {
	if pl := findPlatform(t.platforms, platform); pl != nil && pl.Target != nil {
		return pl.Target(channel, thread)
	}
	if strings.ContainsAny(channel, " \t\n/") {
		return channel, "want a channel id without spaces or slashes"
	}
	return channel, ""
}
