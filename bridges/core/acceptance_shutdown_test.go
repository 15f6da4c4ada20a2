package core_test

import (
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/fakemodel"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/internal/testkit"
	"github.com/agentbridge/agentbridge/store"
)

// TestAcceptanceStopRightAfterReply stops the bridge while the answer to a
// follow-up is being posted: the CLI prints its result and, a moment
// later, the message's "completed" receipt, which the stopping core no
// longer reads. The answer recorded the message as handled, so after a
// restart on the same database the agent must not get it again (it would
// answer it twice), and the answer is posted once.
func TestAcceptanceStopRightAfterReply(t *testing.T) {
	t.Parallel()
	testkit.RequireClaude(t)
	srv := fakemodel.New(t)
	plat := bridgetest.New(defaultLimits())
	shared := liveSetup{srv: srv, dbPath: filepath.Join(t.TempDir(), "bridge.db"), home: t.TempDir(),
		workdir: filepath.Join(t.TempDir(), "work"), platform: plat}
	k := key("stop-after-reply")

	a := startLive(t, shared)
	a.send(k, "m1", "alice", "hello")
	a.waitReply(k, "pong: hello")
	a.waitFinal(k)

	// The platform takes the follow-up's answer only once the core has
	// been told to stop and has let go of its conversations; the worker
	// posting it then finds its queue closed.
	var once sync.Once
	stopAtAnswer := func(text string) {
		if !strings.Contains(text, "pong: the follow-up") || !strings.Contains(text, " · $") {
			return
		}
		once.Do(func() {
			a.cancel()
			deadline := time.Now().Add(liveTimeout)
			for a.core.ActiveConversations() > 0 {
				if time.Now().After(deadline) {
					t.Error("the core did not let go of its conversations")
					return
				}
				time.Sleep(time.Millisecond)
			}
			time.Sleep(20 * time.Millisecond) // the queues are closed right after
		})
	}
	plat.FailPosts(func(_ bridges.ConversationKey, m bridges.Message) error { stopAtAnswer(m.Text); return nil })
	plat.FailEdits(func(_ bridges.MessageRef, m bridges.Message) error { stopAtAnswer(m.Text); return nil })
	a.send(k, "m2", "alice", "the follow-up")
	a.waitReply(k, "pong: the follow-up")
	a.stop()
	before := len(srv.MessagesRequests())

	// The restarted bridge on a new platform value: its messages wait
	// until this core is the one running.
	shared.platform = bridgetest.New(defaultLimits())
	b := startLive(t, shared)
	b.send(k, "m3", "alice", "after the restart")
	b.waitReply(k, "after the restart") // with the follow-up again in the same prompt, when delivered again
	b.waitFinal(k)

	conv := b.conversation(k)
	if in, err := b.st.InboxByID(ctxT(t), ledgerID(t, b.st, conv.ID, "m2")); err != nil || in.State != store.InboxCompleted || in.Attempts != 0 {
		t.Errorf("ledger of the follow-up = %+v, %v; want completed at the first attempt", in, err)
	}
	after := srv.MessagesRequests()[before:]
	if len(after) == 0 {
		t.Fatal("the model got no request after the restart")
	}
	for _, r := range after {
		for _, text := range fakemodel.UserTexts(r) {
			if strings.Contains(text, redeliveryPrefix) {
				t.Errorf("the restarted bridge delivered the answered follow-up again: %q", text)
			}
		}
	}
	if n := strings.Count(strings.Join(fakemodel.UserTexts(after[len(after)-1]), "\n"), "the follow-up"); n != 1 {
		t.Errorf("the session holds the follow-up %d times, want once", n)
	}
	answers := 0
	for _, m := range append(plat.Messages(k), shared.platform.Messages(k)...) {
		if strings.Contains(m.Text, "pong: the follow-up") {
			answers++
		}
	}
	if answers != 1 {
		t.Errorf("the follow-up was answered %d times in the thread, want once", answers)
	}
}
