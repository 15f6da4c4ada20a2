package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/agentbridge/agentbridge/bridges/web"
)

// cmdWebLink prints how to sign in to the web console: without web.users,
// a sign-in link for the generated admin (it works whether or not somebody
// has signed in, and makes the token when the bridge has not run yet);
// with web.users, the console's address and that each user signs in with
// the token the config gives them (tokens are never printed). It needs no
// running bridge.
func cmdWebLink(args []string, stdout, stderr io.Writer, lookupEnv func(string) (string, bool)) error {
	cfg, err := loadConfig("web-link", args, stderr, lookupEnv)
	if err != nil {
		return err
	}
	if cfg.HTTP.Listen == "" || cfg.WebBot() == nil && len(cfg.Web.Users) == 0 {
		return usageError{errors.New("the config has no web console: it needs http.listen and a bot with platform: web (docs/web.md)")}
	}
	base := web.ConsoleURL(cfg.HTTP.Listen)
	if len(cfg.Web.Users) > 0 {
		names := make([]string, 0, len(cfg.Web.Users))
		for _, u := range cfg.Web.Users {
			names = append(names, u.Name)
		}
		fmt.Fprintf(stdout, "Web console: %s/signin\nweb.users is configured (%s): each user signs in there with the token the config gives them (web.users[].token), or opens %s/signin#token=THEIR_TOKEN.\n",
			base, strings.Join(names, ", "), base)
		return nil
	}
	link, err := web.AdminSignInLink(cfg)
	if err != nil {
		return fmt.Errorf("sign-in link: %w", err)
	}
	fmt.Fprintf(stdout, "Open %s to sign in as %s.\n(The link carries the admin token: keep it secret.)\n", link, web.GeneratedAdmin)
	return nil
}
