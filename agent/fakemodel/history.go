package fakemodel

import (
	"encoding/json"
	"strings"
)

// Markers of text the CLI writes into the conversation itself. Such text is
// never treated as what the user typed.
const (
	// systemReminderPrefix starts reminder blocks (attribution notes,
	// file-change notices, background-task notifications).
	systemReminderPrefix = "<system-reminder>"
	// taskNotificationTag marks the notification of a finished background
	// task, inside a system reminder of a turn the CLI starts by itself.
	taskNotificationTag = "<task-notification>"
	// foldedPrefix starts the "system" message that carries a user message
	// sent while a permission was pending; foldedSuffix ends its quote.
	foldedPrefix = "The user sent a new message while you were working:"
	foldedSuffix = "\n\nThis is how Claude Code surfaces messages"
)

// cliTagPrefixes start user-role text blocks the CLI records for local
// slash commands such as /model (sent by set_model).
var cliTagPrefixes = []string{"<local-command-", "<command-name>", "<command-message>", "<command-args>"}

// textKind classifies a text block of the conversation.
type textKind int

const (
	kindCLI          textKind = iota // written by the CLI, ignored
	kindUser                         // typed by the user
	kindFolded                       // typed by the user mid-turn, surfaced by the CLI
	kindNotification                 // a background task finished
)

// textEntry is one classified text block.
type textEntry struct {
	Msg  int // index into Request.Messages
	Kind textKind
	Text string // user text (unquoted for kindFolded), or the whole notification
}

// classify decides what a text block of a message with the given role is.
func classify(role, text string) (textKind, string) {
	trimmed := strings.TrimSpace(text)
	switch {
	case strings.HasPrefix(trimmed, systemReminderPrefix):
		if strings.Contains(trimmed, taskNotificationTag) {
			return kindNotification, trimmed
		}
		return kindCLI, ""
	case strings.HasPrefix(trimmed, foldedPrefix):
		quoted := strings.TrimPrefix(trimmed, foldedPrefix)
		if i := strings.Index(quoted, foldedSuffix); i >= 0 {
			quoted = quoted[:i]
		}
		return kindFolded, strings.TrimSpace(quoted)
	case role != "user":
		return kindCLI, ""
	case strings.HasPrefix(trimmed, taskNotificationTag):
		return kindNotification, trimmed
	}
	for _, p := range cliTagPrefixes {
		if strings.HasPrefix(trimmed, p) {
			return kindCLI, ""
		}
	}
	return kindUser, text
}

// textEntries classifies every text block of user and system messages,
// oldest first, dropping the CLI's own.
func textEntries(req Request) []textEntry {
	var out []textEntry
	for i, m := range req.Messages {
		if m.Role != "user" && m.Role != "system" {
			continue
		}
		for _, b := range m.Blocks {
			if b.Type != "text" {
				continue
			}
			if kind, text := classify(m.Role, b.Text); kind != kindCLI {
				out = append(out, textEntry{Msg: i, Kind: kind, Text: text})
			}
		}
	}
	return out
}

// LastUserText returns the text the scripts react to: the most recent text
// the user wrote — normally the last text block of the last "user" message
// that has one, or a message the user sent mid-turn that the CLI surfaced
// in a "system" message. Tool results, the CLI's <system-reminder> blocks,
// task notifications and slash-command records are skipped, so while a
// tool loop runs this still returns the prompt that started it. It returns
// "" when the user wrote nothing.
func LastUserText(req Request) string {
	entries := textEntries(req)
	for i := len(entries) - 1; i >= 0; i-- {
		if entries[i].Kind == kindUser || entries[i].Kind == kindFolded {
			return entries[i].Text
		}
	}
	return ""
}

// UserTexts returns every text the user wrote in req (as LastUserText
// picks them), oldest first, each trimmed of surrounding white space.
func UserTexts(req Request) []string {
	var out []string
	for _, e := range textEntries(req) {
		if e.Kind == kindUser || e.Kind == kindFolded {
			out = append(out, strings.TrimSpace(e.Text))
		}
	}
	return out
}

// lastUserMessage returns the index of the last "user" message, or -1.
// The CLI may append "system" messages after it.
func lastUserMessage(req Request) int {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == "user" {
			return i
		}
	}
	return -1
}

// toolCall pairs a tool_result with the tool_use it answers.
type toolCall struct {
	Name    string
	Input   map[string]any
	Result  string
	IsError bool
}

// ToolResult is a tool_result block with the model's tool_use block it
// answers (the zero Block when none before it does).
type ToolResult struct {
	Use     Block
	Text    string
	IsError bool
}

// AnsweredTools returns the tool_result blocks of the request's last
// "user" message (the CLI may append "system" messages after it), each
// with the tool_use block before it that it answers.
func AnsweredTools(req Request) []ToolResult {
	idx := lastUserMessage(req)
	if idx < 0 {
		return nil
	}
	uses := map[string]Block{}
	for _, m := range req.Messages[:idx] {
		if m.Role != "assistant" {
			continue
		}
		for _, b := range m.Blocks {
			if b.Type == "tool_use" {
				uses[b.ID] = b
			}
		}
	}
	var out []ToolResult
	for _, b := range req.Messages[idx].Blocks {
		if b.Type == "tool_result" {
			out = append(out, ToolResult{Use: uses[b.ToolUseID], Text: b.Text, IsError: b.IsError})
		}
	}
	return out
}

// pendingToolResults returns the tool calls the last "user" message
// answers (AnsweredTools), with their inputs decoded.
func pendingToolResults(req Request) []toolCall {
	var calls []toolCall
	for _, r := range AnsweredTools(req) {
		c := toolCall{Name: r.Use.Name, Result: r.Text, IsError: r.IsError}
		_ = json.Unmarshal(r.Use.Input, &c.Input) // a non-object input just leaves Input nil
		calls = append(calls, c)
	}
	return calls
}

// workingDir extracts the CLI's working directory from the environment
// section it sends ("Primary working directory: /path"), or "".
func workingDir(req Request) string {
	const marker = "Primary working directory: "
	find := func(s string) string {
		i := strings.Index(s, marker)
		if i < 0 {
			return ""
		}
		rest := s[i+len(marker):]
		if j := strings.IndexByte(rest, '\n'); j >= 0 {
			rest = rest[:j]
		}
		return strings.TrimSpace(rest)
	}
	for _, m := range req.Messages {
		for _, b := range m.Blocks {
			if b.Type == "text" {
				if d := find(b.Text); d != "" {
					return d
				}
			}
		}
	}
	return find(req.System)
}
