package config

import (
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/agentbridge/agentbridge/config/decode"
)

// Schedule is a prompt the bridge sends to an agent on a cron schedule
// (yaml schedules[]). Each run is a normal turn of the target
// conversation, announced there as "⏰ scheduled: NAME".
type Schedule struct {
	Name string // yaml name: unique among schedules, required
	Bot  string // yaml bot: a configured bot, required
	// Channel is where the runs go (yaml channel): with NewThread each run
	// starts a thread there (where the platform has threads), else the
	// channel's own conversation is used. Set from Conversation too.
	Channel string
	// Thread is the thread of an existing conversation (yaml conversation:
	// "CHANNEL/THREAD"); "" for a channel.
	Thread    string
	Cron      Cron   // yaml cron and tz (tz: IANA zone, default the bridge's local time)
	Prompt    string // yaml prompt: what the agent is sent, required
	Agent     string // yaml agent: agent profile for new conversations; default the bot's
	NewThread bool   // yaml new_thread: a fresh conversation (thread) per run
	// CatchUp (yaml catch_up, default true): a run missed while the bridge
	// was down happens once at start; false skips it.
	CatchUp bool
}

// schedules decodes the top-level schedules list.
func (d *decoder) schedules(dst *[]*Schedule) decode.Field {
	return func(v *yaml.Node, p string) {
		d.List(v, p, "schedules", func(item *yaml.Node, sp string) {
			if !d.MappingItem(item, sp) {
				*dst = append(*dst, nil) // keep indexes aligned with paths
				return
			}
			s := &Schedule{CatchUp: true}
			var cronExpr, tz, conversation string
			d.Fields(item, sp, map[string]decode.Field{
				"name":         d.Str(&s.Name),
				"bot":          d.Str(&s.Bot),
				"channel":      d.Str(&s.Channel),
				"conversation": d.Str(&conversation),
				"cron":         d.Str(&cronExpr),
				"tz":           d.Str(&tz),
				"prompt":       d.Str(&s.Prompt),
				"agent":        d.Str(&s.Agent),
				"new_thread":   d.Bool(&s.NewThread),
				"catch_up":     d.Bool(&s.CatchUp),
			})
			s.Cron = Cron{Expr: cronExpr, Zone: tz}
			if conversation != "" {
				s.Channel, s.Thread, _ = strings.Cut(conversation, "/")
				if s.Thread == "" {
					s.Thread = "\x00" // reported by finishSchedule
				}
			}
			*dst = append(*dst, s)
		})
	}
}

// finishSchedules validates every schedule (after the bots and agents).
func (d *decoder) finishSchedules(c *Config) {
	seen := map[string]int{}
	for i, s := range c.Schedules {
		if s != nil {
			d.finishSchedule(c, s, decode.Index("schedules", i), seen, i)
		}
	}
	c.Schedules = slices.DeleteFunc(c.Schedules, func(s *Schedule) bool { return s == nil })
}

func (d *decoder) finishSchedule(c *Config, s *Schedule, p string, seen map[string]int, i int) {
	np := decode.Child(p, "name")
	switch first, dup := seen[s.Name]; {
	case s.Name == "":
		d.Required(np, "name is required (shown as \"⏰ scheduled: NAME\")")
	case dup:
		d.Addf(d.LineOf(np), np, "duplicate schedule name %s (also used by schedules[%d])", d.Show(np, s.Name), first)
	default:
		seen[s.Name] = i
	}
	if strings.TrimSpace(s.Prompt) == "" {
		d.Required(decode.Child(p, "prompt"), "prompt is required (what the agent is asked at each run)")
	}

	cp := decode.Child(p, "cron")
	if s.Cron.Expr == "" {
		d.Required(cp, `cron is required (e.g. "0 9 * * 1-5")`)
	} else if cr, err := ParseCron(s.Cron.Expr, s.Cron.Zone); err != nil {
		at := cp
		if strings.Contains(err.Error(), "time zone") && s.Cron.Zone != "" {
			at = decode.Child(p, "tz")
		}
		if !d.IsBad(at) {
			d.Addf(d.LineOf(at), at, "%v", err)
		}
	} else {
		s.Cron = cr
	}

	ap := decode.Child(p, "agent")
	if s.Agent != "" && c.Agents[s.Agent] == nil {
		d.Addf(d.LineOf(ap), ap, "agent %s is not defined", d.Show(ap, s.Agent))
	}

	bp := decode.Child(p, "bot")
	bot := c.Bot(s.Bot)
	switch {
	case s.Bot == "":
		d.Required(bp, "bot is required (the name of a bot under bots)")
		return
	case bot == nil:
		d.Addf(d.LineOf(bp), bp, "bot %s is not defined", d.Show(bp, s.Bot))
		return
	}
	if s.Agent == "" {
		s.Agent = bot.Agent
	}
	d.checkScheduleTarget(s, bot, p)
}

// checkScheduleTarget checks channel or conversation against the bot's
// platform and access list.
func (d *decoder) checkScheduleTarget(s *Schedule, bot *Bot, p string) {
	chp, cvp := decode.Child(p, "channel"), decode.Child(p, "conversation")
	conversation := s.Thread != ""
	at := chp
	if conversation {
		at = cvp
	}
	switch {
	case d.IsSet(chp) && d.IsSet(cvp):
		d.Addf(d.LineOf(cvp), cvp, "give channel or conversation, not both")
		return
	case s.Channel == "":
		d.Required(at, "channel (or conversation: \"CHANNEL/THREAD\") is required")
		return
	case conversation && s.Thread == "\x00":
		d.Addf(d.LineOf(cvp), cvp, "want \"CHANNEL/THREAD\" (e.g. \"C0123/1712345678.000100\" on Slack), got %s", d.Show(cvp, s.Channel))
		return
	case conversation && s.NewThread:
		d.Addf(d.LineOf(decode.Child(p, "new_thread")), decode.Child(p, "new_thread"), "new_thread cannot be used with conversation (the runs go into that conversation)")
	}
	var why string
	if s.Channel, why = d.checkTarget(bot.Platform, s.Channel, s.Thread); why != "" {
		d.Addf(d.LineOf(at), at, "unknown channel format %s for a %s bot: %s", d.Show(at, s.Channel), bot.Platform, why)
		return
	}
	if len(bot.Access.Channels) > 0 && !slices.Contains(bot.Access.Channels, s.Channel) {
		d.Addf(d.LineOf(at), at, "channel %s is not in the access.channels of bot %s", d.Show(at, s.Channel), d.Show(decode.Child(p, "bot"), bot.Name))
	}
}

// checkTarget returns the channel of a schedule of a bot of platform as
// stored, and why it (with thread, if any) is not an id of the platform,
// or "": the platform's Target, else any channel without spaces or
// slashes.
func (d *decoder) checkTarget(platform, channel, thread string) (string, string) {
	if pl := findPlatform(d.platforms, platform); pl != nil && pl.Target != nil {
		return pl.Target(channel, thread)
	}
	if strings.ContainsAny(channel, " \t\n/") {
		return channel, "want a channel id without spaces or slashes"
	}
	return channel, ""
}

// writeSchedules adds the schedules to a Summary (nothing when none).
func writeSchedules(b *strings.Builder, ss []*Schedule) {
	if len(ss) == 0 {
		return
	}
	fmt.Fprintf(b, "schedules (%d):\n", len(ss))
	for _, s := range ss {
		target := s.Channel
		if s.Thread != "" {
			target += "/" + s.Thread
		}
		fmt.Fprintf(b, "  %s: bot=%s target=%s cron=%q tz=%s agent=%s new_thread=%t catch_up=%t\n",
			s.Name, s.Bot, target, s.Cron.Expr, decode.OrDefault(s.Cron.Zone, "local"), s.Agent, s.NewThread, s.CatchUp)
	}
}
