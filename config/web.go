package config

import (
	"cmp"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/netip"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/agentbridge/agentbridge/config/decode"
)

// PlatformWeb is bots[].platform for the built-in web console: a chat page
// served on http.listen. At most one bot may use it.
const PlatformWeb = "web"

// Web console roles (yaml web.users[].role).
const (
	RoleUser  = "user"  // may chat
	RoleAdmin = "admin" // may chat and open the operator pages
)

// MinWebTokenLength is the shortest web.users[].token accepted: a sign-in
// token is a password that anyone reaching the port can try.
const MinWebTokenLength = 16

// Web configures the web console (yaml web). Its users sign in with their
// token; their names are the user ids that the web bot's access lists name.
// With no users the console generates one admin token into data_dir.
type Web struct {
	Users []WebUser // yaml users, in file order; names unique
	// TrustedProxies (yaml trusted_proxies: addresses or CIDR prefixes) are
	// the reverse proxies whose X-Forwarded-For the console believes when
	// it counts failed sign-ins per client address; empty: the connection's
	// own address counts, X-Forwarded-For is ignored.
	TrustedProxies []string
	// MaxUpload caps one file a person attaches in the web console, in
	// bytes (yaml max_upload: "10MiB"; default DefaultWebMaxUpload, from
	// 1MiB to MaxWebUpload). Images are also capped at 5 MiB: the agent
	// gets images up to that size, as from Slack and Discord.
	MaxUpload int64
}

// Limits of web.max_upload: the core saves files up to 20 MiB for the
// agent (images up to 5 MiB), whatever the platform.
const (
	DefaultWebMaxUpload = 10 << 20
	MinWebUpload        = 1 << 20
	MaxWebUpload        = 20 << 20
)

// WebUser is one person who may sign in to the web console (yaml
// web.users[]).
type WebUser struct {
	Name  string // yaml name: the user id (access lists, audit log), unique
	Role  string // yaml role: user|admin, default user
	Token string // yaml token: the sign-in secret, at least MinWebTokenLength characters
}

// webUserName is what a web user name may look like: it becomes a
// conversation's channel id and appears in URLs and the audit log.
var webUserName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@+-]{0,63}$`)

// String implements fmt.Stringer with the token redacted.
func (u WebUser) String() string {
	return fmt.Sprintf("web_user{name:%s role:%s token:%s}", u.Name, u.Role, Redact(u.Token))
}

// GoString implements fmt.GoStringer (%#v) with the token redacted.
func (u WebUser) GoString() string {
	return fmt.Sprintf("config.WebUser{Name:%q, Role:%q, Token:%q}", u.Name, u.Role, Redact(u.Token))
}

// ParseTrustedProxy parses a web.trusted_proxies entry: an IP address (a
// prefix of its full length) or a CIDR prefix.
func ParseTrustedProxy(s string) (netip.Prefix, error) {
	if a, err := netip.ParseAddr(s); err == nil {
		a = a.Unmap()
		return netip.PrefixFrom(a, a.BitLen()), nil
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("trusted proxy %q: %w", s, err)
	}
	return p.Masked(), nil
}

// LogValue implements slog.LogValuer with the token redacted.
func (u WebUser) LogValue() slog.Value {
	return slog.GroupValue(slog.String("name", u.Name), slog.String("role", u.Role), slog.String("token", Redact(u.Token)))
}

// webSection decodes yaml web.
func (d *decoder) webSection(w *Web) decode.Field {
	return func(v *yaml.Node, p string) {
		d.Fields(v, p, map[string]decode.Field{
			"users": usersField(d, &w.Users, "web users", func(u *WebUser) map[string]decode.Field {
				return map[string]decode.Field{"name": d.Str(&u.Name), "role": d.Str(&u.Role), "token": d.Str(&u.Token)}
			}),
			"trusted_proxies": d.StrList(&w.TrustedProxies),
			"max_upload":      d.ByteSize(&w.MaxUpload),
		})
	}
}

// finishWeb checks web.users, web.trusted_proxies and that at most one
// bot is a web bot.
func (d *decoder) finishWeb(c *Config) {
	switch mp := "web.max_upload"; {
	case d.IsBad(mp):
	case c.Web.MaxUpload == 0:
		if d.HasLine(mp) {
			d.Addf(d.LineOf(mp), mp, "must be at least 1MiB (people could attach nothing); at most 20MiB")
		}
		c.Web.MaxUpload = DefaultWebMaxUpload
	case c.Web.MaxUpload < MinWebUpload || c.Web.MaxUpload > MaxWebUpload:
		d.Addf(d.LineOf(mp), mp, "must be from 1MiB to 20MiB (the agent gets files up to 20 MiB, images up to 5 MiB)")
	}
	for i, p := range c.Web.TrustedProxies {
		if _, err := ParseTrustedProxy(p); err != nil {
			ip := decode.Index("web.trusted_proxies", i)
			d.Addf(d.LineOf(ip), ip, "bad trusted proxy %s: want an IP address or a CIDR prefix (127.0.0.1, 10.0.0.0/8)", d.Show(ip, p))
		}
	}
	checkUsers(d, userRules{
		path: "web.users", who: "web user",
		nameRequired: "name is required (the user id that access lists name)",
		tokenEmpty:   "every web user needs a sign-in token",
		tokenMissing: `token is required (give it through ${ENV}, e.g. token: "${WEB_TOKEN_ANA}")`,
	}, c.Web.Users)
	for i := range c.Web.Users {
		u := &c.Web.Users[i]
		p := decode.Index("web.users", i)
		if d.IsBad(p) {
			continue
		}
		u.Role = cmp.Or(u.Role, RoleUser)
		d.OneOf(decode.Child(p, "role"), u.Role, "role", RoleUser, RoleAdmin)
	}
	first := -1
	for i, b := range c.Bots {
		if b == nil || b.Platform != PlatformWeb {
			continue
		}
		if first < 0 {
			first = i
			if c.HTTP.Listen == "" && !d.IsBad("http.listen") {
				pp := decode.Child(decode.Index("bots", i), "platform")
				d.Addf(d.LineOf(pp), pp, "a web bot is served on http.listen, which is disabled (\"\")")
			}
			continue
		}
		pp := decode.Child(decode.Index("bots", i), "platform")
		d.Addf(d.LineOf(pp), pp, "only one web bot is allowed (bots[%d] at line %d is one)", first, d.LineOf(decode.Child(decode.Index("bots", first), "platform")))
	}
}

// WebBot returns the web console's bot, or nil when there is none.
func (c *Config) WebBot() *Bot {
	for _, b := range c.Bots {
		if b.Platform == PlatformWeb {
			return b
		}
	}
	return nil
}

// WebUser returns the web user called name, or nil.
func (c *Config) WebUser(name string) *WebUser {
	for i := range c.Web.Users {
		if c.Web.Users[i].Name == name {
			return &c.Web.Users[i]
		}
	}
	return nil
}

// writeWebSummary adds the web users (names and roles, never tokens) to a
// Summary.
func writeWebSummary(b *strings.Builder, c *Config) {
	if len(c.Web.Users) == 0 {
		if c.WebBot() != nil {
			b.WriteString("web users: none (an admin token is generated into data_dir)\n")
		}
		return
	}
	b.WriteString("web users:")
	for _, u := range c.Web.Users {
		fmt.Fprintf(b, " %s(%s)", u.Name, u.Role)
	}
	b.WriteByte('\n')
}

// MarshalJSON implements json.Marshaler with the token redacted.
func (u WebUser) MarshalJSON() ([]byte, error) {
	type plain WebUser
	u.Token = Redact(u.Token)
	return json.Marshal(plain(u))
}

// generatedWebAdmin is the user the console makes without web.users
// (bridges/adapters/web/auth.GeneratedAdmin).
const generatedWebAdmin = "admin"

// Warnings are what `bridge check-config` points out in a config that
// loads but likely does not do what was meant: an access list of a web
// bot naming a user who is not in web.users (nobody of that name can sign
// in, so the entry never matches).
func (c *Config) Warnings() []string {
	var out []string
	for i, b := range c.Bots {
		if b.Platform != PlatformWeb {
			continue
		}
		for _, l := range []struct {
			key   string
			names []string
		}{{"users", b.Access.Users}, {"approvers", b.Access.Approvers}, {"admins", b.Access.Admins}} {
			for _, n := range l.names {
				if len(c.Web.Users) == 0 && strings.EqualFold(n, generatedWebAdmin) ||
					slices.ContainsFunc(c.Web.Users, func(u WebUser) bool { return strings.EqualFold(u.Name, n) }) {
					continue
				}
				out = append(out, fmt.Sprintf("bots[%d].access.%s: %q is not in web.users, so nobody of that name can sign in to the web console (bot %q)%s",
					i, l.key, n, b.Name, webUsersNote(c.Web.Users)))
			}
		}
	}
	return out
}

// webUsersNote names the web users there are (or says there are none).
func webUsersNote(users []WebUser) string {
	if len(users) == 0 {
		return "; web.users is empty: the only user is the generated " + generatedWebAdmin
	}
	names := make([]string, 0, len(users))
	for _, u := range users {
		names = append(names, u.Name)
	}
	return "; web.users has " + strings.Join(names, ", ")
}
