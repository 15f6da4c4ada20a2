package bridgetest

import (
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/profile"
)

// Config is a bridge config for adapter tests, as RunCore and RunReplica
// take it: a data_dir in tb.TempDir(), one agent "coder" (the FakePool
// never runs its command) with a workdir there, and bots. A test sets
// more fields (StatusDelay, …) on the result.
func Config(tb testing.TB, bots ...*config.Bot) *config.Config {
	return &config.Config{
		DataDir: tb.TempDir(),
		Agents: map[string]*profile.Agent{"coder": {Name: "coder", Command: "claude", Workdir: tb.TempDir(), MaxLive: 2,
			IdleTimeout: time.Minute, ApprovalTimeout: time.Minute, PermissionMode: "default"}},
		Bots: bots,
	}
}
