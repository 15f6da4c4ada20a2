package config

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/agentbridge/agentbridge/config/decode"
)

// monthWindow is the longest window a limit sums over (a calendar month):
// usage must be kept at least this long for usd_per_month to be right.
const monthWindow = 31 * day

// Limit is the spend limit of one bot (yaml limits[]). The bridge checks it
// before a turn starts: a message that would start a turn while a budget is
// used up is refused, with the limit and when it resets, and never reaches
// the agent. Cost is what the CLI reports per result; a turn is one result.
type Limit struct {
	Bot     string // yaml bot: a configured bot name; at most one entry per bot
	PerUser Budget // yaml per_user: each person's own budget on this bot
	Total   Budget // yaml total: the whole bot's budget, everyone together
	// ExemptAdmins (yaml exempt_admins, default false): the bot's admins
	// are never refused nor warned; what they spend still counts in the
	// total. Off by default: a limit that stops a runaway bill holds for
	// everyone unless the config says otherwise.
	ExemptAdmins bool
	// TZ (yaml tz, default "UTC") is the IANA time zone whose midnight and
	// first of the month start a new day and month; Location is it loaded.
	TZ       string
	Location *time.Location
}

// Budget is what one person (per_user) or the whole bot (total) may spend.
// A zero field is no limit.
type Budget struct {
	USDPerDay    float64 // yaml usd_per_day: cost per calendar day in Limit.TZ
	USDPerMonth  float64 // yaml usd_per_month: cost per calendar month in Limit.TZ
	TurnsPerHour int     // yaml turns_per_hour: turns in any 60 minutes (a sliding window)
}

// IsZero reports whether b limits nothing.
func (b Budget) IsZero() bool { return b == Budget{} }

// LimitFor returns the spend limit of bot, or nil when it has none.
func (c *Config) LimitFor(bot string) *Limit {
	for i := range c.Limits {
		if c.Limits[i].Bot == bot {
			return &c.Limits[i]
		}
	}
	return nil
}

// limitsSection decodes yaml limits.
func (d *decoder) limitsSection(dst *[]Limit) decode.Field {
	return func(v *yaml.Node, p string) {
		d.List(v, p, "limits", func(item *yaml.Node, ip string) {
			var l Limit
			if d.MappingItem(item, ip) {
				d.Fields(item, ip, map[string]decode.Field{
					"bot":           d.Str(&l.Bot),
					"per_user":      d.budgetOf(&l.PerUser),
					"total":         d.budgetOf(&l.Total),
					"exempt_admins": d.Bool(&l.ExemptAdmins),
					"tz":            d.Str(&l.TZ),
				})
			}
			*dst = append(*dst, l)
		})
	}
}

// budgetOf decodes a per_user or total mapping.
func (d *decoder) budgetOf(b *Budget) decode.Field {
	return func(v *yaml.Node, p string) {
		d.Fields(v, p, map[string]decode.Field{
			"usd_per_day":    d.Number(&b.USDPerDay),
			"usd_per_month":  d.Number(&b.USDPerMonth),
			"turns_per_hour": d.Int(&b.TurnsPerHour),
		})
	}
}

// finishLimits checks every limits[] entry: a configured bot, one entry per
// bot, no negative amounts, at least one limit, a known time zone, and a
// retention long enough for the month it sums.
func (d *decoder) finishLimits(c *Config) {
	seen := map[string]int{}
	for i := range c.Limits {
		l := &c.Limits[i]
		p := decode.Index("limits", i)
		if d.IsBad(p) {
			continue
		}
		bp := decode.Child(p, "bot")
		switch first, dup := seen[l.Bot]; {
		case l.Bot == "":
			d.Required(bp, "bot is required (the name of the bot this limit applies to)")
		case c.Bot(l.Bot) == nil && !d.IsBad(bp):
			d.Addf(d.LineOf(bp), bp, "bot %s is not defined (bots: %s)", d.Show(bp, l.Bot), decode.OrList(botNames(c)))
		case dup:
			d.Addf(d.LineOf(bp), bp, "duplicate limits for bot %s (also limits[%d] at line %d): give one entry per bot", d.Show(bp, l.Bot), first, d.LineOf(decode.Child(decode.Index("limits", first), "bot")))
		default:
			seen[l.Bot] = i
		}
		d.checkBudget(c, l.PerUser, decode.Child(p, "per_user"))
		d.checkBudget(c, l.Total, decode.Child(p, "total"))
		if l.PerUser.IsZero() && l.Total.IsZero() && !d.BadUnder(p) {
			d.Addf(d.LineOf(p), p, "sets no limit: give per_user or total with usd_per_day, usd_per_month or turns_per_hour")
		}
		l.TZ = cmp.Or(l.TZ, "UTC")
		loc, err := time.LoadLocation(l.TZ)
		if tp := decode.Child(p, "tz"); (err != nil || l.TZ == "Local") && !d.IsBad(tp) {
			d.Addf(d.LineOf(tp), tp, `unknown time zone %s (want an IANA name such as "Europe/Berlin", or "UTC")`, d.Show(tp, l.TZ))
		}
		l.Location = loc
	}
}

// checkBudget reports negative amounts and a usd_per_month that the
// retention period would undercount.
func (d *decoder) checkBudget(c *Config, b Budget, p string) {
	for _, f := range []struct {
		key string
		neg bool
	}{{"usd_per_day", b.USDPerDay < 0}, {"usd_per_month", b.USDPerMonth < 0}, {"turns_per_hour", b.TurnsPerHour < 0}} {
		if fp := decode.Child(p, f.key); f.neg && !d.IsBad(fp) {
			d.Addf(d.LineOf(fp), fp, "must not be negative (0 = no limit)")
		}
	}
	if mp := decode.Child(p, "usd_per_month"); b.USDPerMonth > 0 && c.Retention > 0 && c.Retention < monthWindow && !d.IsBad("retention") {
		d.Addf(d.LineOf(mp), mp, "retention (%s) keeps usage for less than a month, so a monthly limit would undercount: set retention to at least 31d (or 0)",
			retentionString(c.Retention))
	}
}

// botNames lists the configured bots' names, for messages.
func botNames(c *Config) []string {
	var out []string
	for _, b := range c.Bots {
		if b != nil && b.Name != "" {
			out = append(out, strconv.Quote(b.Name))
		}
	}
	if len(out) == 0 {
		return []string{"none"}
	}
	return out
}

// writeLimitsSummary adds the spend limits to a Summary.
func writeLimitsSummary(b *strings.Builder, c *Config) {
	if len(c.Limits) == 0 {
		return
	}
	fmt.Fprintf(b, "limits (%d):\n", len(c.Limits))
	for _, l := range c.Limits {
		fmt.Fprintf(b, "  %s: per_user=%s total=%s tz=%s exempt_admins=%t\n",
			l.Bot, budgetString(l.PerUser), budgetString(l.Total), l.TZ, l.ExemptAdmins)
	}
}

// budgetString formats a budget compactly: "$20/day,60 turns/h" or "none".
func budgetString(b Budget) string {
	var parts []string
	if b.USDPerDay > 0 {
		parts = append(parts, fmt.Sprintf("$%g/day", b.USDPerDay))
	}
	if b.USDPerMonth > 0 {
		parts = append(parts, fmt.Sprintf("$%g/month", b.USDPerMonth))
	}
	if b.TurnsPerHour > 0 {
		parts = append(parts, fmt.Sprintf("%d turns/h", b.TurnsPerHour))
	}
	return decode.ListOr(parts, "none")
}
