package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/agentbridge/agentbridge/agent/streamjson"
)

// MCPServer is an MCP server that runs inside the host and that the CLI
// reaches over its own stdin and stdout (the "SDK" transport of
// PROTOCOL.md: no extra process, no socket). The CLI wraps each JSON-RPC
// message in a control_request mcp_message; the session hands it to
// HandleMCP and writes the answer back in a control_response.
type MCPServer interface {
	// HandleMCP answers one JSON-RPC message: it returns the JSON-RPC
	// response of a request, or nil for a notification. It runs in its own
	// goroutine, may block (a tool call posting a file), and must return
	// soon after ctx ends: ctx ends when the process exits or after
	// Options.MCPTimeout.
	HandleMCP(ctx context.Context, msg json.RawMessage) json.RawMessage
}

// DefaultMCPTimeout bounds one MCP message when Options.MCPTimeout is 0.
const DefaultMCPTimeout = 5 * time.Minute

// mcpServerNames returns the names of opts' MCP servers, sorted.
func mcpServerNames(opts Options) []string {
	return slices.Sorted(maps.Keys(opts.MCPServers))
}

// StdioMCPServer is an MCP server the CLI starts as a process.
type StdioMCPServer struct {
	Command string
	Args    []string
	Env     map[string]string
}

// mcpConfigArg is the --mcp-config value declaring the host's servers as
// SDK servers ({"mcpServers":{"NAME":{"type":"sdk","name":"NAME"}}}) and
// the stdio servers the CLI starts ({"type":"stdio","command",…}).
func mcpConfigArg(names []string, stdio map[string]StdioMCPServer) (string, error) {
	type server struct {
		Type    string            `json:"type"`
		Name    string            `json:"name,omitempty"`
		Command string            `json:"command,omitempty"`
		Args    []string          `json:"args,omitempty"`
		Env     map[string]string `json:"env,omitempty"`
	}
	servers := make(map[string]server, len(names)+len(stdio))
	for n, s := range stdio {
		servers[n] = server{Type: "stdio", Command: s.Command, Args: s.Args, Env: s.Env}
	}
	for _, n := range names { // the host's own win a name clash (config reserves "bridge")
		servers[n] = server{Type: "sdk", Name: n}
	}
	b, err := json.Marshal(map[string]any{"mcpServers": servers})
	if err != nil {
		return "", fmt.Errorf("mcp config: %w", err)
	}
	return string(b), nil
}

// initializeRequest is the session's initialize control request: it lists
// the SDK MCP servers of Options.MCPServers, which the CLI connects to only
// once initialize names them.
func (s *Session) initializeRequest(requestID string) ([]byte, error) {
	return streamjson.EncodeInitialize(requestID, "", mcpServerNames(s.opts)...)
}

// startMCP sends initialize at spawn so the CLI connects to the host's MCP
// servers before it reads the first user message (stdin is read in order).
// It returns once the line is written; the CLI's answer is awaited in the
// background and a refusal is logged (the tools are then missing, the
// session works without them).
func (s *Session) startMCP() error {
	id := fmt.Sprintf("host-%d", s.nextReq.Add(1))
	line, err := s.initializeRequest(id)
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	ch := make(chan streamjson.ControlResponse, 1)
	s.mu.Lock()
	s.controls[id] = ch
	s.mu.Unlock()
	forget := func() {
		s.mu.Lock()
		delete(s.controls, id)
		s.mu.Unlock()
	}
	if err := s.write(context.Background(), line); err != nil {
		forget()
		return fmt.Errorf("initialize: %w", err)
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer forget()
		wait := s.controlTimeout()
		timer := time.NewTimer(wait)
		defer timer.Stop()
		select {
		case r := <-ch:
			if r.Subtype != "success" {
				s.log.Error("agent refused initialize: the bridge's tools are unavailable", "err", r.Error)
				return
			}
			s.log.Debug("agent initialized", "mcp_servers", mcpServerNames(s.opts))
		case <-timer.C:
			s.log.Warn("agent did not answer initialize in time", "timeout", wait)
		case <-s.exited:
		}
	}()
	return nil
}

// serveMCP answers an mcp_message in its own goroutine (never blocking the
// stdout reader) with the named server of Options.MCPServers.
func (s *Session) serveMCP(m streamjson.MCPMessage) {
	srv := s.opts.MCPServers[m.Server]
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		var (
			line []byte
			err  error
		)
		if srv == nil {
			s.log.Warn("agent asked for an unknown MCP server", "server", m.Server)
			line, err = streamjson.EncodeControlError(m.RequestID, "no MCP server named "+m.Server)
		} else {
			ctx, cancel := context.WithTimeout(context.Background(), s.opts.MCPTimeout)
			answered := make(chan struct{})
			go func() { // the call ends with the process
				select {
				case <-s.exited:
					cancel()
				case <-answered:
				}
			}()
			resp := srv.HandleMCP(ctx, m.Message)
			close(answered)
			cancel()
			line, err = streamjson.EncodeMCPResponse(m.RequestID, resp)
			if err != nil {
				line, err = streamjson.EncodeControlError(m.RequestID, "the MCP server "+m.Server+" gave an invalid answer")
			}
		}
		if err == nil {
			err = s.write(context.Background(), line)
		}
		if err != nil {
			s.log.Warn("agent MCP answer not written", "server", m.Server, "request", m.RequestID, "err", err)
		}
	}()
}
