package assemble_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/profile"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// TestCoreHasTheBridgesFeatures: the core every bridge runs (assemble.Core,
// through bridgetest.RunCore) has the features registered here: someone
// who may not talk to the bot is told so privately (bridges/features/strangers),
// and config reloads have their part in each conversation
// (bridges/features/reload: !status names the config generation in force), and a
// person's files reach bridges/features/uploads (a voice note without transcription
// is answered so).
func TestCoreHasTheBridgesFeatures(t *testing.T) {
	cfg := &config.Config{
		DataDir: t.TempDir(),
		Agents: map[string]*profile.Agent{"coder": {Name: "coder", Command: "claude", Workdir: t.TempDir(), MaxLive: 2,
			IdleTimeout: time.Minute, ApprovalTimeout: time.Minute, PermissionMode: "default"}},
		Bots: []*config.Bot{{Name: "bot", Platform: "slack", Agent: "coder", Verbosity: "compact",
			Access: config.Access{Users: []string{"alice"}}}},
	}
	live := config.NewLive(cfg, time.Now())
	plat := bridgetest.New(bridges.Limits{MaxMessageRunes: 4000, CanButtons: true, EditInterval: 10 * time.Millisecond})
	bridgetest.RunCore(t, live, map[string]bridges.Platform{"bot": plat}, nil)
	ctx := context.Background()
	k := bridges.ConversationKey{Bot: "bot", Channel: "C1", Thread: "T1"}

	if err := plat.Send(ctx, bridges.Inbound{Key: k, MsgID: "m1", UserID: "mallory", Text: "hello?"}); err != nil {
		t.Fatal(err)
	}
	testkit.WaitUntil(t, "the stranger's private notice", 10*time.Second, func() bool { return len(plat.Privates()) == 1 })

	if err := plat.Send(ctx, bridges.Inbound{Key: k, MsgID: "m2", UserID: "alice", Text: bridges.CommandPrefix + "status"}); err != nil {
		t.Fatal(err)
	}
	plat.WaitFor(t, k, 10*time.Second, "!status with the config generation", func(m bridgetest.Msg) bool {
		return strings.Contains(m.Text, "config: generation 1")
	})

	voice := bridges.ConversationKey{Bot: "bot", Channel: "C1", Thread: "T2"}
	if err := plat.Send(ctx, bridges.Inbound{Key: voice, MsgID: "m3", UserID: "alice",
		Files: []bridges.File{{ID: "V1", Name: "note.ogg", MimeType: "audio/ogg", Voice: true, Size: 100}}}); err != nil {
		t.Fatal(err)
	}
	plat.WaitFor(t, voice, 10*time.Second, "the voice note answered", func(m bridgetest.Msg) bool {
		return strings.Contains(m.Text, "Voice notes are not set up")
	})
}
