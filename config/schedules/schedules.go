// Package schedules is the config's schedules (yaml schedules[]): prompts
// the bridge sends to an agent on a cron schedule, their cron expressions
// and time zones (Cron), decoded with package decode and checked against
// the rest of the config (Config) with the same messages and lines as the
// rest of the file. Package config composes it and names its types
// (importers name this package for them).
package schedules

import (
	"cmp"
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

// Decode returns the Field that decodes the top-level schedules list into
// dst; an entry that is not a mapping is kept as nil, so that indexes stay
// aligned with paths until Finish drops it.
func Decode(d *decode.Decoder, dst *[]*Schedule) decode.Field {
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

// Bot is what a schedule is checked against of its bot.
type Bot struct {
	Name, Platform, Agent string
	Channels              []string // access.channels; empty = any
}

// Config is the rest of the config, as the schedules are checked against
// it (implemented by package config).
type Config interface {
	// HasAgent reports whether the agent profile name is defined.
	HasAgent(name string) bool
	// Bot returns the bot called name, if there is one.
	Bot(name string) (Bot, bool)
	// Target returns the channel of a schedule of a bot of platform as
	// stored, and why it (with thread, if any) is not an id of the
	// platform, or "".
	Target(platform, channel, thread string) (stored, why string)
}

// Finish validates every schedule of ss (after the bots and agents of c),
// fills in the defaults that come from its bot, and returns ss without
// the nil entries Decode kept. Problems go to d.
func Finish(d *decode.Decoder, ss []*Schedule, c Config) []*Schedule {
	seen := map[string]int{}
	for i, s := range ss {
		if s != nil {
			finishSchedule(d, c, s, decode.Index("schedules", i), seen, i)
		}
	}
	return slices.DeleteFunc(ss, func(s *Schedule) bool { return s == nil })
}

func finishSchedule(d *decode.Decoder, c Config, s *Schedule, p string, seen map[string]int, i int) {
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
	if s.Agent != "" && !c.HasAgent(s.Agent) {
		d.Addf(d.LineOf(ap), ap, "agent %s is not defined", d.Show(ap, s.Agent))
	}

	bp := decode.Child(p, "bot")
	bot, ok := c.Bot(s.Bot)
	switch {
	case s.Bot == "":
		d.Required(bp, "bot is required (the name of a bot under bots)")
		return
	case !ok:
		d.Addf(d.LineOf(bp), bp, "bot %s is not defined", d.Show(bp, s.Bot))
		return
	}
	if s.Agent == "" {
		s.Agent = bot.Agent
	}
	checkScheduleTarget(d, c, s, bot, p)
}

// checkScheduleTarget checks channel or conversation against the bot's
// platform and access list.
func checkScheduleTarget(d *decode.Decoder, c Config, s *Schedule, bot Bot, p string) {
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
	if s.Channel, why = c.Target(bot.Platform, s.Channel, s.Thread); why != "" {
		d.Addf(d.LineOf(at), at, "unknown channel format %s for a %s bot: %s", d.Show(at, s.Channel), bot.Platform, why)
		return
	}
	if len(bot.Channels) > 0 && !slices.Contains(bot.Channels, s.Channel) {
		d.Addf(d.LineOf(at), at, "channel %s is not in the access.channels of bot %s", d.Show(at, s.Channel), d.Show(decode.Child(p, "bot"), bot.Name))
	}
}

// WriteSummary adds the schedules to check-config's summary (nothing when
// there are none).
func WriteSummary(b *strings.Builder, ss []*Schedule) {
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
			s.Name, s.Bot, target, s.Cron.Expr, cmp.Or(s.Cron.Zone, "local"), s.Agent, s.NewThread, s.CatchUp)
	}
}
