package config

import (
	"crypto/subtle"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/agentbridge/agentbridge/config/decode"
	"go.yaml.in/yaml/v3"
)

// Handoff configures who may continue a conversation from a terminal
// (yaml handoff; `bridge attach`, `bridge export`, `bridge import`,
// docs/handoff.md). Each user signs in with a token and acts in a bot's
// conversations as the platform user the config maps them to: that
// user's access, participation and card rights apply, and every attach,
// export and import is recorded under the person's name.
type Handoff struct {
	Users []HandoffUser // yaml users, in file order; names and tokens unique
}

// HandoffUser is one person who may use the terminal hand-off (yaml
// handoff.users[]).
type HandoffUser struct {
	Name  string // yaml name: who they are in the audit and in chat notices
	Token string // yaml token: the secret the terminal sends, at least MinWebTokenLength characters
	// As maps a bot name to the person's user id on that bot's platform
	// (yaml as: { team-slack: U0123 }): the id whose rights they have
	// there. A bot not listed refuses them.
	As map[string]string
}

// String implements fmt.Stringer with the token redacted.
func (u HandoffUser) String() string {
	return fmt.Sprintf("handoff_user{name:%s token:%s}", u.Name, Redact(u.Token))
}

// GoString implements fmt.GoStringer (%#v) with the token redacted.
func (u HandoffUser) GoString() string {
	return fmt.Sprintf("config.HandoffUser{Name:%q, Token:%q}", u.Name, Redact(u.Token))
}

// LogValue implements slog.LogValuer with the token redacted.
func (u HandoffUser) LogValue() slog.Value {
	return slog.GroupValue(slog.String("name", u.Name), slog.String("token", Redact(u.Token)))
}

// HandoffUserByToken returns the hand-off user whose token is token, or
// nil. Every token is compared in constant time.
func (c *Config) HandoffUserByToken(token string) *HandoffUser {
	var found *HandoffUser
	for i := range c.Handoff.Users {
		u := &c.Handoff.Users[i]
		if subtle.ConstantTimeCompare([]byte(u.Token), []byte(token)) == 1 && token != "" {
			found = u
		}
	}
	return found
}

// handoffSection decodes yaml handoff.
func (d *decoder) handoffSection(h *Handoff) decode.Field {
	return func(v *yaml.Node, p string) {
		d.Fields(v, p, map[string]decode.Field{
			"users": usersField(d, &h.Users, "handoff users", func(u *HandoffUser) map[string]decode.Field {
				return map[string]decode.Field{"name": d.Str(&u.Name), "token": d.Str(&u.Token), "as": d.handoffAs(&u.As)}
			}),
		})
	}
}

// handoffAs decodes handoff.users[].as: bot name → platform user id.
func (d *decoder) handoffAs(dst *map[string]string) decode.Field {
	return func(v *yaml.Node, p string) {
		*dst = map[string]string{}
		d.Pairs(v, p, func(key string, k, v *yaml.Node) {
			kp := decode.Child(p, key)
			d.SetLine(kp, k.Line)
			if s, ok := d.Scalar(v, kp, "a user id"); ok {
				(*dst)[key] = s
			}
		})
	}
}

// finishHandoff checks handoff.users: names and tokens present and
// unique, tokens long enough, each mapped bot configured and each user id
// non-empty.
func (d *decoder) finishHandoff(c *Config) {
	checkUsers(d, userRules{
		path: "handoff.users", who: "handoff user",
		nameRequired: "name is required (who the person is in notices and the audit)",
		tokenEmpty:   "every handoff user needs a token",
		tokenMissing: `token is required (give it through ${ENV}, e.g. token: "${HANDOFF_TOKEN_ANA}")`,
		uniqueTokens: true,
	}, c.Handoff.Users)
	for i := range c.Handoff.Users {
		u := &c.Handoff.Users[i]
		p := decode.Index("handoff.users", i)
		if d.IsBad(p) {
			continue
		}
		ap := decode.Child(p, "as")
		if len(u.As) == 0 && !d.IsBad(ap) {
			d.Required(ap, "as is required: the person's user id on each bot they may continue, e.g. as: { team-slack: U0123ABC }")
		}
		for _, bot := range slices.Sorted(maps.Keys(u.As)) {
			bp := decode.Child(ap, bot)
			switch {
			case c.Bot(bot) == nil:
				d.Addf(d.LineOf(bp), bp, "bot %s is not defined (bots: %s)", d.Show(bp, bot), decode.OrList(botNames(c)))
			case strings.TrimSpace(u.As[bot]) == "":
				d.Addf(d.LineOf(bp), bp, "empty user id: the person's id on that bot's platform is needed")
			}
		}
	}
}

// writeHandoffSummary adds the hand-off users (names and bots, never
// tokens) to a Summary; nothing when there are none.
func writeHandoffSummary(b *strings.Builder, c *Config) {
	if len(c.Handoff.Users) == 0 {
		return
	}
	b.WriteString("handoff users:")
	for _, u := range c.Handoff.Users {
		fmt.Fprintf(b, " %s(%s)", u.Name, strings.Join(slices.Sorted(maps.Keys(u.As)), ","))
	}
	b.WriteByte('\n')
}
