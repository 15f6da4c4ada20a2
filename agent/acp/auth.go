package acp

import (
	"slices"
	"strings"
)

// codeAuthRequired is ACP's "authentication required" error code.
const codeAuthRequired = -32000

// authMethod is one of initialize's authMethods.
type authMethod struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Type string `json:"type"` // "env_var" for a key in the environment; "" for an interactive login
	Vars []struct {
		Name string `json:"name"`
	} `json:"vars"`
}

// authenticate answers "authentication required" to session/new or
// session/load (method): it sends authenticate with the agent's first
// env_var method whose variables the agent has (Config.EnvVars), after
// which a new session is asked for. It reports false when no method fits
// (the set-up then fails, saying which methods the agent offers). c.mu is
// held.
func (c *Client) authenticate(method string) bool {
	c.authed = true
	for _, m := range c.auth {
		if m.Type != "env_var" || len(m.Vars) == 0 {
			continue
		}
		ok := true
		for _, v := range m.Vars {
			ok = ok && slices.Contains(c.cfg.EnvVars, v.Name)
		}
		if ok {
			c.cfg.Log.Info("acp agent asks for authentication", "method", m.ID, "after", method)
			c.loading = false
			c.retryLoad = method == "session/load"
			c.call("authenticate", map[string]string{"methodId": m.ID})
			return true
		}
	}
	var offered []string
	for _, m := range c.auth {
		desc := m.Name
		if len(m.Vars) > 0 {
			var names []string
			for _, v := range m.Vars {
				names = append(names, v.Name)
			}
			desc += " (env " + strings.Join(names, ", ") + ")"
		}
		offered = append(offered, desc)
	}
	c.setupHint = "the agent needs a login; it offers: " + strings.Join(offered, "; ") + ". Set the key in the profile's env"
	return false
}
