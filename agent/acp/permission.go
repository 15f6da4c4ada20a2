package acp

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/agentbridge/agentbridge/agent/streamjson"
)

// onPermission turns session/request_permission into a PermissionRequest
// (RequestID "acp-" and the agent's id). One that arrives while no prompt
// runs or after Cancel is answered "cancelled" at once, and the
// conversation is told. c.mu is held.
func (c *Client) onPermission(m message) {
	var p struct {
		SessionID string             `json:"sessionId"`
		ToolCall  toolCall           `json:"toolCall"`
		Options   []permissionOption `json:"options"`
	}
	if err := json.Unmarshal(m.Params, &p); err != nil || len(p.Options) == 0 {
		c.write(errorResponse(m.ID, codeInvalidParams, "session/request_permission needs toolCall and options"))
		c.badLine(m.Params, fmt.Errorf("session/request_permission without options"))
		return
	}
	t := c.tools[p.ToolCall.ToolCallID]
	seen := t != nil
	if !seen {
		t = &toolState{}
		if p.ToolCall.ToolCallID != "" {
			c.tools[p.ToolCall.ToolCallID] = t
		}
	}
	t.merge(p.ToolCall)
	if c.prompt == 0 || c.cancelled {
		c.write(response(m.ID, cancelledOutcome()))
		c.notice("warning", "acp_permission_after_stop", fmt.Sprintf("The agent asked to use %s after the turn was stopped: refused.", t.name))
		return
	}
	reqID := "acp-" + strings.Trim(string(m.ID), `"`)
	if _, dup := c.perms[reqID]; dup {
		c.write(errorResponse(m.ID, codeInvalidRequest, "a permission request with this id is already pending"))
		return
	}
	c.perms[reqID] = pendingPermission{id: append(json.RawMessage(nil), m.ID...), options: p.Options}
	req := streamjson.PermissionRequest{
		RequestID:   reqID,
		ToolName:    t.name,
		DisplayName: t.title,
		Input:       t.input,
		Description: t.title,
		ToolUseID:   p.ToolCall.ToolCallID,
		Raw:         append(json.RawMessage(nil), m.Params...),
	}
	if hasKind(p.Options, optAllowAlways) {
		req.Suggestions = alwaysSuggestion(t.name, t.input)
	}
	c.flushText()
	c.block = c.block[:0]
	if !seen && p.ToolCall.ToolCallID != "" {
		// Asked before it was announced (codex-acp): the tool line first,
		// as for a call the agent announced.
		c.emit(streamjson.ToolUse{ID: p.ToolCall.ToolCallID, Name: t.name, Input: t.input})
	}
	c.emit(req)
}

// alwaysSuggestion is the "always allow" the card offers when the agent
// has an allow_always option, in the form the bridge's grants read from
// Claude Code's suggestions: exactly this command line (Bash) or this
// file (Read, Edit). Other tools get none: a grant for a whole kind of
// tool the bridge cannot see into would be too broad.
func alwaysSuggestion(name string, input json.RawMessage) []json.RawMessage {
	var in struct {
		Command  string `json:"command"`
		FilePath string `json:"file_path"`
	}
	if json.Unmarshal(input, &in) != nil {
		return nil
	}
	var content string
	switch name {
	case "Bash":
		content = in.Command
	case "Read", "Edit":
		if strings.ContainsAny(in.FilePath, "*?[]\\") { // would be a glob
			return nil
		}
		content = in.FilePath
	}
	if strings.TrimSpace(content) == "" {
		return nil
	}
	return []json.RawMessage{mustJSON(map[string]any{"type": "addRules", "behavior": "allow", "destination": "session",
		"rules": []map[string]string{{"toolName": name, "ruleContent": content}}})}
}

// Respond answers the pending permission request requestID with the
// agent's option that matches d: an allow with UpdatedPermissions (the
// card's Always) picks allow_always, else allow_once (either when only
// one is offered); a deny picks reject_once, else reject_always, else
// answers "cancelled". A deny with Interrupt also cancels the prompt.
// UpdatedInput cannot be carried by ACP and is ignored.
func (c *Client) Respond(requestID string, d streamjson.Decision) error {
	c.mu.Lock()
	p, ok := c.perms[requestID]
	if !ok {
		c.mu.Unlock()
		return fmt.Errorf("respond to %s: %w", requestID, ErrNotPending)
	}
	delete(c.perms, requestID)
	var pick []string
	switch {
	case d.Allow && len(d.UpdatedPermissions) > 0:
		pick = []string{optAllowAlways, optAllowOnce}
	case d.Allow:
		pick = []string{optAllowOnce, optAllowAlways}
	default:
		pick = []string{optRejectOnce, optRejectAlways}
	}
	outcome := cancelledOutcome()
	for _, kind := range pick {
		if i := slices.IndexFunc(p.options, func(o permissionOption) bool { return o.Kind == kind }); i >= 0 {
			outcome = map[string]any{"outcome": map[string]string{"outcome": "selected", "optionId": p.options[i].OptionID}}
			break
		}
	}
	c.write(response(p.id, outcome))
	c.mu.Unlock()
	if !d.Allow && d.Interrupt {
		c.Cancel()
	}
	return nil
}

// Pending reports the ids of the permission requests waiting for Respond.
func (c *Client) Pending() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return sortedKeys(c.perms)
}

func cancelledOutcome() map[string]any {
	return map[string]any{"outcome": map[string]string{"outcome": "cancelled"}}
}

func hasKind(opts []permissionOption, kind string) bool {
	return slices.ContainsFunc(opts, func(o permissionOption) bool { return o.Kind == kind })
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
