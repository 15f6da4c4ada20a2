// Package acp is the client side of the Agent Client Protocol (ACP):
// JSON-RPC 2.0 over an agent process's stdin and stdout, one message a
// line. It is a state machine without processes or goroutines: Handle is
// given each line the agent wrote, Send, Respond and Cancel are the
// host's calls, and both queue the lines to write (Next) and emit the
// agent/streamjson events the bridge's core already consumes for the
// Claude Code CLI, so the core drives either kind of agent the same way.
// agent.Session runs it for agents of kind acp.
//
// The mapping (see Client): initialize, then session/new (or session/load
// when resuming a known session of an agent that advertises loadSession;
// a Notice says when it cannot); each prompt turn is an Init, the chunks
// of the agent's message are TextDeltas and an AssistantText, tool calls
// are ToolUse and ToolResult, a plan is a TodoWrite call, the prompt's
// response is the Result, and Lifecycle receipts follow each message from
// queued to started to completed (or cancelled). Messages sent while a
// prompt runs are queued and sent together as the next prompt, as the
// protocol allows one prompt at a time. session/request_permission is a
// PermissionRequest (a shell command as Bash, so the bridge's Bash
// analyzer and rules apply); Respond picks the agent's option that
// matches the decision. Cancel is session/cancel: pending permission
// requests are answered "cancelled" and withdrawn, and a permission
// request that arrives after it is refused at once. Requests the bridge
// does not serve (fs/*, terminal/*, anything else) get a JSON-RPC error,
// so the agent never waits; malformed lines and unknown notifications are
// reported, never fatal.
package acp
