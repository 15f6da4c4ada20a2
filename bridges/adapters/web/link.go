package web

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentbridge/agentbridge/bridges/adapters/web/auth"
	"github.com/agentbridge/agentbridge/config"
)

// ConsoleURL is the console's address for an http.listen value (a
// wildcard host shows as 127.0.0.1), e.g. "http://127.0.0.1:9464".
func ConsoleURL(listen string) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return "http://" + listen
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// AdminSignInLink returns the link that signs in as the generated admin,
// ConsoleURL/signin#token=TOKEN, for a config without web.users. It makes
// the token (data_dir/web-admin-token, 0600) when the bridge has not made
// it yet; the bridge uses that one when it starts. The token stays valid
// after use, so the link works any number of times until the file is
// deleted. With web.users there is no generated admin: it returns "".
func AdminSignInLink(cfg *config.Config) (string, error) {
	if len(cfg.Web.Users) > 0 {
		return "", nil
	}
	if _, _, err := auth.NewUsers(nil, cfg.DataDir); err != nil {
		return "", err
	}
	path := filepath.Join(cfg.DataDir, auth.AdminTokenFile)
	raw, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("admin token: %w", err)
	}
	return ConsoleURL(cfg.HTTP.Listen) + "/signin#token=" + strings.TrimSpace(string(raw)), nil
}
