package agent

import (
	"context"
	"errors"
	"testing"

	"github.com/agentbridge/agentbridge/agent/agenttest"
	"github.com/agentbridge/agentbridge/agent/streamjson"
)

// TestCLILoadsNoSessionIntoARunningProcess records what the pinned CLI
// 2.1.330 allows for a warm resume (agent/streamjson/testdata/
// protocol-resume.md): a running process refuses every request that
// could load a stored session — the subtypes a host might try, and
// claim_session, which only a process started with --await-claim accepts
// and which binds a fresh session — and its conversation stays empty. A
// session is chosen at spawn only (--resume), which is why the pool's
// warm resume starts the process ahead of time (pool.Pool.WarmResume).
func TestCLILoadsNoSessionIntoARunningProcess(t *testing.T) {
	h := &harness{agenttest.NewHarness(t)}
	ctx, cancel := context.WithTimeout(context.Background(), 2*agenttest.EventTimeout)
	defer cancel()
	old, oldRec := h.start(h.opts())
	agenttest.Send(t, old, "remember the word kiwi")
	agenttest.NextResult(t, oldRec)
	if err := old.Close(ctx); err != nil {
		t.Fatal(err)
	}

	s, rec := h.start(h.opts())
	if err := s.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	for _, req := range []map[string]any{
		{"subtype": "resume_session", "session_id": old.SessionID()},
		{"subtype": "load_session", "session_id": old.SessionID()},
		{"subtype": "resume", "session_id": old.SessionID()},
		{"subtype": "claim_session", "cwd": h.Workdir},
	} {
		_, err := s.control(ctx, req["subtype"].(string), func(id string) ([]byte, error) {
			return streamjson.EncodeControlRequest(id, req)
		})
		var ce *ControlError
		if !errors.As(err, &ce) {
			t.Errorf("%s: %v; want the CLI's refusal", req["subtype"], err)
			continue
		}
		t.Logf("%s refused: %s", req["subtype"], ce.Message)
	}
	agenttest.Send(t, s, "[echo-history]")
	if res := agenttest.NextResult(t, rec); res.Text != "history: (none)" || res.SessionID != s.SessionID() {
		t.Errorf("after the refused requests: %q in session %s; want an empty conversation of %s", res.Text, res.SessionID, s.SessionID())
	}
}
