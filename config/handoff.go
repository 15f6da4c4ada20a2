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
			"users": func(v *yaml.Node, up string) {
				d.List(v, up, "handoff users", func(item *yaml.Node, ip string) {
					var u HandoffUser
					if d.MappingItem(item, ip) {
						d.Fields(item, ip, map[string]decode.Field{
							"name":  d.Str(&u.Name),
							"token": d.Str(&u.Token),
							"as":    d.handoffAs(&u.As),
						})
					}
					h.Users = append(h.Users, u)
				})
			},
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
	names, tokens := map[string]int{}, map[string]int{}
	for i := range c.Handoff.Users {
		u := &c.Handoff.Users[i]
		p := decode.Index("handoff.users", i)
		if d.IsBad(p) {
			continue
		}
		np := decode.Child(p, "name")
		switch first, dup := names[u.Name]; {
		case u.Name == "" && !d.IsBad(np):
			d.Required(np, "name is required (who the person is in notices and the audit)")
		case u.Name != "" && !webUserName.MatchString(u.Name):
			d.Addf(d.LineOf(np), np, "bad user name %s (letters, digits and . _ @ + -, at most 64, starting with a letter or digit)", d.Show(np, u.Name))
		case dup:
			d.Addf(d.LineOf(np), np, "duplicate handoff user %s (also handoff.users[%d] at line %d)", d.Show(np, u.Name), first, d.LineOf(decode.Child(decode.Index("handoff.users", first), "name")))
		default:
			names[u.Name] = i
		}
		tp := decode.Child(p, "token")
		switch first, dup := tokens[u.Token]; {
		case u.Token == "" && d.IsBad(tp):
		case u.Token == "":
			if r, ok := d.Raw(tp); ok {
				d.Addf(d.LineOf(tp), tp, "is empty (from %q); every handoff user needs a token", r)
			} else {
				d.Required(tp, `token is required (give it through ${ENV}, e.g. token: "${HANDOFF_TOKEN_ANA}")`)
			}
		case len(u.Token) < MinWebTokenLength && !d.IsBad(tp):
			d.Addf(d.LineOf(tp), tp, "token is too short (at least %d characters; e.g. openssl rand -hex 24)", MinWebTokenLength)
		case dup:
			d.Addf(d.LineOf(tp), tp, "the same token as handoff.users[%d]: each person needs their own", first)
		default:
			tokens[u.Token] = i
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
