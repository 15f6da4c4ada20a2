// Package agent runs persistent Claude Code CLI processes over the
// stream-json protocol (see shared/protocol/PROTOCOL.md: the captures of
// the real CLI 2.1.330 are the reference, copied to testdata/transcripts).
//
// It has three layers:
//
//   - The codec. DecodeLine turns one stdout line into typed Events; every
//     kind the CLI printed in the captures is modelled, anything else is an
//     Unknown (never fatal), a non-JSON line a DecodeError. Lines the host
//     writes are only ever marshalled from the typed structs in wire.go: a
//     malformed stdin line kills the CLI, and a permission answer in any
//     other shape than the one in codec_encode.go hangs the turn. Stdout
//     lines may be up to Options.MaxLineBytes long (64 MiB by default);
//     longer ones are skipped and reported as a DecodeError.
//
//   - Session: one CLI process. Start spawns it with a minimal environment,
//     its own TMPDIR and process group; Send writes user messages at any
//     time (stdin stays open, so follow-ups, mid-turn messages, background
//     tasks and turns the CLI starts itself all work); Respond answers
//     permission requests; Interrupt, SetModel and SetPermissionMode are
//     control requests that wait for the CLI's acknowledgement; Events
//     delivers everything, ending with exactly one Exit, then the channel is
//     closed. The consumer must drain Events until it is closed. What waits
//     for a slow consumer is bounded: deltas are coalesced, then thinking
//     and progress events dropped (an EventsDropped says so), and a
//     consumer that stops reading has its session stopped; results,
//     permission requests and the Exit are never dropped. Options.MCPServers
//     are in-process MCP servers offered to the CLI over the same pipes
//     (SDK transport, see mcp.go): the session answers their mcp_message
//     requests itself.
//
//   - Pool: live sessions by conversation key, at most MaxLive per profile,
//     idle ones stopped after IdleTimeout, the least recently used idle one
//     evicted when a profile is full; busy sessions (turn running,
//     permission pending, background task running) are never stopped. The
//     caller owns session ids and resumes stopped or crashed conversations
//     with Options.Resume. A profile may keep warm spares (KeepSpares):
//     processes started and sent initialize ahead of time, so that a new
//     conversation (AcquireNew) skips the CLI's boot; a spare's session id
//     and state directory become the conversation's.
package agent
