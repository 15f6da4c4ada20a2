package fakemodel

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"time"
)

// Reply is what the fake answers one Messages API request with: content
// blocks plus a stop reason, or an HTTP error.
type Reply struct {
	Script     string // which script produced it, e.g. "pong", "bash", "tool-result"
	Blocks     []ReplyBlock
	StopReason string // "end_turn" or "tool_use"

	// Chunks is how many text deltas each text block is streamed in
	// (0 = automatic); Delay is the pause between deltas.
	Chunks int
	Delay  time.Duration

	// Status != 0 makes the reply an HTTP error with Anthropic's error body.
	Status       int
	ErrorType    string
	ErrorMessage string
}

// ReplyBlock is a text or tool_use content block of a Reply.
type ReplyBlock struct {
	Type  string         // "text" or "tool_use"
	Text  string         // text
	ID    string         // tool_use: "toolu_fake_<n>"
	Name  string         // tool_use: tool name, e.g. "Bash"
	Input map[string]any // tool_use input
}

// Text returns the reply's text blocks joined with "\n".
func (r Reply) Text() string {
	var parts []string
	for _, b := range r.Blocks {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// text returns a one-block text reply.
func textReply(script, text string) Reply {
	return Reply{Script: script, Blocks: []ReplyBlock{{Type: "text", Text: text}}, StopReason: "end_turn"}
}

// toolReply returns a reply that says lead and then calls tool name.
func toolReply(script, lead, id, name string, input map[string]any) Reply {
	return Reply{
		Script: script,
		Blocks: []ReplyBlock{
			{Type: "text", Text: lead},
			{Type: "tool_use", ID: id, Name: name, Input: input},
		},
		StopReason: "tool_use",
	}
}

// PlanReply decides how the fake model answers req. newToolID is called
// once per tool_use block and must return ids unique within the server.
//
// The decision is stateless — it depends only on the request's messages —
// so it survives --resume and restarts of the fake. It looks at the last
// "user" message and any "system" messages after it:
//   - the newest thing there is user text (LastUserText): that text's
//     script runs; if the message also answers tool calls (the user wrote
//     while a permission was pending) and the script only says text, the
//     tool-result lines come first;
//   - it is a background-task notification: "background done: <summary>";
//   - there are only tool results: the tool loop continues ("tool said: …",
//     "answer was: …", "started in background").
//
// [slow N]/[slowms D] of the latest prompt pace every reply, including the
// text after a tool result.
func PlanReply(req Request, newToolID func() string) Reply {
	origin, _ := ParseScript(LastUserText(req))
	r := planContent(req, newToolID)
	if r.Chunks == 0 {
		r.Chunks = origin.Chunks
	}
	if r.Delay == 0 {
		r.Delay = origin.Delay
	}
	return r
}

// planContent picks the reply content; PlanReply adds the pacing.
func planContent(req Request, newToolID func() string) Reply {
	idx := lastUserMessage(req)
	if idx < 0 {
		return textReply("pong", "pong: ")
	}
	calls := pendingToolResults(req)
	var latest *textEntry
	for _, e := range textEntries(req) {
		if e.Msg >= idx {
			latest = &e
		}
	}
	var r Reply
	switch {
	case latest == nil && len(calls) > 0:
		return toolResultReply(calls)
	case latest == nil:
		return textReply("pong", "pong: ")
	case latest.Kind == kindNotification:
		summary := notificationSummary(latest.Text)
		if origin, _ := ParseScript(LastUserText(req)); origin.OnDone.Name != "" {
			return toolReply("task-notification-tool", "background done: "+summary, newToolID(), origin.OnDone.Name, origin.OnDone.Input)
		}
		r = textReply("task-notification", "background done: "+summary)
	default:
		s, err := ParseScript(latest.Text)
		if err != nil {
			r = textReply("bad-directive", "fakemodel: bad directive: "+err.Error())
		} else {
			r = scriptReply(req, s, latest.Text, newToolID)
		}
		r.Chunks, r.Delay = s.Chunks, s.Delay
	}
	if len(calls) > 0 && r.Status == 0 && r.StopReason == "end_turn" {
		prefix := toolResultReply(calls)
		r.Blocks[0].Text = prefix.Blocks[0].Text + "\n" + r.Blocks[0].Text
	}
	return r
}

// scriptReply builds the reply for a prompt's action.
func scriptReply(req Request, s Script, text string, newToolID func() string) Reply {
	switch s.Action {
	case ActionBash:
		return toolReply(string(s.Action), "Running the command.", newToolID(), "Bash", map[string]any{
			"command":     s.Command,
			"description": "Run the scripted command",
		})
	case ActionBgBash:
		return toolReply(string(s.Action), "Starting it in the background.", newToolID(), "Bash", map[string]any{
			"command":           s.Command,
			"description":       "Run the scripted command in the background",
			"run_in_background": true,
		})
	case ActionWrite:
		return toolReply(string(s.Action), "Writing the file.", newToolID(), "Write", map[string]any{
			"file_path": absPath(req, s.Path),
			"content":   s.Content,
		})
	case ActionEdit:
		return toolReply(string(s.Action), "Editing the file.", newToolID(), "Edit", map[string]any{
			"file_path":  absPath(req, s.Path),
			"old_string": s.OldString,
			"new_string": s.NewString,
		})
	case ActionAsk, ActionAskMulti:
		options := make([]any, 0, len(s.Options))
		for _, o := range s.Options {
			options = append(options, map[string]any{"label": o, "description": "Choose " + o})
		}
		return toolReply(string(s.Action), "I have a question.", newToolID(), "AskUserQuestion", map[string]any{
			"questions": []any{map[string]any{
				"question":    s.Question,
				"header":      "Question",
				"options":     options,
				"multiSelect": s.Action == ActionAskMulti,
			}},
		})
	case ActionTool:
		return toolReply(string(s.Action), "Calling "+s.Tool.Name+".", newToolID(), s.Tool.Name, s.Tool.Input)
	case ActionLong:
		return textReply(string(s.Action), longText(s.Length))
	case ActionError:
		return Reply{
			Script:       string(s.Action),
			Status:       s.Status,
			ErrorType:    errorType(s.Status),
			ErrorMessage: fmt.Sprintf("fakemodel: scripted error %d", s.Status),
		}
	case ActionEchoHistory:
		all := UserTexts(req)
		prior := all[:max(0, len(all)-1)] // everything before this prompt
		if len(prior) == 0 {
			return textReply(string(s.Action), "history: (none)")
		}
		return textReply(string(s.Action), "history: "+strings.Join(prior, " | "))
	default:
		return textReply(string(ActionPong), "pong: "+strings.TrimSpace(text))
	}
}

// toolResultReply continues a tool loop: one line per tool result.
func toolResultReply(calls []toolCall) Reply {
	lines := make([]string, 0, len(calls))
	for _, c := range calls {
		result := c.Result
		if c.IsError {
			result = "ERROR: " + result
		}
		switch {
		case c.Name == "Bash" && c.Input["run_in_background"] == true && !c.IsError:
			lines = append(lines, "started in background")
		case c.Name == "AskUserQuestion":
			lines = append(lines, "answer was: "+result)
		default:
			lines = append(lines, "tool said: "+result)
		}
	}
	return textReply("tool-result", strings.Join(lines, "\n"))
}

// notificationSummary extracts the <summary> of a task notification, or a
// short snippet of it.
func notificationSummary(text string) string {
	if _, after, ok := strings.Cut(text, "<summary>"); ok {
		if summary, _, ok := strings.Cut(after, "</summary>"); ok {
			return strings.TrimSpace(summary)
		}
	}
	_, after, _ := strings.Cut(text, taskNotificationTag)
	after = strings.Join(strings.Fields(after), " ")
	if len(after) > 200 {
		after = after[:200]
	}
	return after
}

// absPath resolves a relative path against the CLI's working directory
// (the Write and Edit tools require absolute paths).
func absPath(req Request, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	if wd := workingDir(req); wd != "" {
		return filepath.Join(wd, p)
	}
	return p
}

// errorType maps an HTTP status to Anthropic's error type.
func errorType(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "invalid_request_error"
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	case 529:
		return "overloaded_error"
	default:
		return "api_error"
	}
}
