package acp

// StdioServer is an MCP server the agent starts as a process and talks to
// over its stdin and stdout (ACP's McpServerStdio; every agent supports
// it). Env is set for the process on top of what the agent passes on.
type StdioServer struct {
	Name    string
	Command string // as the agent's sandbox sees it (an absolute path, or a name on its PATH)
	Args    []string
	Env     map[string]string
}

// mcpServers is the mcpServers parameter of session/new and session/load.
func (c *Client) mcpServers() []any {
	type envVar struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	}
	type server struct {
		Name    string   `json:"name"`
		Command string   `json:"command"`
		Args    []string `json:"args"`
		Env     []envVar `json:"env"`
	}
	out := make([]any, 0, len(c.cfg.MCPServers))
	for _, s := range c.cfg.MCPServers {
		srv := server{Name: s.Name, Command: s.Command, Args: append([]string{}, s.Args...), Env: []envVar{}}
		for _, k := range sortedKeys(s.Env) {
			srv.Env = append(srv.Env, envVar{Name: k, Value: s.Env[k]})
		}
		out = append(out, srv)
	}
	return out
}
