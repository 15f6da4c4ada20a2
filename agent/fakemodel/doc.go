// Package fakemodel is a scripted fake of the Anthropic Messages API, so
// tests can run the real Claude Code CLI (`claude`, pinned 2.1.332) offline, with
// no key and no network.
//
// # Use
//
//	srv := fakemodel.New(t)          // 127.0.0.1, logs via t.Log, closed at cleanup
//	cmd := exec.Command("claude", "-p", "--output-format", "stream-json",
//		"--input-format", "stream-json", "--verbose",
//		"--permission-prompt-tool", "stdio", "--include-partial-messages",
//		"--session-id", id)
//	cmd.Env = append(srv.Env(), "HOME="+home, "TMPDIR="+tmp, "PATH="+os.Getenv("PATH"))
//	cmd.Dir = workdir
//	// write {"type":"user","message":{"role":"user","content":"[bash touch x]"},"uuid":"…"} lines
//	...
//	srv.Requests() // everything the CLI sent, parsed
//
// Start(logger) does the same for non-test code (the caller closes it);
// StartWith(Options) also takes another Planner than PlanReply and can
// forget requests instead of recording them (the bridge's demo mode,
// package agent/demomodel, runs it that way). The package does not link
// the testing package.
// Env sets ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY=test-key,
// DISABLE_TELEMETRY, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC,
// DISABLE_AUTOUPDATER and CLAUDE_CODE_MAX_RETRIES=0 (API errors fail at
// once instead of being retried for minutes).
//
// # What the CLI sends (observed with 2.1.330 and the Env above; the same with 2.1.332)
//
//   - Every turn step: POST /v1/messages?beta=true, "stream": true,
//     max_tokens 128000, model "claude-opus-5-5" (default), thinking
//     {"type":"adaptive"}, 13 tools, a system array (billing header, identity,
//     main prompt). "messages" holds role "user", "assistant" AND "system"
//     entries: the environment block (working directory, …) is a "system"
//     message after the first user message, and a message the user sends
//     while a permission is pending arrives as a "system" message
//     "The user sent a new message while you were working:\n<text>\n\n…".
//     User messages start with <system-reminder> blocks; a prompt that
//     failed with an API error is merged into the next user message.
//   - After a set_model control request: one non-streaming probe,
//     POST /v1/messages?beta=true with max_tokens 1, the new model, no tools
//     and the single user text "Hi".
//   - A background task's end starts a turn whose user message is one
//     <system-reminder> text containing <task-notification>…<summary>…</summary>.
//   - Nothing else: no count_tokens, no title generation, no telemetry.
//     count_tokens is answered anyway ({"input_tokens":N}); any other path
//     gets a 404 not_found_error JSON and is logged as unexpected.
//
// # Scripts
//
// The fake answers from the newest user text (see LastUserText) and the
// directives in it, "[name args]" anywhere in the text. Arguments run to
// the matching "]" (brackets nest). The first action directive wins.
//
//	(none)                 "pong: <text>" in a few text deltas
//	[slow N]               stream the text in N deltas, 100 ms apart (short texts are
//	                       padded with '.'); applies to every reply of the prompt,
//	                       including the one after a tool result
//	[slowms D]             set that pause to D milliseconds
//	[bash CMD]             text "Running the command." + tool_use Bash
//	                       {"command":CMD,"description":"Run the scripted command"};
//	                       after the tool result: "tool said: <result>"
//	[bgbash CMD]           same with "run_in_background":true; after the tool result:
//	                       "started in background"; the turn the CLI starts when the
//	                       task ends gets "background done: <summary>"
//	[write PATH CONTENT]   tool_use Write {"file_path","content"}
//	[edit PATH OLD NEW]    tool_use Edit {"file_path","old_string","new_string"};
//	                       relative paths are resolved against the CLI's working
//	                       directory; arguments may be Go-quoted ("a b\n");
//	                       after the result: "tool said: <result>"
//	[ask Q | OPT1 | OPT2]  tool_use AskUserQuestion with one question (header
//	                       "Question", options {label, description "Choose <label>"},
//	                       multiSelect false; the CLI wants 2-4 options);
//	                       after the result: "answer was: <result>"
//	[askmulti Q | A | B]   the same with multiSelect true
//	[long N]               about N characters of paragraphs plus a ```go block;
//	                       from N=4000 the code block alone exceeds 2000 characters
//	[error STATUS]         HTTP STATUS with {"type":"error","error":{"type":T,"message":M}}
//	                       (T: 400 invalid_request_error, 401 authentication_error,
//	                       429 rate_limit_error, 529 overloaded_error, else api_error)
//	[tool NAME JSON]       tool_use NAME with the JSON object as input (e.g. an MCP
//	                       tool: [tool mcp__bridge__send_message {"text":"hi"}]);
//	                       after the result: "tool said: <result>"
//	[ondone NAME JSON]     with [bgbash CMD]: the turn the CLI starts when the task
//	                       ends says "background done: <summary>" and calls NAME
//	                       with the JSON input (then "tool said: <result>")
//	[echo-history]         "history: a | b | c": every earlier user text the request
//	                       carries (CLI reminders and slash-command records excluded),
//	                       e.g. to check what a --resume restored
//
// A tool result that is an error reads "tool said: ERROR: <message>". When
// the user wrote while a tool call was pending, a text reply is prefixed with
// the tool-result lines ("tool said: …\npong: <text>"). A malformed directive
// ("[slow x]") answers "fakemodel: bad directive: …". Decisions depend only on
// the request, never on server state, so they survive --resume and restarts.
// Tool ids are "toolu_fake_<n>", unique per server; message ids "msg_fake_<n>";
// the "request-id" header "req_fake_<n>".
//
// # Wire format
//
// Streams follow the Messages API: message_start (usage input_tokens,
// output_tokens 1), ping, per block content_block_start /
// content_block_delta (text_delta or input_json_delta) / content_block_stop,
// message_delta (stop_reason "end_turn" or "tool_use", usage output_tokens),
// message_stop. Usage is a rough count (10 + message characters / 4) so the
// CLI reports a non-zero cost. A stream whose client hangs up (interrupt) is
// recorded with Script "<script> (cut)".
package fakemodel
