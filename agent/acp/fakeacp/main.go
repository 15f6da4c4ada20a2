// Command fakeacp is a scripted agent speaking the Agent Client Protocol
// over stdio, for tests: what it does with a prompt depends on the
// prompt's first word.
//
//	hello ...        two message chunks, then end_turn
//	(anything)       "turn N; history: A | B | ..." (every prompt so far)
//	run: CMD         a tool call (kind execute) and a permission request;
//	                 allowed, it runs CMD with sh -c and replies
//	                 "ran: OUTPUT"; rejected, "denied"; cancelled, the
//	                 prompt ends cancelled
//	plan             a plan update with two entries, then a reply
//	slow             one chunk, then waits for session/cancel and ends
//	                 cancelled (or replies "slow done" after 30s)
//	late-permission  waits for session/cancel, then asks a permission
//	                 anyway and replies with the outcome it got
//	garbage          malformed lines, unknown notifications and an
//	                 fs/read_text_file request; replies with the error the
//	                 client answered it with
//	die              exits with status 3 at once
//	whoami           replies "mode M, model X" (the session's)
//	mcp [TOOL ARGS]  starts the first of the session's mcpServers, runs
//	                 initialize, tools/list and, with TOOL, tools/call with
//	                 the JSON object ARGS; replies with what it got
//	                 (mcp.go); mcp:NAME starts the server named NAME
//
// Every session offers modes (ask, code, plan, yolo, locked: refused when
// chosen) and models (fake-small, fake-large) as "modes" and "models",
// switched with session/set_mode and session/set_model; as
// "configOptions" instead with FAKEACP_CONFIG_OPTIONS=1
// (session/set_config_option); none with FAKEACP_NO_CHOICES=1. After
// every prompt it sends a usage_update with the context's size, and with
// FAKEACP_COST=1 also the session's cumulative cost ($0.25 a turn) and
// the turn's tokens (120 in, 30 out) in the prompt's result.
//
// Sessions are kept in $HOME/.fakeacp/ID.json; session/load replays their
// history as user and agent message chunks (FAKEACP_NO_LOAD=1 hides
// loadSession; FAKEACP_LATE_REPLAY=1 replays the history after answering
// session/load, in one burst, as Gemini CLI does). Every line read is appended to $FAKEACP_LOG, if set. A
// prompt that arrives while another runs is an error (the protocol allows
// one at a time).
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

type msg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

type agent struct {
	mu       sync.Mutex
	out      *json.Encoder
	nextID   int
	waiting  map[string]chan msg // our request id → its response
	cancel   chan struct{}       // closed by session/cancel of the running prompt
	running  bool
	sessions map[string]*session
	mcp      []mcpServer // the mcpServers of the last session/new or session/load
}

type session struct {
	ID      string   `json:"id"`
	History []string `json:"history"` // prompts
	Replies []string `json:"replies"`
	Mode    string   `json:"mode"`
	Turns   int      `json:"turns"`
	Model   string   `json:"model"`
}

var (
	fakeModes  = []string{"ask", "code", "plan", "yolo", "locked"}
	fakeModels = []string{"fake-small", "fake-large"}
)

// choices is what a session/new or session/load result says of the
// session's modes and models.
func choices(s *session, result map[string]any) map[string]any {
	if s.Mode == "" {
		s.Mode, s.Model = "ask", "fake-small"
	}
	switch {
	case os.Getenv("FAKEACP_NO_CHOICES") != "":
	case os.Getenv("FAKEACP_CONFIG_OPTIONS") != "":
		result["configOptions"] = configOptions(s)
	default:
		var modes, models []map[string]string
		for _, m := range fakeModes {
			modes = append(modes, map[string]string{"id": m, "name": strings.ToUpper(m[:1]) + m[1:], "description": "the " + m + " mode"})
		}
		for _, m := range fakeModels {
			models = append(models, map[string]string{"modelId": m, "name": m})
		}
		result["modes"] = map[string]any{"currentModeId": s.Mode, "availableModes": modes}
		result["models"] = map[string]any{"currentModelId": s.Model, "availableModels": models}
	}
	return result
}

// configOptions is the session's modes and models as config options.
func configOptions(s *session) []any {
	opt := func(id, cat, cur string, values []string) map[string]any {
		var vs []map[string]string
		for _, v := range values {
			vs = append(vs, map[string]string{"value": v, "name": v})
		}
		return map[string]any{"id": id, "name": id, "category": cat, "type": "select", "currentValue": cur, "options": vs}
	}
	return []any{opt("approval", "mode", s.Mode, fakeModes), opt("llm", "model", s.Model, fakeModels),
		opt("effort", "thought_level", "low", []string{"low", "high"})}
}

func main() {
	a := &agent{out: json.NewEncoder(os.Stdout), waiting: map[string]chan msg{}, sessions: map[string]*session{}}
	var logf *os.File
	if p := os.Getenv("FAKEACP_LOG"); p != "" {
		logf, _ = os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<24)
	for in.Scan() {
		line := append([]byte(nil), in.Bytes()...)
		if logf != nil {
			_, _ = logf.Write(append(line, '\n'))
		}
		var m msg
		if json.Unmarshal(line, &m) != nil {
			continue
		}
		a.dispatch(m)
	}
}

func (a *agent) send(v any) {
	a.mu.Lock()
	defer a.mu.Unlock()
	_ = a.out.Encode(v)
}

// burst sends what f sends in one write to stdout.
func (a *agent) burst(f func()) {
	var buf bytes.Buffer
	a.mu.Lock()
	a.out = json.NewEncoder(&buf)
	a.mu.Unlock()
	f()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.out = json.NewEncoder(os.Stdout)
	_, _ = os.Stdout.Write(buf.Bytes())
}

func (a *agent) reply(id json.RawMessage, result any) {
	a.send(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
}

func (a *agent) replyErr(id json.RawMessage, code int, text string) {
	a.send(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": text}})
}

func (a *agent) update(sid string, u map[string]any) {
	a.send(map[string]any{"jsonrpc": "2.0", "method": "session/update", "params": map[string]any{"sessionId": sid, "update": u}})
}

func (a *agent) chunk(sid, text string) {
	a.update(sid, map[string]any{"sessionUpdate": "agent_message_chunk", "content": map[string]any{"type": "text", "text": text}})
}

// call sends a request to the client and waits for its response.
func (a *agent) call(method string, params any) msg {
	a.mu.Lock()
	a.nextID++
	id := fmt.Sprintf("%d", 1000+a.nextID)
	ch := make(chan msg, 1)
	a.waiting[id] = ch
	a.mu.Unlock()
	a.send(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id), "method": method, "params": params})
	select {
	case m := <-ch:
		return m
	case <-time.After(60 * time.Second):
		fmt.Fprintln(os.Stderr, "fakeacp: no answer to", method)
		os.Exit(4)
	}
	return msg{}
}

func (a *agent) dispatch(m msg) {
	if m.Method == "session/new" || m.Method == "session/load" {
		a.keepMCPServers(m.Params)
	}
	switch {
	case m.Method == "" && len(m.ID) > 0: // a response to us
		a.mu.Lock()
		ch := a.waiting[string(m.ID)]
		delete(a.waiting, string(m.ID))
		a.mu.Unlock()
		if ch != nil {
			ch <- m
		}
	case m.Method == "initialize":
		a.reply(m.ID, map[string]any{"protocolVersion": 1, "agentCapabilities": map[string]any{
			"loadSession": os.Getenv("FAKEACP_NO_LOAD") == "", "promptCapabilities": map[string]any{"image": true}}, "authMethods": []any{}})
	case m.Method == "session/new":
		s := &session{ID: fmt.Sprintf("fake-%d", time.Now().UnixNano())}
		a.sessions[s.ID] = s
		a.save(s)
		a.reply(m.ID, choices(s, map[string]any{"sessionId": s.ID}))
	case m.Method == "session/load":
		var p struct {
			SessionID string `json:"sessionId"`
		}
		_ = json.Unmarshal(m.Params, &p)
		s := a.load(p.SessionID)
		if s == nil {
			a.replyErr(m.ID, -32002, "session not found: "+p.SessionID)
			return
		}
		replay := func() {
			for i, h := range s.History {
				a.update(s.ID, map[string]any{"sessionUpdate": "user_message_chunk", "content": map[string]any{"type": "text", "text": h}})
				if i < len(s.Replies) {
					a.chunk(s.ID, s.Replies[i])
				}
			}
		}
		a.sessions[s.ID] = s
		if os.Getenv("FAKEACP_LATE_REPLAY") != "" {
			// Like Gemini CLI: the answer first, the replay right after it,
			// in one write — as the real agent streams it in one burst.
			// (Written one line at a time, a busy machine could pause
			// this process between lines for longer than the client's
			// quiet period, which no agent does on purpose.)
			a.burst(func() {
				a.reply(m.ID, choices(s, map[string]any{}))
				replay()
			})
			return
		}
		replay()
		a.reply(m.ID, choices(s, map[string]any{}))
	case m.Method == "session/set_mode" || m.Method == "session/set_model" || m.Method == "session/set_config_option":
		a.choose(m)
	case m.Method == "session/prompt":
		a.mu.Lock()
		busy := a.running
		a.running = true
		a.cancel = make(chan struct{})
		cancel := a.cancel
		a.mu.Unlock()
		if busy {
			a.replyErr(m.ID, -32000, "a prompt is already running")
			return
		}
		go a.prompt(m, cancel)
	case m.Method == "session/cancel":
		a.mu.Lock()
		if a.cancel != nil {
			close(a.cancel)
			a.cancel = nil
		}
		a.mu.Unlock()
	case len(m.ID) > 0:
		a.replyErr(m.ID, -32601, "unknown method "+m.Method)
	}
}

func (a *agent) save(s *session) {
	dir := filepath.Join(os.Getenv("HOME"), ".fakeacp")
	_ = os.MkdirAll(dir, 0o700)
	b, _ := json.Marshal(s)
	_ = os.WriteFile(filepath.Join(dir, s.ID+".json"), b, 0o600)
}

func (a *agent) load(id string) *session {
	b, err := os.ReadFile(filepath.Join(os.Getenv("HOME"), ".fakeacp", filepath.Base(id)+".json"))
	if err != nil {
		return nil
	}
	var s session
	if json.Unmarshal(b, &s) != nil {
		return nil
	}
	return &s
}

func (a *agent) prompt(m msg, cancel chan struct{}) {
	var p struct {
		SessionID string `json:"sessionId"`
		Prompt    []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"prompt"`
	}
	_ = json.Unmarshal(m.Params, &p)
	var text strings.Builder
	for _, b := range p.Prompt {
		if b.Type == "text" {
			text.WriteString(b.Text)
		}
	}
	prompt := strings.TrimSpace(text.String())
	s := a.sessions[p.SessionID]
	if s == nil {
		a.replyErr(m.ID, -32002, "unknown session "+p.SessionID)
		a.done()
		return
	}
	s.History = append(s.History, prompt)
	reply, stop := a.act(s.ID, prompt, s, cancel)
	if reply != "" {
		a.chunk(s.ID, reply)
	}
	s.Replies = append(s.Replies, reply)
	a.save(s)
	a.done()
	s.Turns++
	usage := map[string]any{"sessionUpdate": "usage_update", "used": 100 * s.Turns, "size": 200000}
	result := map[string]any{"stopReason": stop}
	if os.Getenv("FAKEACP_COST") != "" {
		usage["cost"] = map[string]any{"amount": 0.25 * float64(s.Turns), "currency": "USD"}
		result["usage"] = map[string]any{"inputTokens": 120, "outputTokens": 30, "totalTokens": 150}
	}
	a.save(s)
	a.update(s.ID, usage)
	a.reply(m.ID, result)
}

// choose switches a session's mode or model (set_mode, set_model,
// set_config_option); "locked" is refused.
func (a *agent) choose(m msg) {
	var p struct {
		SessionID string `json:"sessionId"`
		ModeID    string `json:"modeId"`
		ModelID   string `json:"modelId"`
		ConfigID  string `json:"configId"`
		Value     string `json:"value"`
	}
	_ = json.Unmarshal(m.Params, &p)
	s := a.sessions[p.SessionID]
	switch {
	case s == nil:
		a.replyErr(m.ID, -32002, "unknown session "+p.SessionID)
	case p.ModeID == "locked" || p.Value == "locked":
		a.replyErr(m.ID, -32603, "mode locked is not available here")
	case p.ModeID != "" || p.ConfigID == "approval":
		s.Mode = p.ModeID + p.Value
		a.save(s)
		if p.ConfigID != "" {
			a.reply(m.ID, map[string]any{"configOptions": configOptions(s)})
			return
		}
		a.update(s.ID, map[string]any{"sessionUpdate": "current_mode_update", "currentModeId": s.Mode})
		a.reply(m.ID, map[string]any{})
	default:
		s.Model = p.ModelID + p.Value
		a.save(s)
		a.reply(m.ID, map[string]any{})
	}
}

func (a *agent) done() {
	a.mu.Lock()
	a.running = false
	a.cancel = nil
	a.mu.Unlock()
}

// act performs a prompt's script; it returns the reply's last chunk and
// the stop reason.
func (a *agent) act(sid, prompt string, s *session, cancel chan struct{}) (string, string) {
	word, rest, _ := strings.Cut(prompt, " ")
	switch {
	case word == "hello":
		a.chunk(sid, "Hello ")
		return "from fake ACP", "end_turn"
	case word == "whoami":
		return fmt.Sprintf("mode %s, model %s", s.Mode, s.Model), "end_turn"
	case word == "die":
		fmt.Fprintln(os.Stderr, "fakeacp: dying as asked")
		os.Exit(3)
	case word == "run:":
		return a.run(sid, rest, cancel)
	case word == "mcp":
		return a.callMCP("", rest), "end_turn"
	case strings.HasPrefix(word, "mcp:"):
		return a.callMCP(strings.TrimPrefix(word, "mcp:"), rest), "end_turn"
	case word == "plan":
		a.update(sid, map[string]any{"sessionUpdate": "plan", "entries": []map[string]string{
			{"content": "look around", "priority": "high", "status": "completed"},
			{"content": "write the answer", "priority": "medium", "status": "in_progress"}}})
		return "planned", "end_turn"
	case word == "slow":
		a.chunk(sid, "working…")
		select {
		case <-cancel:
			return "", "cancelled"
		case <-time.After(30 * time.Second):
			return "slow done", "end_turn"
		}
	case word == "late-permission":
		<-cancel
		r := a.call("session/request_permission", permParams(sid, "late-1", "echo late"))
		return "late permission outcome: " + string(r.Result), "cancelled"
	case word == "garbage":
		os.Stdout.WriteString("this is not json\n")
		os.Stdout.WriteString("{\"jsonrpc\":\"2.0\",\"id\":\n")
		a.send(map[string]any{"jsonrpc": "2.0", "method": "x/unknown_notification", "params": map[string]any{}})
		a.update(sid, map[string]any{"sessionUpdate": "future_kind_of_update", "x": 1})
		r := a.call("fs/read_text_file", map[string]any{"sessionId": sid, "path": "/etc/hostname"})
		return "fs answer: " + string(r.Error), "end_turn"
	}
	return fmt.Sprintf("turn %d; history: %s", len(s.History), strings.Join(s.History, " | ")), "end_turn"
}

func permParams(sid, id, cmd string) map[string]any {
	return map[string]any{"sessionId": sid,
		"toolCall": map[string]any{"toolCallId": id, "title": "Run " + cmd, "kind": "execute", "rawInput": map[string]any{"command": cmd}},
		"options": []map[string]string{
			{"optionId": "yes", "name": "Allow", "kind": "allow_once"},
			{"optionId": "always", "name": "Always allow", "kind": "allow_always"},
			{"optionId": "no", "name": "Reject", "kind": "reject_once"}}}
}

// run asks permission for cmd and runs it when allowed.
func (a *agent) run(sid, cmd string, cancel chan struct{}) (string, string) {
	id := fmt.Sprintf("call-%d", time.Now().UnixNano())
	a.update(sid, map[string]any{"sessionUpdate": "tool_call", "toolCallId": id, "title": "Run " + cmd, "kind": "execute",
		"status": "pending", "rawInput": map[string]any{"command": []string{"bash", "-lc", cmd}}})
	r := a.call("session/request_permission", permParams(sid, id, cmd))
	var res struct {
		Outcome struct {
			Outcome  string `json:"outcome"`
			OptionID string `json:"optionId"`
		} `json:"outcome"`
	}
	_ = json.Unmarshal(r.Result, &res)
	if res.Outcome.Outcome == "cancelled" {
		<-cancel
		return "", "cancelled"
	}
	if res.Outcome.OptionID == "no" {
		a.update(sid, map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": id, "status": "failed",
			"content": []any{map[string]any{"type": "content", "content": map[string]any{"type": "text", "text": "rejected"}}}})
		return "denied", "end_turn"
	}
	out, err := exec.Command("sh", "-c", cmd).CombinedOutput()
	status := "completed"
	if err != nil {
		status = "failed"
	}
	a.update(sid, map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": id, "status": status,
		"content": []any{map[string]any{"type": "content", "content": map[string]any{"type": "text", "text": string(out)}}}})
	return fmt.Sprintf("ran (%s, option %s): %s", status, res.Outcome.OptionID, strings.TrimSpace(string(out))), "end_turn"
}
