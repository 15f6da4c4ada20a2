package pool

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/agentbridge/agentbridge/agent"
)

// lateMCP is the MCP server of a warm spare: the spare starts before any
// conversation exists, so its tools cannot act on one yet. Until Bind,
// protocol messages (initialize, tools/list, notifications) are answered by
// the prototype (the profile's server, the same tools), and a tool call
// waits for the conversation's server. Bind is called when a conversation
// takes the spare (Pool.AcquireNew).
type lateMCP struct {
	proto agent.MCPServer
	once  sync.Once
	ready chan struct{}
	bound agent.MCPServer
}

func newLateMCP(proto agent.MCPServer) *lateMCP {
	return &lateMCP{proto: proto, ready: make(chan struct{})}
}

// bind routes every later message to s; only the first call counts.
func (l *lateMCP) bind(s agent.MCPServer) {
	l.once.Do(func() { l.bound = s; close(l.ready) })
}

// HandleMCP implements MCPServer.
func (l *lateMCP) HandleMCP(ctx context.Context, msg json.RawMessage) json.RawMessage {
	select {
	case <-l.ready:
		return l.bound.HandleMCP(ctx, msg)
	default:
	}
	var head struct {
		Method string `json:"method"`
	}
	if json.Unmarshal(msg, &head) != nil || head.Method != "tools/call" {
		return l.proto.HandleMCP(ctx, msg)
	}
	select {
	case <-l.ready:
		return l.bound.HandleMCP(ctx, msg)
	case <-ctx.Done():
		return l.proto.HandleMCP(ctx, msg) // the prototype's answer to a call it cannot serve
	}
}

// lateServers wraps each server of a spare's template in its own lateMCP.
func lateServers(template map[string]agent.MCPServer) map[string]agent.MCPServer {
	if len(template) == 0 {
		return nil
	}
	out := make(map[string]agent.MCPServer, len(template))
	for name, s := range template {
		out[name] = newLateMCP(s)
	}
	return out
}

// bindServers hands a spare's late servers the conversation's servers.
func bindServers(spare, conv map[string]agent.MCPServer) {
	for name, s := range spare {
		if l, ok := s.(*lateMCP); ok && conv[name] != nil {
			l.bind(conv[name])
		}
	}
}
