package acp

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentbridge/agentbridge/agent/streamjson"
)

// toolState is what the client knows of one tool call.
type toolState struct {
	name  string
	input json.RawMessage
	title string
	kind  string
	done  bool // its ToolResult was emitted
}

// onUpdate maps one session/update notification to events. c.mu is held.
func (c *Client) onUpdate(params json.RawMessage) {
	var p struct {
		SessionID string          `json:"sessionId"`
		Update    json.RawMessage `json:"update"`
	}
	var kind struct {
		SessionUpdate string `json:"sessionUpdate"`
	}
	if json.Unmarshal(params, &p) != nil || json.Unmarshal(p.Update, &kind) != nil {
		c.badLine(params, fmt.Errorf("session/update without an update"))
		return
	}
	switch kind.SessionUpdate {
	case "agent_message_chunk", "agent_thought_chunk":
		var u struct {
			Content contentBlock `json:"content"`
		}
		_ = json.Unmarshal(p.Update, &u)
		if u.Content.Type != "text" || u.Content.Text == "" {
			return
		}
		if kind.SessionUpdate == "agent_thought_chunk" {
			c.emit(streamjson.ThinkingDelta{Text: u.Content.Text})
			return
		}
		c.block = append(c.block, u.Content.Text...)
		c.emit(streamjson.TextDelta{Text: u.Content.Text})
	case "tool_call", "tool_call_update":
		var tc toolCall
		if json.Unmarshal(p.Update, &tc) != nil || tc.ToolCallID == "" {
			c.badLine(p.Update, fmt.Errorf("%s without a toolCallId", kind.SessionUpdate))
			return
		}
		c.onToolCall(tc)
	case "plan":
		c.onPlan(p.Update)
	case "user_message_chunk":
		// The agent's echo of our own prompt: nothing new.
	default:
		// available_commands_update, current_mode_update and whatever a
		// later version adds: passed on as Unknown (logged, ignored).
		c.emit(streamjson.Unknown{Type: "acp/session_update", Subtype: kind.SessionUpdate, Raw: append(json.RawMessage(nil), p.Update...)})
	}
}

// flushText ends the agent's current text block, if any, with an
// AssistantText. c.mu is held.
func (c *Client) flushText() {
	if len(c.block) > 0 {
		c.emit(streamjson.AssistantText{Text: string(c.block)})
	}
}

// onToolCall maps a tool_call or tool_call_update: the first sight of a
// call is a ToolUse, its completion or failure a ToolResult. c.mu is held.
func (c *Client) onToolCall(tc toolCall) {
	t, seen := c.tools[tc.ToolCallID]
	if !seen {
		t = &toolState{}
		c.tools[tc.ToolCallID] = t
	}
	t.merge(tc)
	if !seen {
		c.flushText()
		c.block = c.block[:0]
		c.emit(streamjson.ToolUse{ID: tc.ToolCallID, Name: t.name, Input: t.input})
	}
	status := ""
	if tc.Status != nil {
		status = *tc.Status
	}
	if (status == "completed" || status == "failed") && !t.done {
		t.done = true
		c.emit(streamjson.ToolResult{ToolUseID: tc.ToolCallID, IsError: status == "failed", Content: toolOutput(tc)})
	}
}

// merge applies an update's fields to t and maps it to a tool name and
// input the bridge knows (shellCall).
func (t *toolState) merge(tc toolCall) {
	if tc.Title != nil {
		t.title = *tc.Title
	}
	if tc.Kind != nil {
		t.kind = *tc.Kind
	}
	var path string
	if len(tc.Locations) > 0 {
		path = tc.Locations[0].Path
	}
	raw := tc.RawInput
	if (len(raw) == 0 || string(raw) == "null") && t.name == "" {
		raw = contentArgs(tc)
	}
	if len(raw) > 0 && string(raw) != "null" || t.name == "" {
		t.name, t.input = toolOf(t.kind, t.title, raw, path)
	}
}

// contentArgs is the arguments of a call announced without rawInput whose
// content is one text that is a JSON object (Gemini CLI's calls of MCP
// tools, also in their permission requests), or nil. A finished call's
// content is its output, never its arguments.
func contentArgs(tc toolCall) json.RawMessage {
	if tc.Status != nil && (*tc.Status == "completed" || *tc.Status == "failed") || len(tc.Content) != 1 {
		return nil
	}
	c := tc.Content[0]
	if c.Type != "content" || c.Content.Type != "text" {
		return nil
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(c.Content.Text), &obj) != nil || obj == nil {
		return nil
	}
	return json.RawMessage(c.Content.Text)
}

// toolOf names a tool call the way the bridge's rules and renderers know
// tools: a shell command is Bash with {"command"} (so the Bash analyzer
// and Bash rules apply), a read Read and an edit Edit with {"file_path"},
// a fetch WebFetch with {"url"}; anything else keeps the agent's kind
// ("Other" when it gave none) with its raw input.
func toolOf(kind, title string, raw json.RawMessage, path string) (string, json.RawMessage) {
	var in map[string]any
	_ = json.Unmarshal(raw, &in)
	if cmd := shellCommand(in); cmd != "" && (kind == "execute" || kind == "") {
		return "Bash", mustJSON(map[string]any{"command": cmd, "description": title})
	}
	if kind == "execute" {
		// A shell call whose command the agent did not give: Bash with the
		// title, which the analyzer cannot parse, so it is always asked.
		return "Bash", mustJSON(map[string]any{"command": title, "description": title})
	}
	str := func(keys ...string) string {
		for _, k := range keys {
			if s, ok := in[k].(string); ok && s != "" {
				return s
			}
		}
		return ""
	}
	switch kind {
	case "read":
		return "Read", mustJSON(map[string]any{"file_path": cmp.Or(str("file_path", "path", "absolute_path", "filePath"), path)})
	case "edit":
		return "Edit", mustJSON(map[string]any{"file_path": cmp.Or(str("file_path", "path", "absolute_path", "filePath"), path)})
	case "fetch":
		if u := str("url"); u != "" {
			return "WebFetch", mustJSON(map[string]any{"url": u})
		}
	}
	name := "Other"
	if kind != "" {
		name = strings.ToUpper(kind[:1]) + kind[1:]
	}
	if in == nil {
		in = map[string]any{}
	}
	if title != "" {
		if _, ok := in["description"]; !ok {
			in["description"] = title
		}
	}
	return name, mustJSON(in)
}

// shellCommand is the command line of a shell tool call's input: its
// "command" as a string, or as an argv whose shell script ("sh -c X",
// "bash -lc X") is the command, else the argv joined.
func shellCommand(in map[string]any) string {
	switch v := in["command"].(type) {
	case string:
		return v
	case []any:
		argv := make([]string, 0, len(v))
		for _, a := range v {
			s, ok := a.(string)
			if !ok {
				return ""
			}
			argv = append(argv, s)
		}
		if n := len(argv); n == 3 && (argv[1] == "-c" || argv[1] == "-lc") {
			switch strings.TrimPrefix(argv[0], "/bin/") {
			case "sh", "bash", "zsh", "/usr/bin/bash", "/usr/bin/zsh":
				return argv[2]
			}
		}
		return strings.Join(argv, " ")
	}
	return ""
}

// toolOutput flattens a tool call's content (or raw output) to text.
func toolOutput(tc toolCall) string {
	var b strings.Builder
	for _, c := range tc.Content {
		switch c.Type {
		case "content":
			if c.Content.Type == "text" {
				b.WriteString(c.Content.Text)
			}
		case "diff":
			fmt.Fprintf(&b, "(edited %s)", c.Path)
		}
	}
	if b.Len() == 0 && len(tc.RawOutput) > 0 && string(tc.RawOutput) != "null" {
		var s string
		if json.Unmarshal(tc.RawOutput, &s) == nil {
			return s
		}
		return string(tc.RawOutput)
	}
	return b.String()
}

// onPlan shows the agent's plan the way the bridge shows Claude Code's
// to-do list: a TodoWrite call with the entries, and its result.
func (c *Client) onPlan(update json.RawMessage) {
	var u struct {
		Entries []struct {
			Content string `json:"content"`
			Status  string `json:"status"`
		} `json:"entries"`
	}
	if json.Unmarshal(update, &u) != nil {
		c.badLine(update, fmt.Errorf("plan without entries"))
		return
	}
	todos := make([]map[string]string, 0, len(u.Entries))
	for _, e := range u.Entries {
		todos = append(todos, map[string]string{"content": e.Content, "status": e.Status, "activeForm": e.Content})
	}
	c.planN++
	id := fmt.Sprintf("acp-plan-%d", c.planN)
	c.flushText()
	c.block = c.block[:0]
	c.emit(streamjson.ToolUse{ID: id, Name: "TodoWrite", Input: mustJSON(map[string]any{"todos": todos})})
	c.emit(streamjson.ToolResult{ToolUseID: id, Content: "plan updated"})
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil { // maps of strings and decoded JSON values
		panic(fmt.Sprintf("acp: encode: %v", err))
	}
	return b
}
