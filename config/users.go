package config

import (
	"go.yaml.in/yaml/v3"

	"github.com/agentbridge/agentbridge/config/decode"
)

// This file holds what the two lists of people who sign in with a token,
// web.users and handoff.users, share: the list's decoder and the checks
// of each entry's name and token.

// usersField decodes a users list into dst: a list of mappings (want
// names its items in problems, e.g. "web users"), each decoded with the
// keys fields gives for a new entry. Every item is appended, a bad one
// as a zero entry, so that dst's indexes are the file's.
func usersField[U any](d *decoder, dst *[]U, want string, fields func(*U) map[string]decode.Field) decode.Field {
	return func(v *yaml.Node, p string) {
		d.List(v, p, want, func(item *yaml.Node, ip string) {
			var u U
			if d.MappingItem(item, ip) {
				d.Fields(item, ip, fields(&u))
			}
			*dst = append(*dst, u)
		})
	}
}

// tokenUser is an entry of a users list: a name and a sign-in token.
type tokenUser interface {
	credentials() (name, token string)
}

func (u WebUser) credentials() (name, token string)     { return u.Name, u.Token }
func (u HandoffUser) credentials() (name, token string) { return u.Name, u.Token }

// userRules are what checkUsers says of one users list.
type userRules struct {
	path         string // the list's path: "web.users"
	who          string // one entry, in "duplicate web user …": "web user"
	nameRequired string // the problem of an entry without a name
	tokenEmpty   string // after "is empty (from "${X}"); ": "every web user needs a sign-in token"
	tokenMissing string // the problem of an entry without a token
	uniqueTokens bool   // two entries may not share a token
}

// checkUsers checks each entry of users (the list at r.path) that
// decoded: a name that is present, well formed (webUserName) and unique,
// and a token that is present (not empty from ${ENV}) and at least
// MinWebTokenLength long, and unique when r says so. A key already
// reported is not reported again.
func checkUsers[U tokenUser](d *decoder, r userRules, users []U) {
	names, tokens := map[string]int{}, map[string]int{}
	for i, u := range users {
		p := decode.Index(r.path, i)
		if d.IsBad(p) {
			continue
		}
		name, token := u.credentials()
		np := decode.Child(p, "name")
		switch first, dup := names[name]; {
		case name == "":
			d.Required(np, r.nameRequired)
		case !webUserName.MatchString(name):
			d.Addf(d.LineOf(np), np, "bad user name %s (letters, digits and . _ @ + -, at most 64, starting with a letter or digit)", d.Show(np, name))
		case dup:
			d.Addf(d.LineOf(np), np, "duplicate %s %s (also %s[%d] at line %d)", r.who, d.Show(np, name), r.path, first, d.LineOf(decode.Child(decode.Index(r.path, first), "name")))
		default:
			names[name] = i
		}
		tp := decode.Child(p, "token")
		switch first, dup := tokens[token]; {
		case token == "" && d.IsBad(tp):
		case token == "":
			if raw, ok := d.Raw(tp); ok {
				d.Addf(d.LineOf(tp), tp, "is empty (from %q); %s", raw, r.tokenEmpty)
			} else {
				d.Required(tp, r.tokenMissing)
			}
		case len(token) < MinWebTokenLength && !d.IsBad(tp):
			d.Addf(d.LineOf(tp), tp, "token is too short (at least %d characters; e.g. openssl rand -hex 24)", MinWebTokenLength)
		case dup && r.uniqueTokens:
			d.Addf(d.LineOf(tp), tp, "the same token as %s[%d]: each person needs their own", r.path, first)
		default:
			tokens[token] = i
		}
	}
}
