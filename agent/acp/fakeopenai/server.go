// Package fakeopenai is a stand-in for the OpenAI Responses API (POST
// /v1/responses with server-sent events, the part Codex uses) on loopback,
// for tests that drive the real codex-acp (and OpenCode, through its AI
// SDK's openai provider) as an ACP agent without network or key. Its answers are scripted by the last user text of a request:
//
//	run: CMD   a function call exec_command {cmd: CMD} (Codex's), or bash
//	           {command: CMD} when the request offers a tool bash (OpenCode's),
//	           its arguments streamed as the API does
//	tool: SUFFIX ARGS
//	           a function call of the first tool offered whose name ends
//	           with SUFFIX (an MCP tool, as the agent names it), with the
//	           JSON object ARGS; "no tool SUFFIX among: …" when none is
//	slow       text deltas every 200ms for 60s, or until the client goes
//	           away
//	(other)    "codex heard: TEXT (N user messages)"
//
// and a request whose last item is a function call's output is answered
// "tool said: OUTPUT". User messages that start with "<" (the context
// Codex adds) are not counted.
package fakeopenai

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// Server is a running fake Responses API.
type Server struct {
	URL string // base URL including /v1, for a Codex model provider's base_url
	srv *http.Server

	mu       sync.Mutex
	requests []Request
	n        int
}

// Request is one model request the server answered.
type Request struct {
	LastUser string // the last user text, or "function output: …"
	Users    int    // user messages of the conversation in the request
	Model    string // the model asked for
}

// New starts a server on loopback, stopped when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("fakeopenai: %v", err)
	}
	s := &Server{URL: "http://" + ln.Addr().String() + "/v1"}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve)}
	go func() { _ = s.srv.Serve(ln) }()
	t.Cleanup(func() { _ = s.srv.Close() })
	return s
}

// Addr is the server's host:port (for network.allow).
func (s *Server) Addr() string {
	return strings.TrimSuffix(strings.TrimPrefix(s.URL, "http://"), "/v1")
}

// Requests returns the requests answered so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

type item struct {
	Type    string          `json:"type"`
	Role    string          `json:"role"`
	Content contents        `json:"content"`
	Output  json.RawMessage `json:"output"`
}

// contents is a message's content: a list of parts, or a string (as
// OpenCode's AI SDK sends a system message).
type contents []struct {
	Text string `json:"text"`
}

func (c *contents) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*c = contents{{Text: s}}
		return nil
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(b, &parts); err != nil {
		return fmt.Errorf("message content: %w", err)
	}
	*c = parts
	return nil
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/responses") {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"object":"list","data":[],"models":[]}`)
		return
	}
	var req struct {
		Model string `json:"model"`
		Input []item `json:"input"`
		Tools []tool `json:"tools"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rec := Request{Model: req.Model}
	var last item
	for _, it := range req.Input {
		if (it.Type == "message" || it.Type == "") && it.Role == "user" && len(it.Content) > 0 && !strings.HasPrefix(it.Content[0].Text, "<") {
			rec.Users++
			last = it
		}
		if it.Type == "function_call_output" {
			last = it
		}
	}
	if last.Type == "function_call_output" {
		var out string
		if json.Unmarshal(last.Output, &out) != nil {
			out = string(last.Output)
		}
		rec.LastUser = "function output: " + out
	} else if len(last.Content) > 0 {
		rec.LastUser = strings.TrimSpace(last.Content[0].Text)
	}
	s.mu.Lock()
	s.requests = append(s.requests, rec)
	s.n++
	id := fmt.Sprintf("resp_%d", s.n)
	s.mu.Unlock()

	w.Header().Set("Content-Type", "text/event-stream")
	ev := func(kind string, data map[string]any) {
		data["type"] = kind
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", kind, b)
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
	ev("response.created", map[string]any{"response": map[string]any{"id": id}})
	text := ""
	switch {
	case strings.HasPrefix(rec.LastUser, "function output: "):
		text = "tool said: " + strings.TrimPrefix(rec.LastUser, "function output: ")
	case strings.HasPrefix(rec.LastUser, "run: ") || strings.HasPrefix(rec.LastUser, "tool: "):
		name, argm := "exec_command", map[string]string{"cmd": strings.TrimPrefix(rec.LastUser, "run: ")}
		for _, t := range req.Tools {
			if t.Name == "bash" {
				name, argm = "bash", map[string]string{"command": argm["cmd"], "description": "run it"}
			}
		}
		args, _ := json.Marshal(argm)
		namespace := ""
		if suffix, raw, ok := strings.Cut(strings.TrimPrefix(rec.LastUser, "tool: "), " "); ok && strings.HasPrefix(rec.LastUser, "tool: ") {
			var found bool
			var names []string
			name, namespace, names, found = findTool(req.Tools, suffix)
			args = []byte(raw)
			if !found {
				text = fmt.Sprintf("no tool %s among: %s", suffix, strings.Join(names, ", "))
				break
			}
		}
		call := map[string]any{"type": "function_call", "id": "fc_" + id, "call_id": "call_" + id, "name": name, "arguments": string(args), "status": "completed"}
		added := map[string]any{"type": "function_call", "id": "fc_" + id, "call_id": "call_" + id, "name": name, "arguments": "", "status": "in_progress"}
		if namespace != "" {
			call["namespace"], added["namespace"] = namespace, namespace
		}
		ev("response.output_item.added", map[string]any{"output_index": 0, "item": added})
		ev("response.function_call_arguments.delta", map[string]any{"output_index": 0, "item_id": "fc_" + id, "delta": string(args)})
		ev("response.function_call_arguments.done", map[string]any{"output_index": 0, "item_id": "fc_" + id, "arguments": string(args)})
		ev("response.output_item.done", map[string]any{"output_index": 0, "item": call})
		ev("response.completed", completed(id))
		return
	case rec.LastUser == "slow":
		msgID := "msg_" + id
		ev("response.output_item.added", map[string]any{"output_index": 0, "item": map[string]any{"type": "message", "role": "assistant", "id": msgID, "content": []any{}}})
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		deadline := time.After(60 * time.Second)
		for n := 1; ; n++ {
			select {
			case <-tick.C:
				ev("response.output_text.delta", map[string]any{"output_index": 0, "item_id": msgID, "content_index": 0,
					"delta": fmt.Sprintf("working on step %d of %d. ", n, n*7+3)})
				continue
			case <-r.Context().Done():
				return
			case <-deadline:
			}
			break
		}
		text = "slow done"
	default:
		text = fmt.Sprintf("codex heard: %s (%d user messages)", rec.LastUser, rec.Users)
	}
	msgID := "msg_" + id
	msg := map[string]any{"type": "message", "role": "assistant", "id": msgID,
		"content": []map[string]any{{"type": "output_text", "text": text}}}
	ev("response.output_item.added", map[string]any{"output_index": 0, "item": map[string]any{"type": "message", "role": "assistant", "id": msgID, "content": []any{}}})
	ev("response.output_text.delta", map[string]any{"output_index": 0, "item_id": msgID, "content_index": 0, "delta": text})
	ev("response.output_item.done", map[string]any{"output_index": 0, "item": msg})
	ev("response.completed", completed(id))
}

// tool is a tool of a request: a function, or (Codex's MCP servers) a
// namespace of functions.
type tool struct {
	Type  string `json:"type"`
	Name  string `json:"name"`
	Tools []tool `json:"tools"`
}

// findTool finds the first function of tools whose name ends in suffix,
// also inside namespaces (the call then names the namespace), and lists
// every name ("namespace.function" inside one) for a reply that found none.
func findTool(tools []tool, suffix string) (name, namespace string, names []string, found bool) {
	for _, t := range tools {
		if t.Type == "namespace" {
			for _, f := range t.Tools {
				names = append(names, t.Name+"."+f.Name)
				if !found && strings.HasSuffix(f.Name, suffix) {
					name, namespace, found = f.Name, t.Name, true
				}
			}
			continue
		}
		names = append(names, t.Name)
		if !found && t.Name != "" && strings.HasSuffix(t.Name, suffix) {
			name, found = t.Name, true
		}
	}
	return name, namespace, names, found
}

func completed(id string) map[string]any {
	return map[string]any{"response": map[string]any{"id": id, "usage": map[string]any{
		"input_tokens": 10, "input_tokens_details": map[string]any{"cached_tokens": 0},
		"output_tokens": 5, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 15}}}
}
