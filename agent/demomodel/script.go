package demomodel

import (
	"cmp"
	"encoding/json"
	"strings"
	"time"
	"unicode"

	"github.com/agentbridge/agentbridge/agent/fakemodel"
	"github.com/agentbridge/agentbridge/internal/textcut"
)

// Script names (fakemodel.Reply.Script) of the demo's answers, for logs
// and tests.
const (
	ScriptIntro         = "demo-intro"
	ScriptCommand       = "demo-command"
	ScriptCommandOutput = "demo-command-output"
	ScriptCommandDenied = "demo-command-denied"
	ScriptQuestion      = "demo-question"
	ScriptAnswer        = "demo-answer"
	ScriptMarkdown      = "demo-markdown"
	ScriptOtherTool     = "demo-other-tool"
)

// DemoCommand is the only command the demo agent asks to run. It writes a
// file in the agent's workdir because the CLI runs read-only commands
// (ls, date, …) without asking, and the demo is about the permission card.
const DemoCommand = "echo 'Hello from your agent' > hello.txt && ls -l hello.txt"

// Question is the demo's AskUserQuestion; Options are its choices, in order.
const Question = "Which chat platform would you connect first?"

// Options of Question: labels (shown on the buttons) and descriptions.
var questionOptions = []struct{ Label, Description string }{
	{"Slack", "Socket Mode, no public URL needed"},
	{"Discord", "a bot in your server"},
	{"WhatsApp", "linked to a phone number"},
	{"Web console only", "invite teammates to this page"},
}

// Pacing: the introduction streams visibly, the markdown demo slowly
// enough to press Stop.
const (
	introChunks    = 24
	introDelay     = 40 * time.Millisecond
	markdownChunks = 50
	markdownDelay  = 60 * time.Millisecond
)

// intent is what a prompt asks the demo for.
type intent int

const (
	intentIntro intent = iota
	intentCommand
	intentQuestion
	intentMarkdown
)

// keywords maps lower-case words to intents; the first keyword of a prompt
// decides.
var keywords = map[string]intent{
	"run": intentCommand, "running": intentCommand, "command": intentCommand, "commands": intentCommand,
	"bash": intentCommand, "shell": intentCommand, "permission": intentCommand, "permissions": intentCommand,
	"ls": intentCommand, "date": intentCommand, "tool": intentCommand,
	"question": intentQuestion, "questions": intentQuestion, "ask": intentQuestion, "choose": intentQuestion,
	"choice": intentQuestion, "pick": intentQuestion,
	"markdown": intentMarkdown, "stream": intentMarkdown, "streaming": intentMarkdown, "long": intentMarkdown,
	"table": intentMarkdown, "code": intentMarkdown, "format": intentMarkdown, "formatting": intentMarkdown,
}

// Plan is the demo's fakemodel.Planner. When the newest user message
// carries tool results it continues the tool loop (the command's output,
// a denial, the chosen answer); otherwise it answers the user's latest
// text (fakemodel.LastUserText) by its first keyword, or with the
// introduction.
func Plan(req fakemodel.Request, newToolID func() string) fakemodel.Reply {
	if calls := answeredCalls(req); len(calls) > 0 {
		return afterTools(calls)
	}
	switch promptIntent(fakemodel.LastUserText(req)) {
	case intentCommand:
		return toolReply(ScriptCommand, commandLead, newToolID(), "Bash",
			map[string]any{"command": DemoCommand, "description": "Write hello.txt in the workspace and list it"})
	case intentQuestion:
		opts := make([]any, 0, len(questionOptions))
		for _, o := range questionOptions {
			opts = append(opts, map[string]any{"label": o.Label, "description": o.Description})
		}
		return toolReply(ScriptQuestion, "I have a question for you.", newToolID(), "AskUserQuestion", map[string]any{
			"questions": []any{map[string]any{
				"question": Question, "header": "Platform", "options": opts, "multiSelect": false,
			}},
		})
	case intentMarkdown:
		r := textReply(ScriptMarkdown, markdownText)
		r.Chunks, r.Delay = markdownChunks, markdownDelay
		return r
	default:
		r := textReply(ScriptIntro, introText)
		r.Chunks, r.Delay = introChunks, introDelay
		return r
	}
}

// promptIntent returns the intent of the first keyword in text.
func promptIntent(text string) intent {
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	for _, w := range words {
		if in, ok := keywords[w]; ok {
			return in
		}
	}
	return intentIntro
}

// toolCall is a tool_use of the model and the tool_result that answers it.
type toolCall struct {
	Name    string
	Input   json.RawMessage
	Result  string
	IsError bool
}

// answeredCalls returns the tool calls the last "user" message answers.
func answeredCalls(req fakemodel.Request) []toolCall {
	var calls []toolCall
	for _, r := range fakemodel.AnsweredTools(req) {
		calls = append(calls, toolCall{Name: r.Use.Name, Input: r.Use.Input, Result: r.Text, IsError: r.IsError})
	}
	return calls
}

// afterTools continues the tool loop: one paragraph per answered call.
func afterTools(calls []toolCall) fakemodel.Reply {
	script := ScriptOtherTool
	parts := make([]string, 0, len(calls))
	for _, c := range calls {
		switch {
		case c.Name == "AskUserQuestion" && !c.IsError:
			script = ScriptAnswer
			parts = append(parts, answerText(chosenAnswer(c.Result)))
		case c.Name == "AskUserQuestion":
			script = ScriptAnswer
			parts = append(parts, "You did not answer ("+resultLine(c.Result)+"). Say **ask me a question** to see the card again.")
		case c.Name == "Bash" && !c.IsError:
			script = ScriptCommandOutput
			parts = append(parts, "The command ran in my sandbox and printed:\n\n"+fenced(c.Result)+"\n\n"+commandOutro)
		case c.Name == "Bash":
			script = ScriptCommandDenied
			parts = append(parts, "Nothing ran: "+resultLine(c.Result)+"\n\n"+deniedOutro)
		default:
			parts = append(parts, "The tool answered: "+resultLine(c.Result))
		}
	}
	return textReply(script, strings.Join(parts, "\n\n"))
}

// chosenAnswer extracts the answer from the CLI's AskUserQuestion result,
// `Your questions have been answered: "Q"="A". …`; "" when it cannot.
func chosenAnswer(result string) string {
	_, after, ok := strings.Cut(result, `"="`)
	if !ok {
		return ""
	}
	answer, _, ok := strings.Cut(after, `"`)
	if !ok {
		return ""
	}
	return answer
}

// resultLine shortens a tool result to one line of at most 200 characters
// (and "…"), or "no details" when it is empty.
func resultLine(s string) string {
	return cmp.Or(textcut.OneLine(s, 201), "no details")
}

// fenced puts s in a code block whose fence does not occur in s.
func fenced(s string) string {
	fence := "```"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	return fence + "text\n" + strings.TrimRight(s, "\n") + "\n" + fence
}

func textReply(script, text string) fakemodel.Reply {
	return fakemodel.Reply{
		Script: script, StopReason: "end_turn",
		Blocks: []fakemodel.ReplyBlock{{Type: "text", Text: text}},
	}
}

func toolReply(script, lead, id, name string, input map[string]any) fakemodel.Reply {
	return fakemodel.Reply{
		Script: script, StopReason: "tool_use",
		Blocks: []fakemodel.ReplyBlock{
			{Type: "text", Text: lead},
			{Type: "tool_use", ID: id, Name: name, Input: input},
		},
	}
}
