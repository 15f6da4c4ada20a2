package sessiondir_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges/core/sessiondir"
	"github.com/agentbridge/agentbridge/store"
)

// TestPrune: only state directories that no conversation uses
// and that did not change since the cutoff are removed.
func TestPrune(t *testing.T) {
	ctx := context.Background()
	dataDir := t.TempDir()
	st, err := store.Open(ctx, filepath.Join(dataDir, "bridge.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	conv, _, err := st.GetOrCreateConversation(ctx, store.ConversationKey{Bot: "b", Channel: "C", Thread: "T"}, "coder", "alice")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SetSessionID(ctx, conv.ID, "in-use-old"); err != nil {
		t.Fatal(err)
	}
	old, cutoff := time.Now().Add(-48*time.Hour), time.Now().Add(-24*time.Hour)
	mk := func(id string, at time.Time) {
		f := filepath.Join(dataDir, sessiondir.Dir, id, "claude", "projects", "p", id+".jsonl")
		if err := os.MkdirAll(filepath.Dir(f), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
		_ = filepath.WalkDir(filepath.Join(dataDir, sessiondir.Dir, id), func(p string, _ os.DirEntry, _ error) error {
			return os.Chtimes(p, at, at)
		})
	}
	mk("in-use-old", old)           // kept: a conversation resumes it
	mk("abandoned-old", old)        // removed
	mk("abandoned-new", time.Now()) // kept: changed after the cutoff
	mk("abandoned-touched", old)
	if err := os.WriteFile(filepath.Join(dataDir, sessiondir.Dir, "abandoned-touched", "claude", "late"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	n, err := sessiondir.Prune(ctx, st, dataDir, cutoff, slog.New(slog.DiscardHandler))
	if err != nil || n != 1 {
		t.Fatalf("Prune = %d, %v; want 1 removed", n, err)
	}
	ents, _ := os.ReadDir(filepath.Join(dataDir, sessiondir.Dir))
	var left []string
	for _, e := range ents {
		left = append(left, e.Name())
	}
	if want := []string{"abandoned-new", "abandoned-touched", "in-use-old"}; !slices.Equal(left, want) {
		t.Errorf("left %v, want %v", left, want)
	}
	// No sessions directory at all is fine.
	if n, err := sessiondir.Prune(ctx, st, t.TempDir(), cutoff, slog.New(slog.DiscardHandler)); n != 0 || err != nil {
		t.Errorf("empty data dir: %d, %v", n, err)
	}
}
