package whatsapp

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"google.golang.org/protobuf/proto"

	"github.com/agentbridge/agentbridge/agent"
	"github.com/agentbridge/agentbridge/agent/fakemodel"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/store"
)

// liveTimeout bounds waits involving the real CLI (shared test machine).
const liveTimeout = 90 * time.Second

func requireClaude(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("claude"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("claude CLI not found and CI=true: %v", err)
		}
		t.Skipf("claude CLI not installed: %v", err)
	}
}

// startLive runs the adapter over the recording fake client with a real
// core driving the real CLI against the fake model.
func startLive(t *testing.T) (*env, string) {
	t.Helper()
	requireClaude(t)
	srv := fakemodel.New(t)
	envVars := map[string]string{}
	for _, kv := range srv.Env() {
		k, v, _ := strings.Cut(kv, "=")
		envVars[k] = v
	}
	workdir := filepath.Join(t.TempDir(), "work")
	if err := os.MkdirAll(workdir, 0o700); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "bridge.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	fake := newFakeClient(nil)
	self := func() (types.JID, types.JID) { return pnJID("+" + botPhone), lidJID(botLID) }
	b := New(Options{Bot: "phone", Client: fake, Self: self})
	cfg := &config.Config{
		DataDir: t.TempDir(),
		Agents: map[string]*config.Agent{"coder": {Name: "coder", Command: "claude", Workdir: workdir, Home: t.TempDir(), Env: envVars,
			MaxLive: 2, ApprovalTimeout: 10 * time.Minute, PermissionMode: "default"}},
		Bots: []*config.Bot{{Name: "phone", Platform: config.PlatformWhatsApp, Agent: "coder", WhatsApp: &config.WhatsApp{},
			Access: config.Access{Users: []string{alice, bob}, Approvers: []string{alice}}}},
	}
	log := slog.New(slog.NewTextHandler(tbWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
	apool := agent.NewPool(log)
	core := bridges.NewCore(bridges.CoreOptions{Config: cfg, Store: st, Pool: bridges.NewAgentPool(apool), Logger: log})
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- core.Run(runCtx, map[string]bridges.Platform{"phone": b}) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("core Run: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("core did not stop")
		}
		cctx, ccancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer ccancel()
		if err := apool.Close(cctx); err != nil {
			t.Errorf("close pool: %v", err)
		}
		if err := st.Close(); err != nil {
			t.Errorf("close store: %v", err)
		}
	})
	e := &env{t: t, fake: fake, b: b}
	e.waitCallsWithin(liveTimeout, "the adapter connects", func(cs []fakeCall) bool {
		for _, c := range cs {
			if c.Op == "Connect" {
				return true
			}
		}
		return false
	})
	return e, workdir
}

// tbWriter logs through t.Log.
type tbWriter struct{ t testing.TB }

func (w tbWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// A WhatsApp conversation with the real CLI: the agent wants to run a
// command, the card lists numbered choices, a non-approver's "1" quoting
// the card does not run it, the requester's "1" does, and the answer
// comes back quoting the user's message.
func TestLiveApprovalByNumber(t *testing.T) {
	e, workdir := startLive(t)
	chat := pnJID(alice)
	hello := e.msg(chat, pnJID(alice), "hello there")
	e.dispatch(hello)
	got := e.waitTextWithin(liveTimeout, chat, "pong: hello there")
	if q := got.Message.GetExtendedTextMessage().GetContextInfo().GetStanzaID(); q != hello.Info.ID {
		t.Errorf("the answer quotes %q, want %q", q, hello.Info.ID)
	}

	e.dispatch(extended(e.msg(group, pnJID(alice), "@"+botPhone+" [bash touch approved.txt]"),
		&waE2E.ContextInfo{MentionedJID: []string{botPhone + "@s.whatsapp.net"}}))
	card := e.waitTextWithin(liveTimeout, group, "Reply *1*")
	if !strings.Contains(textOf(card), "touch approved.txt") {
		t.Errorf("card %q does not show the command", textOf(card))
	}
	cardID := e.lastSentID(group, "Reply *1*")
	quoting := &waE2E.ContextInfo{StanzaID: proto.String(cardID), Participant: proto.String(botPhone + "@s.whatsapp.net")}
	e.dispatch(extended(e.msg(group, pnJID(bob), "1"), quoting))
	e.dispatch(extended(e.msg(group, pnJID(alice), "1"), quoting))
	e.waitTextWithin(liveTimeout, group, "Allowed")
	deadline := time.Now().Add(liveTimeout)
	for {
		if _, err := os.Stat(filepath.Join(workdir, "approved.txt")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the approved command did not run; calls:\n%s", dumpCalls(e.fake.Calls()))
		}
		time.Sleep(50 * time.Millisecond)
	}
	answer := e.waitTextWithin(liveTimeout, group, " · $")
	if q := answer.Message.GetExtendedTextMessage().GetContextInfo().GetStanzaID(); !strings.HasPrefix(q, "IN") {
		t.Errorf("the answer quotes %q, want the user's message", q)
	}
	for _, c := range sends(e.fake.Calls()) {
		if strings.Contains(textOf(c), bob) && strings.Contains(textOf(c), "Allowed") {
			t.Errorf("bob decided: %q", textOf(c))
		}
	}
}
