package handoff

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/bridges/core/sessiondir"
	"github.com/agentbridge/agentbridge/config/profile"
	"github.com/agentbridge/agentbridge/store"
)

// TestHandoffRefusesACP: hand-off moves Claude Code sessions only. Export
// of a conversation whose profile is of kind acp — or whose session
// directory holds an ACP agent's record, the profile changed since — is
// refused saying so (not "no transcript yet"), as is an import into a bot
// whose profile is of kind acp; both are audited as refusals.
func TestHandoffRefusesACP(t *testing.T) {
	e := newServerEnv(t)
	ctx := context.Background()
	const id = "0b7c1f3e-2a4d-4c1e-9f00-5a6b7c8d9e0f"
	if err := e.st.SetSessionID(ctx, e.conv.ID, id); err != nil {
		t.Fatal(err)
	}
	// A Claude profile, but the session's directory is an ACP agent's.
	rec := filepath.Join(e.core.cfg.DataDir, sessiondir.Dir, id, "acp", "session")
	if err := os.MkdirAll(filepath.Dir(rec), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rec, []byte("fake-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.client(anaToken).Export(ctx, e.conv.ID, t.TempDir(), t.TempDir()); err == nil || !strings.Contains(err.Error(), "runs agent profile coder of kind acp") {
		t.Errorf("export of a session with an ACP record: %v", err)
	}
	if err := os.RemoveAll(filepath.Dir(rec)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.client(anaToken).Export(ctx, e.conv.ID, t.TempDir(), t.TempDir()); err == nil || !strings.Contains(err.Error(), "has no transcript yet") {
		t.Errorf("export of a Claude session without a transcript: %v", err)
	}

	e.core.cfg.Agents["coder"].Kind = profile.KindACP
	if _, _, err := e.client(anaToken).Export(ctx, e.conv.ID, t.TempDir(), t.TempDir()); err == nil || !strings.Contains(err.Error(), "`bridge export` hands over Claude Code sessions only") {
		t.Errorf("export of an ACP conversation: %v", err)
	}
	const other = "1c8d2f4e-3b5d-4d2e-8f11-6b7c8d9e0f1a"
	file := filepath.Join(t.TempDir(), other+".jsonl")
	if err := os.WriteFile(file, []byte(`{"type":"user","sessionId":"`+other+`","message":{"role":"user","content":"kiwi"}}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := e.client(anaToken).Import(ctx, "team", "C9", file); err == nil || !strings.Contains(err.Error(), "profile coder is of kind acp") {
		t.Errorf("import into an ACP bot: %v", err)
	}
	if _, err := os.Stat(filepath.Join(e.core.cfg.DataDir, sessiondir.Dir, other)); err == nil {
		t.Error("a refused import wrote the session's state")
	}
	rows := e.audit(t)
	if !auditHas(rows, store.HandoffEvent{Action: store.HandoffRefused, Request: "export", Person: "ana", UserID: "UANA", ConversationID: e.conv.ID, Key: e.conv.Key}, "of kind acp") ||
		!auditHas(rows, store.HandoffEvent{Action: store.HandoffRefused, Request: "import", Person: "ana", UserID: "UANA", Key: store.ConversationKey{Bot: "team", Channel: "C9"}}, "of kind acp") {
		t.Errorf("the refusals are not audited:\n%+v", rows)
	}
}
