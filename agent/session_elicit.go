package agent

import (
	"context"
	"fmt"
	"slices"

	"github.com/agentbridge/agentbridge/agent/streamjson"
)

// RespondElicitation answers a pending elicitation request (an
// streamjson.Elicitation event) with action — streamjson.ElicitAccept with
// content (the form's values by property name), ElicitDecline or
// ElicitCancel. It fails with ErrNotPending when the request was answered,
// withdrawn (PermissionCancelled) or never existed, and ErrClosed after the
// process exited. It blocks only for the write to the CLI's stdin.
func (s *Session) RespondElicitation(ctx context.Context, requestID, action string, content map[string]any) error {
	line, err := streamjson.EncodeElicitationResponse(requestID, action, content)
	if err != nil {
		return fmt.Errorf("respond to elicitation %s: %w", requestID, err)
	}
	s.mu.Lock()
	pending, exited := s.st.elicits[requestID], s.st.exited
	delete(s.st.elicits, requestID)
	s.mu.Unlock()
	if !pending {
		if exited {
			return fmt.Errorf("respond to elicitation %s: %w", requestID, ErrClosed)
		}
		return fmt.Errorf("respond to elicitation %s: %w", requestID, ErrNotPending)
	}
	s.changed()
	if err := s.write(ctx, line); err != nil {
		s.mu.Lock()
		if !s.st.exited {
			s.st.elicits[requestID] = true
		}
		s.mu.Unlock()
		return fmt.Errorf("respond to elicitation %s: %w", requestID, err)
	}
	s.log.Info("agent elicitation answered", "request", requestID, "action", action, "fields", len(content))
	return nil
}

// BackgroundTasks returns the background tasks the CLI last reported
// running (system/background_tasks_changed), none after the process
// exited. Safe for concurrent use; it never blocks on the process.
func (s *Session) BackgroundTasks() []streamjson.BackgroundTask {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.st.bg)
}
