package agent

import (
	"log/slog"
	"maps"
	"slices"

	"github.com/agentbridge/agentbridge/agent/acp"
	"github.com/agentbridge/agentbridge/agent/mcprelay"
	"github.com/agentbridge/agentbridge/agent/mcprelay/relay"
)

// listenACPTools serves opts' MCP servers (the bridge's tools) to an agent
// of kind acp, given MCPRelay and a StateDir: each on a socket of its own
// in the session's acp directory (read-only in the sandbox: the agent can
// connect, not replace it), closed after the exit. It returns the sockets
// and the stdio servers to offer the agent: the relay to each socket.
func listenACPTools(opts Options, logger *slog.Logger) (*mcprelay.Set, []acp.StdioServer) {
	if !opts.isACP() || opts.MCPRelay == "" || opts.StateDir == "" || len(opts.MCPServers) == 0 {
		return nil, nil
	}
	names := mcpServerNames(opts)
	hs := make([]mcprelay.Handler, len(names))
	for i, n := range names {
		hs[i] = opts.MCPServers[n].HandleMCP
	}
	set, socks := mcprelay.ListenAll(acpDir(opts), hs, mcprelay.Config{Timeout: opts.MCPTimeout, Log: logger})
	var offered []acp.StdioServer
	for i, sock := range socks {
		if sock != "" {
			offered = append(offered, acp.StdioServer{Name: names[i], Command: opts.MCPRelay, Args: relay.Args(sock)})
		}
	}
	return set, offered
}

// stdioACPServers are the profile's own MCP servers (StdioMCPServers) as
// an agent of kind acp is offered them in session/new and session/load:
// the agent starts each itself, inside its sandbox, as Claude Code does.
func stdioACPServers(opts Options) []acp.StdioServer {
	var out []acp.StdioServer
	for _, name := range slices.Sorted(maps.Keys(opts.StdioMCPServers)) {
		s := opts.StdioMCPServers[name]
		out = append(out, acp.StdioServer{Name: name, Command: s.Command, Args: slices.Clone(s.Args), Env: maps.Clone(s.Env)})
	}
	return out
}
