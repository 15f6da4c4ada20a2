// Package fakegemini is a stand-in for the Gemini API (the part Gemini
// CLI uses: generateContent and streamGenerateContent with server-sent
// events) on loopback, for tests that drive the real Gemini CLI as an
// ACP agent without network or key. Its answers are scripted by the last
// user text of a request:
//
//	run: CMD   a function call run_shell_command {command: CMD}
//	tool: SUFFIX ARGS
//	           a call of the first declared function whose name ends in
//	           SUFFIX (an MCP server's tool), with the JSON object ARGS
//	slow       "working on step N" chunks every 200ms for 60s, or until the client
//	           goes away
//	(other)    "gemini heard: TEXT (N user messages)"
//
// and a request whose last part is a function response is answered
// "tool said: OUTPUT". Requests for other models than the chat's (the
// CLI's routing and summaries) get a small JSON answer.
package fakegemini

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

// Server is a running fake Gemini API.
type Server struct {
	URL string // base URL, for GOOGLE_GEMINI_BASE_URL
	srv *http.Server

	mu       sync.Mutex
	requests []Request
}

// Request is one model request the server answered.
type Request struct {
	Path     string
	LastUser string // the last user text (or "function response: …")
	Users    int    // user messages with text in the request
	Texts    []string
}

// New starts a server on loopback, stopped when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("fakegemini: %v", err)
	}
	s := &Server{URL: "http://" + ln.Addr().String()}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve)}
	go func() { _ = s.srv.Serve(ln) }()
	t.Cleanup(func() { _ = s.srv.Close() })
	return s
}

// Addr is the server's host:port (for network.allow).
func (s *Server) Addr() string { return strings.TrimPrefix(s.URL, "http://") }

// Requests returns the requests answered so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

type part struct {
	Text             string          `json:"text,omitempty"`
	FunctionCall     json.RawMessage `json:"functionCall,omitempty"`
	FunctionResponse json.RawMessage `json:"functionResponse,omitempty"`
}

type content struct {
	Role  string `json:"role"`
	Parts []part `json:"parts"`
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Contents []content `json:"contents"`
		Tools    []struct {
			FunctionDeclarations []struct {
				Name string `json:"name"`
			} `json:"functionDeclarations"`
		} `json:"tools"`
	}
	if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&req) != nil {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	if strings.HasSuffix(r.URL.Path, ":countTokens") {
		writeJSON(w, map[string]any{"totalTokens": 10})
		return
	}
	rec := Request{Path: r.URL.Path}
	var last part
	for _, c := range req.Contents {
		if c.Role != "user" {
			continue
		}
		for _, p := range c.Parts {
			if p.Text != "" && !strings.HasPrefix(p.Text, "<session_context>") {
				rec.Users++
				rec.Texts = append(rec.Texts, p.Text)
			}
			last = p
		}
	}
	rec.LastUser = strings.TrimSpace(last.Text)
	if last.FunctionResponse != nil {
		rec.LastUser = "function response: " + string(last.FunctionResponse)
	}
	s.mu.Lock()
	s.requests = append(s.requests, rec)
	s.mu.Unlock()

	if !strings.HasSuffix(r.URL.Path, ":streamGenerateContent") {
		// The CLI's side requests (model routing, summaries): a JSON text.
		writeJSON(w, response([]map[string]any{{"text": `{"reasoning":"simple","model_choice":"flash"}`}}, "STOP"))
		return
	}
	var parts []map[string]any
	switch {
	case last.FunctionResponse != nil:
		var fr struct {
			Response json.RawMessage `json:"response"`
		}
		_ = json.Unmarshal(last.FunctionResponse, &fr)
		parts = []map[string]any{{"text": "tool said: " + string(fr.Response)}}
	case strings.HasPrefix(rec.LastUser, "tool: "):
		// "tool: SUFFIX ARGS": a call of the first declared function whose
		// name ends in SUFFIX, with the JSON object ARGS.
		suffix, raw, _ := strings.Cut(strings.TrimPrefix(rec.LastUser, "tool: "), " ")
		var args map[string]any
		_ = json.Unmarshal([]byte(raw), &args)
		var names []string
		for _, t := range req.Tools {
			for _, f := range t.FunctionDeclarations {
				names = append(names, f.Name)
				if parts == nil && strings.HasSuffix(f.Name, suffix) {
					parts = []map[string]any{{"functionCall": map[string]any{"name": f.Name, "args": args}}}
				}
			}
		}
		if parts == nil {
			parts = []map[string]any{{"text": fmt.Sprintf("no tool %s among: %s", suffix, strings.Join(names, ", "))}}
		}
	case strings.HasPrefix(rec.LastUser, "run: "):
		cmd := strings.TrimPrefix(rec.LastUser, "run: ")
		parts = []map[string]any{{"functionCall": map[string]any{"name": "run_shell_command",
			"args": map[string]any{"command": cmd, "description": "run it"}}}}
	default:
		parts = []map[string]any{{"text": fmt.Sprintf("gemini heard: %s (%d user messages)", rec.LastUser, rec.Users)}}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	if rec.LastUser == "slow" {
		deadline := time.After(60 * time.Second)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for n := 1; ; n++ {
			select {
			case <-tick.C:
				// Distinct chunks: the CLI stops a turn that repeats itself.
				writeEvent(w, response([]map[string]any{{"text": fmt.Sprintf("working on step %d of %d, %s. ", n, n*7+3, strings.Repeat("x", n%11))}}, ""))
				continue
			case <-r.Context().Done():
				return
			case <-deadline:
			}
			break
		}
	}
	for _, p := range parts {
		writeEvent(w, response([]map[string]any{p}, ""))
	}
	writeEvent(w, response([]map[string]any{{"text": ""}}, "STOP"))
}

// response is a GenerateContentResponse with one candidate.
func response(parts []map[string]any, finish string) map[string]any {
	cand := map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "index": 0}
	if finish != "" {
		cand["finishReason"] = finish
	}
	return map[string]any{"candidates": []any{cand},
		"usageMetadata": map[string]any{"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func writeEvent(w http.ResponseWriter, v any) {
	b, _ := json.Marshal(v)
	fmt.Fprintf(w, "data: %s\r\n\r\n", b)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}
