// Package demomodel is the bridge's built-in scripted model for
// `bridge run -demo`: a fake of the Anthropic Messages API (package
// agent/fakemodel, on 127.0.0.1 with a random port) that the real Claude
// Code CLI talks to, so a newcomer can try the bridge with no account and
// no network.
//
// Its script (Plan) recognises a few prompts and otherwise explains that
// this is a demo and how to connect real Claude and other chat platforms:
//
//   - "run a command" (also: command, bash, shell, permission, ls, date):
//     the agent asks to write hello.txt in its workdir with the Bash tool
//     (DemoCommand; read-only commands would run without asking), so a
//     permission card appears; after approval it shows the command's
//     output, after a denial it says that nothing ran;
//   - "ask me a question" (also: question, ask, choose, card): an
//     AskUserQuestion card "Which chat platform would you connect first?";
//     the answer gets the steps for that platform;
//   - "show markdown" (also: markdown, stream, long, table, code): a longer
//     answer streamed slowly (time to try the Stop button) with a list, a
//     table and a code block;
//   - anything else: the streamed introduction.
//
// The script never turns user text into a command or a path: the only tool
// calls it makes are the fixed ones above, and directives of the test fake
// ("[bash …]") are plain text here. Answers depend only on the request, so
// they survive --resume and bridge restarts. The server keeps no request
// history (fakemodel.Options.Forget), so it runs for weeks in constant
// memory.
package demomodel
