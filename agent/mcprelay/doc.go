// Package mcprelay carries the bridge's in-process MCP servers (the
// agent tools: send_file, schedules, …) to an agent that can only start
// stdio MCP servers: an agent of kind acp, which gets them in the
// mcpServers of session/new and session/load.
//
// Two ends:
//
//   - Server, in the bridge: one Unix socket per MCP server of a session,
//     in the session's state directory, answering each newline-delimited
//     JSON-RPC message with the session's own server
//     (agent.MCPServer.HandleMCP), within bounds (Config).
//   - the relay (package relay), what the agent starts as the stdio MCP
//     server: the bridge binary run as relay.Args, which copies its stdin
//     to the socket and the socket to its stdout.
//
// The relay carries nothing but the socket's path: no token, no
// environment. Whoever can connect to the socket can call the session's
// tools, so the socket is reachable only where the session's state
// directory is (its own sandbox).
package mcprelay
