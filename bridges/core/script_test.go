package core_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
)

// bashSuggestions is what the CLI suggests for a Bash command (see the
// protocol captures): a rule, the working directory, and acceptEdits.
func bashSuggestions(cmd string) []json.RawMessage {
	return []json.RawMessage{
		json.RawMessage(fmt.Sprintf(`{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":%q}],"behavior":"allow","destination":"localSettings"}`, cmd)),
		json.RawMessage(`{"type":"addDirectories","directories":["/srv/project"],"destination":"session"}`),
		json.RawMessage(`{"type":"setMode","mode":"acceptEdits","destination":"session"}`),
	}
}

var reqSeq atomic.Int64

// toolScript plays tool calls for directives in the message text:
//
//	bash: CMD          Bash permission request
//	write: PATH TEXT   Write permission request
//	ask: Q | A | B     AskUserQuestion (askmulti: multiSelect)
//	plan: TEXT         ExitPlanMode with an empty input; the plan is in the tool call
//	hang               start the turn and never finish it
//
// The result text reports the decision: "allowed <updatedInput>" or
// "denied: <message>". Anything else is answered "pong: <text>".
func toolScript(s *bridgetest.FakeSession, m streamjson.UserMessage) {
	text := m.Text
	if i := strings.LastIndex(text, "]\n\n"); strings.HasPrefix(text, "[agentbridge:") && i > 0 {
		text = text[i+3:] // a re-delivered message
	}
	verb, arg, _ := strings.Cut(text, ":")
	arg = strings.TrimSpace(arg)
	var req streamjson.PermissionRequest
	id := fmt.Sprintf("req-%d", reqSeq.Add(1))
	switch verb {
	case "bash":
		input, _ := json.Marshal(map[string]any{"command": arg, "description": "Run " + arg})
		req = streamjson.PermissionRequest{RequestID: id, ToolName: "Bash", Input: input, Description: "Run " + arg,
			Suggestions: bashSuggestions(arg), ToolUseID: "tu-" + id}
	case "write":
		path, content, _ := strings.Cut(arg, " ")
		input, _ := json.Marshal(map[string]any{"file_path": "/srv/project/" + path, "content": content})
		req = streamjson.PermissionRequest{RequestID: id, ToolName: "Write", Input: input, ToolUseID: "tu-" + id,
			Suggestions: []json.RawMessage{json.RawMessage(`{"type":"setMode","mode":"acceptEdits","destination":"session"}`)}}
	case "ask", "askmulti":
		parts := strings.Split(arg, "|")
		var opts []map[string]string
		for _, p := range parts[1:] {
			opts = append(opts, map[string]string{"label": strings.TrimSpace(p), "description": ""})
		}
		input, _ := json.Marshal(map[string]any{"questions": []map[string]any{{
			"question": strings.TrimSpace(parts[0]), "header": "Pick", "options": opts, "multiSelect": verb == "askmulti"}}})
		req = streamjson.PermissionRequest{RequestID: id, ToolName: "AskUserQuestion", Input: input, ToolUseID: "tu-" + id, RequiresUserInteraction: true}
	case "plan":
		planInput, _ := json.Marshal(map[string]any{"plan": arg})
		req = streamjson.PermissionRequest{RequestID: id, ToolName: "ExitPlanMode", Input: json.RawMessage(`{}`), ToolUseID: "tu-" + id, RequiresUserInteraction: true}
		s.Emit(streamjson.Lifecycle{UUID: m.UUID, State: streamjson.LifecycleStarted})
		s.Emit(streamjson.ToolUse{ID: "tu-" + id, Name: "ExitPlanMode", Input: planInput})
	case "hang":
		s.Emit(streamjson.Lifecycle{UUID: m.UUID, State: streamjson.LifecycleStarted})
		s.Emit(streamjson.Init{SessionID: s.Opts.SessionID})
		s.Emit(streamjson.TextDelta{Text: "working on it"})
		return
	default:
		s.Reply(m, "pong: "+text)
		return
	}
	s.Emit(streamjson.Lifecycle{UUID: m.UUID, State: streamjson.LifecycleStarted})
	if req.ToolName != "ExitPlanMode" {
		s.Emit(streamjson.ToolUse{ID: req.ToolUseID, Name: req.ToolName, Input: req.Input})
	}
	d, ok := s.Ask(req)
	if !ok {
		return
	}
	out := "denied: " + d.Message
	if d.Allow {
		out = "allowed " + string(d.UpdatedInput)
	}
	s.Emit(streamjson.Lifecycle{UUID: m.UUID, State: streamjson.LifecycleCompleted})
	s.Emit(streamjson.Result{Subtype: "success", Text: out, SessionID: s.Opts.SessionID, CostUSD: 0.002})
}

func agentCancel(id string) streamjson.Event { return streamjson.PermissionCancelled{RequestID: id} }

type agentUserMessage = streamjson.UserMessage

func agentLifecycle(id, state string) streamjson.Event {
	return streamjson.Lifecycle{UUID: id, State: state}
}

func agentTaskStarted(id, desc string) streamjson.Event {
	return streamjson.TaskStarted{TaskID: id, TaskType: "local_bash", Description: desc}
}

func agentTaskDone(id, status, summary string) streamjson.Event {
	return streamjson.TaskNotification{TaskID: id, Status: status, Summary: summary}
}

func agentTextDelta(s string) streamjson.Event { return streamjson.TextDelta{Text: s} }

func agentResult(text, origin string) streamjson.Event {
	return streamjson.Result{Subtype: "success", Text: text, Origin: origin, CostUSD: 0.001}
}
