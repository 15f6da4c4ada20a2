package agents

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges/core/render"
	"github.com/agentbridge/agentbridge/internal/textcut"
	"github.com/google/uuid"
)

// This file holds what a conversation's worker asks of its live Session
// beyond the interface: the optional abilities *agent.Session has, and
// the uuid of a message delivered to it again.

// Busy reports whether a live session has a background task or a turn
// the worker does not see, when the session can tell (agent.Session).
func Busy(s Session) bool {
	b, ok := s.(interface{ Busy() bool })
	return ok && b.Busy()
}

// Elicitor is the optional ability of a Session (*agent.Session has it)
// to answer an elicitation request.
type Elicitor interface {
	RespondElicitation(ctx context.Context, requestID, action string, content map[string]any) error
}

// BackgroundStatusLine is !status's line about the session's running
// background tasks ("" when there are none, s cannot list them or is nil).
func BackgroundStatusLine(s Session) string {
	bl, ok := s.(interface {
		BackgroundTasks() []streamjson.BackgroundTask
	})
	if !ok {
		return ""
	}
	tasks := bl.BackgroundTasks()
	if len(tasks) == 0 {
		return ""
	}
	names := make([]string, 0, len(tasks))
	for _, t := range tasks {
		names = append(names, render.CodeSpan(textcut.OneLine(textcut.OrBlank(t.Description, strings.TrimSpace(t.TaskType+" "+t.TaskID)), 80)))
	}
	return fmt.Sprintf("\n• background tasks: %d — %s", len(tasks), strings.Join(names, ", "))
}

// RedeliveryUUID is the agent message uuid of a re-delivery. A resumed
// CLI ignores a user message whose uuid its transcript already holds, so
// a re-delivery needs a new one; it is derived from the ledger id and the
// attempt, so the same attempt always gets the same uuid.
func RedeliveryUUID(ledgerID string, attempt int) string {
	ns, err := uuid.Parse(ledgerID)
	if err != nil {
		return uuid.NewString()
	}
	return uuid.NewSHA1(ns, fmt.Appendf(nil, "redelivery-%d", attempt)).String()
}

// Drain discards a session's remaining events: nobody else reads them.
// It returns when the session's event channel closes.
func Drain(s Session) {
	for range s.Events() {
	}
}
