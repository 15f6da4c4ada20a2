package core

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentbridge/agentbridge/agent/streamjson"
)

// This file holds what the agent asks or runs beyond permission requests:
// MCP elicitations (forms an MCP server of the profile wants filled in)
// and the background tasks shown by !status.

// elicitationResponder is the optional ability of an AgentSession
// (*agent.Session has it) to answer an elicitation request.
type elicitationResponder interface {
	RespondElicitation(ctx context.Context, requestID, action string, content map[string]any) error
}

// backgroundLister is the optional ability of an AgentSession
// (*agent.Session has it) to list its running background tasks.
type backgroundLister interface {
	BackgroundTasks() []streamjson.BackgroundTask
}

// onElicitation answers an MCP server's elicitation request. The bridge
// does not show forms from MCP servers (yet): the request is cancelled —
// the answer MCP defines for "dismissed without a choice", which the CLI
// also gave before the bridge knew the request — and the conversation is
// told what was asked, so nobody waits for a form that never comes. The
// server's text is untrusted: shown on one line, clipped, as a quote.
func (cv *conversation) onElicitation(ctx context.Context, e streamjson.Elicitation) {
	cv.log.Info("agent elicitation cancelled: MCP forms are not supported", "request", e.RequestID, "mcp_server", e.Server, "mode", e.Mode)
	if r, ok := cv.sess.(elicitationResponder); ok {
		if err := r.RespondElicitation(ctx, e.RequestID, streamjson.ElicitCancel, nil); err != nil {
			cv.log.Warn("answer elicitation", "request", e.RequestID, "err", err)
		}
	}
	cv.notice(ctx, fmt.Sprintf("🔌 The MCP server %s asked for input (%s) — this bridge cannot show MCP forms yet, so the request was cancelled.",
		codeSpan(oneLine(orDefault(e.Server, "unknown"), 60)), "“"+oneLine(orDefault(e.Message, "no message"), 200)+"”"))
}

// backgroundStatusLine is !status's line about the agent's running
// background tasks ("" when there are none or no agent is live).
func (cv *conversation) backgroundStatusLine() string {
	bl, ok := cv.sess.(backgroundLister)
	if !ok {
		return ""
	}
	tasks := bl.BackgroundTasks()
	if len(tasks) == 0 {
		return ""
	}
	names := make([]string, 0, len(tasks))
	for _, t := range tasks {
		names = append(names, codeSpan(oneLine(orDefault(t.Description, strings.TrimSpace(t.TaskType+" "+t.TaskID)), 80)))
	}
	return fmt.Sprintf("\n• background tasks: %d — %s", len(tasks), strings.Join(names, ", "))
}
