// Package agent runs persistent Claude Code CLI processes over the
// stream-json protocol, whose events, decoder and encoder live in
// agent/streamjson. Lines are read up to Options.MaxLineBytes (64 MiB by
// default); longer ones are skipped and reported as a streamjson.DecodeError.
//
// Session is one CLI process. Start spawns it with a minimal environment,
// its own TMPDIR and process group; Send writes user messages at any time
// (stdin stays open, so follow-ups, mid-turn messages, background tasks
// and turns the CLI starts itself all work); Respond answers permission
// requests; Interrupt, SetModel and SetPermissionMode are control requests
// that wait for the CLI's acknowledgement; Events delivers everything,
// ending with exactly one Exit, then the channel is closed. The consumer
// must drain Events until it is closed. What waits for a slow consumer is
// bounded: deltas are coalesced, then thinking and progress events dropped
// (a streamjson.EventsDropped says so), and a consumer that stops reading has its
// session stopped; results, permission requests and the Exit are never
// dropped. Options.MCPServers are in-process MCP servers offered to the
// CLI over the same pipes (SDK transport, see mcp.go): the session answers
// their mcp_message requests itself.
//
// Sessions are kept by conversation, capped, stopped when idle and warmed
// ahead of time by agent/pool.
package agent
