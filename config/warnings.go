package config

import (
	"fmt"
	"slices"
	"strings"
)

// generatedWebAdmin is the user the console makes without web.users
// (bridges/web/auth.GeneratedAdmin).
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
