package whatsapp

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
	"google.golang.org/protobuf/proto"

	"github.com/agentbridge/agentbridge/agent/agenttest"
	"github.com/agentbridge/agentbridge/agent/fakemodel"
	"github.com/agentbridge/agentbridge/agent/pool"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core"
	"github.com/agentbridge/agentbridge/bridges/core/agents"
	"github.com/agentbridge/agentbridge/bridges/features/agenttools"
	"github.com/agentbridge/agentbridge/bridges/features/cards"
	"github.com/agentbridge/agentbridge/bridges/features/uploads"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/profile"
	"github.com/agentbridge/agentbridge/internal/testkit"
	"github.com/agentbridge/agentbridge/store"
)

// liveTimeout bounds waits involving the real CLI (shared test machine).
const liveTimeout = 90 * time.Second

// liveEnv is the adapter over the recording fake client with a real core
// driving the real CLI against the fake model.
type liveEnv struct {
	*env
	srv     *fakemodel.Server
	workdir string
}

// startClaudeEnv runs the adapter over the recording fake client with a real
// core driving the real CLI against the fake model. Alice's LID is mapped
// to her number in the device store's LID map.
func startClaudeEnv(t *testing.T) *liveEnv {
	t.Helper()
	return startClaudeEnvWith(t, nil)
}

// startClaudeEnvWith is startClaudeEnv with the core's Transcriber tr (nil: voice
// notes are not set up).
func startClaudeEnvWith(t *testing.T, tr uploads.Transcriber) *liveEnv {
	t.Helper()
	h := agenttest.NewHarness(t)
	srv, envVars := h.Model, h.Env()
	workdir := filepath.Join(t.TempDir(), "work")
	if err := os.MkdirAll(workdir, 0o700); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "bridge.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	dev, err := OpenDeviceStore(ctx, filepath.Join(t.TempDir(), "device.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dev.Close() })
	if err := dev.LIDMap.PutLIDMapping(ctx, lidJID(aliceLID), pnJID(alice)); err != nil {
		t.Fatal(err)
	}
	fake := newFakeClient(nil)
	self := func() (types.JID, types.JID) {
		pn, lid := pnJID("+"+botPhone), lidJID(botLID)
		pn.Device, lid.Device = 7, 7
		return pn, lid
	}
	b := New(Options{Bot: "phone", Client: fake, Self: self, LIDs: dev.LIDMap, SendInterval: sendInterval})
	cfg := &config.Config{
		DataDir: t.TempDir(),
		Agents: map[string]*profile.Agent{"coder": {Name: "coder", Command: "claude", Workdir: workdir, Home: t.TempDir(), Env: envVars,
			MaxLive: 2, ApprovalTimeout: 10 * time.Minute, PermissionMode: "default"}},
		Bots: []*config.Bot{{Name: "phone", Platform: Name, Agent: "coder", Settings: &Config{},
			Access: config.Access{Users: []string{alice, bob}, Approvers: []string{alice}}}},
	}
	log := slog.New(slog.NewTextHandler(testkit.LogWriter(t), &slog.HandlerOptions{Level: slog.LevelInfo}))
	apool := pool.New(log)
	cr := core.NewCore(core.CoreOptions{Config: cfg, Store: st, Pool: agents.NewPool(apool), Logger: log, Tools: agenttools.New(), Cards: cards.Feature{}, Files: uploads.New(tr)})
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- cr.Run(runCtx, map[string]bridges.Platform{"phone": b}) }()
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
	return &liveEnv{env: e, srv: srv, workdir: workdir}
}

// modelSaw reports whether any user text the model received contains sub.
func (l *liveEnv) modelSaw(sub string) bool {
	for _, r := range l.srv.MessagesRequests() {
		for _, u := range fakemodel.UserTexts(r) {
			if strings.Contains(u, sub) {
				return true
			}
		}
	}
	return false
}

// waitFile waits until the agent created name in the workdir.
func (l *liveEnv) waitFile(name string) {
	l.t.Helper()
	testkit.WaitUntilSeen(l.t, "the agent to create "+name, liveTimeout, func() (bool, string) {
		_, err := os.Stat(filepath.Join(l.workdir, name))
		return err == nil, "calls:\n" + dumpCalls(l.fake.Calls())
	})
}

// quotes is the message id the first part of a sent message quotes.
func quotes(c fakeCall) string {
	return c.Message.GetExtendedTextMessage().GetContextInfo().GetStanzaID()
}

// tinyPNG is a valid 1×1 PNG.
func tinyPNG(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, 1, 1))); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// The acceptance cases through the real adapter, the real core
// and the real CLI against the fake model, in one shared conversation
// per chat: what is ignored (own message, edit, status broadcast) and who
// gets silence (a stranger, an unmapped LID) never reaches the agent nor
// causes a single call towards them; a private text, an image with its
// caption, a group mention by LID (from a LID sender) and by phone JID and
// a quoted reply reach it and are answered quoting the message; approvals
// by number and by reaction from someone who may not approve (a colleague,
// a stranger) decide nothing, and from the approver they run the tool.
func TestLiveAcceptance(t *testing.T) {
	l := startClaudeEnv(t)
	dm := pnJID(alice)
	mentionLID := &waE2E.ContextInfo{MentionedJID: []string{botLID + "@lid"}}
	mentionPN := &waE2E.ContextInfo{MentionedJID: []string{botPhone + "@s.whatsapp.net"}}

	// Ignored and silenced.
	own := l.msg(dm, pnJID("+"+botPhone), "[bash touch own.txt]")
	own.Info.IsFromMe = true
	edit := l.msg(dm, pnJID(alice), "an edit")
	edit.IsEdit = true
	status := l.msg(types.StatusBroadcastJID, pnJID(alice), "my status")
	for _, m := range []*events.Message{own, edit, status,
		l.msg(pnJID(stranger), pnJID(stranger), "stranger says hi"),
		l.msg(lidJID(unmapped), lidJID(unmapped), "unmapped lid says hi"),
		extended(l.msg(group, pnJID(stranger), "@"+botPhone+" stranger in the group"), mentionPN)} {
		l.dispatch(m)
	}

	// Private text, answered quoting it.
	hello := l.msg(dm, pnJID(alice), "hello there")
	l.dispatch(hello)
	if got := l.waitTextWithin(liveTimeout, dm, "pong: hello there"); quotes(got) != hello.Info.ID {
		t.Errorf("the answer quotes %q, want %q", quotes(got), hello.Info.ID)
	}

	// An image with its caption: the agent gets both.
	l.fake.mu.Lock()
	l.fake.files["/img/live"] = tinyPNG(t)
	l.fake.mu.Unlock()
	img := l.msg(dm, pnJID(alice), "")
	img.Message = &waE2E.Message{ImageMessage: &waE2E.ImageMessage{Caption: proto.String("what is in this picture"),
		Mimetype: proto.String("image/png"), DirectPath: proto.String("/img/live"), FileLength: proto.Uint64(uint64(len(tinyPNG(t))))}}
	l.dispatch(img)
	l.waitTextWithin(liveTimeout, dm, "pong: [Image") // the CLI adds a text naming the image last
	if !l.modelSaw("what is in this picture") {
		t.Error("the model did not get the caption")
	}
	sawImage := false
	for _, r := range l.srv.MessagesRequests() {
		for _, m := range r.Messages {
			for _, b := range m.Blocks {
				sawImage = sawImage || b.Type == "image"
			}
		}
	}
	if !sawImage {
		t.Error("the model got no image block")
	}

	// A group mention of the bot's LID, from alice writing as her LID: a
	// permission card. A colleague's quoted "1" and 👍, a stranger's 👍 and
	// "1" decide nothing; alice's 👍 runs the command.
	ask := extended(l.msg(group, lidJID(aliceLID), "@"+botLID+" [bash touch approved.txt]"), mentionLID)
	l.dispatch(ask)
	card := l.waitTextWithin(liveTimeout, group, "Reply *1* Allow")
	if !strings.Contains(textOf(card), "touch approved.txt") {
		t.Errorf("card %q does not show the command", textOf(card))
	}
	cardID := l.lastSentID(group, "Reply *1* Allow")
	quoting := func(id string) *waE2E.ContextInfo {
		return &waE2E.ContextInfo{StanzaID: proto.String(id), Participant: proto.String(botPhone + "@s.whatsapp.net")}
	}
	l.dispatch(extended(l.msg(group, pnJID(bob), "1"), quoting(cardID)))
	l.dispatch(l.reaction(group, pnJID(bob), cardID, "👍"))
	l.dispatch(l.reaction(group, pnJID(stranger), cardID, "👍"))
	l.dispatch(extended(l.msg(group, pnJID(stranger), "1"), quoting(cardID)))
	l.dispatch(l.reaction(group, pnJID(alice), cardID, "👍"))
	l.waitTextWithin(liveTimeout, group, "Allowed by @"+alice)
	l.waitFile("approved.txt")
	answer := l.waitTextWithin(liveTimeout, group, "tool said")
	if quotes(answer) != ask.Info.ID {
		t.Errorf("the answer quotes %q, want the request %q", quotes(answer), ask.Info.ID)
	}

	// A reply quoting the bot's answer (no mention) is for the bot; the
	// approver's number quoting the card decides it.
	l.dispatch(extended(l.msg(group, pnJID(bob), "[bash touch second.txt]"), quoting(l.lastSentID(group, "tool said"))))
	l.waitTextWithin(liveTimeout, group, "touch second.txt")
	second := l.lastSentID(group, "touch second.txt")
	l.dispatch(extended(l.msg(group, pnJID(alice), "1"), quoting(second)))
	l.waitFile("second.txt")
	// A mention by phone JID.
	l.dispatch(extended(l.msg(group, pnJID(bob), "@"+botPhone+" thanks"), mentionPN))
	l.waitTextWithin(liveTimeout, group, "pong: thanks")

	for _, sub := range []string{"own.txt", "an edit", "my status", "stranger", "unmapped lid"} {
		if l.modelSaw(sub) {
			t.Errorf("the model saw %q", sub)
		}
	}
	for _, f := range []string{"own.txt"} {
		if _, err := os.Stat(filepath.Join(l.workdir, f)); err == nil {
			t.Errorf("%s exists", f)
		}
	}
	for _, c := range l.fake.Calls() {
		if c.To == pnJID(stranger) || c.To == lidJID(unmapped) || c.To == types.StatusBroadcastJID {
			t.Errorf("a call towards a stranger or the status broadcast: %s", dumpCalls([]fakeCall{c}))
		}
		if strings.Contains(textOf(c), "Allowed by @"+bob) || strings.Contains(textOf(c), stranger) {
			t.Errorf("someone not allowed decided: %q", textOf(c))
		}
	}
}
