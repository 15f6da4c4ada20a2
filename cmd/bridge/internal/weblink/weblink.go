// Package weblink holds `bridge web-link`: how to sign in to the web
// console.
package weblink

import (
	"errors"
	"fmt"
	"strings"

	"github.com/agentbridge/agentbridge/bridges/adapters/web"
	"github.com/agentbridge/agentbridge/bridges/adapters/web/auth"
	"github.com/agentbridge/agentbridge/cmd/bridge/internal/cli"
)

// Run runs `bridge web-link [-config FILE]`: without web.users it prints
// a sign-in link for the generated admin (it works whether or not
// somebody has signed in, and makes the token when the bridge has not run
// yet); with web.users, the console's address and that each user signs
// in with the token the config gives them (tokens are never printed). It
// needs no running bridge.
func Run(args []string, env cli.Env) error {
	cfg, err := env.LoadConfig("web-link", args)
	if err != nil {
		return err
	}
	if cfg.HTTP.Listen == "" || cfg.WebBot() == nil && len(cfg.Web.Users) == 0 {
		return cli.UsageError{Err: errors.New("the config has no web console: it needs http.listen and a bot with platform: web (docs/web.md)")}
	}
	base := web.ConsoleURL(cfg.HTTP.Listen)
	if len(cfg.Web.Users) > 0 {
		names := make([]string, 0, len(cfg.Web.Users))
		for _, u := range cfg.Web.Users {
			names = append(names, u.Name)
		}
		fmt.Fprintf(env.Stdout, "Web console: %s/signin\nweb.users is configured (%s): each user signs in there with the token the config gives them (web.users[].token), or opens %s/signin#token=THEIR_TOKEN.\n",
			base, strings.Join(names, ", "), base)
		return nil
	}
	link, err := web.AdminSignInLink(cfg)
	if err != nil {
		return fmt.Errorf("sign-in link: %w", err)
	}
	fmt.Fprintf(env.Stdout, "Open %s to sign in as %s.\n(The link carries the admin token: keep it secret.)\n", link, auth.GeneratedAdmin)
	return nil
}
