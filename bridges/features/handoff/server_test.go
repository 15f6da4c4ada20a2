package handoff

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/profile"
	"github.com/agentbridge/agentbridge/internal/testkit"
	"github.com/agentbridge/agentbridge/store"
)

const (
	anaToken = "ana-token-0123456789abcdef"
	bobToken = "bob-token-0123456789abcdef"
	eveToken = "eve-token-0123456789abcdef"
)

// fakeCore is the bridge as the server sees it: access lists, a platform
// per bot, and the messages and clicks handed to it.
type fakeCore struct {
	cfg     *config.Config
	plat    *bridgetest.Platform
	stopped atomic.Bool // Platform returns nil: the bot is not running
	mu      sync.Mutex
	msgs    []bridges.Inbound
	acts    []bridges.Action
}

func (f *fakeCore) HandleMessage(_ context.Context, m bridges.Inbound) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.msgs = append(f.msgs, m)
	return nil
}

func (f *fakeCore) HandleAction(_ context.Context, a bridges.Action) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.acts = append(f.acts, a)
	return nil
}

func (f *fakeCore) Owns(context.Context, bridges.ConversationKey) (bool, error) { return true, nil }

func (f *fakeCore) Allowed(key bridges.ConversationKey, user string) bool {
	b := f.cfg.Bot(key.Bot)
	return b != nil && (len(b.Access.Users) == 0 || slices.Contains(b.Access.Users, user) || slices.Contains(b.Access.Admins, user))
}

func (f *fakeCore) Platform(bot string) bridges.Platform {
	if f.cfg.Bot(bot) == nil || f.stopped.Load() {
		return nil
	}
	return f.plat
}

// serverEnv is a Server over a real store with one conversation that ana
// wrote in; bob may talk to the bot but never wrote there; dave is admin;
// eve is mapped to a user the bot does not allow.
type serverEnv struct {
	srv  *Server
	core *fakeCore
	st   *store.Store
	conv store.Conversation
	url  string
	hub  *Hub
}

func newServerEnv(t *testing.T) *serverEnv {
	t.Helper()
	dir := t.TempDir()
	cfg := &config.Config{
		DataDir: dir,
		Agents:  map[string]*profile.Agent{"coder": {Name: "coder", Workdir: filepath.Join(dir, "work")}},
		Bots: []*config.Bot{{Name: "team", Platform: "slack", Agent: "coder",
			Access: config.Access{Users: []string{"UANA", "UBOB"}, Admins: []string{"UDAVE"}}}},
		Handoff: config.Handoff{Users: []config.HandoffUser{
			{Name: "ana", Token: anaToken, As: map[string]string{"team": "UANA"}},
			{Name: "bob", Token: bobToken, As: map[string]string{"team": "UBOB"}},
			{Name: "dave", Token: "dave-token-0123456789abcdef", As: map[string]string{"team": "UDAVE"}},
			{Name: "eve", Token: eveToken, As: map[string]string{"team": "UEVE"}},
			{Name: "nobot", Token: "nobot-token-0123456789abcdef", As: map[string]string{"other": "U1"}},
		}},
	}
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(dir, "bridge.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	conv, _, err := st.GetOrCreateConversation(ctx, store.ConversationKey{Bot: "team", Channel: "C1", Thread: "T1"}, "coder", "UANA")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.Enqueue(ctx, store.InboxMessage{ConversationID: conv.ID, Bot: "team", PlatformMsgID: "m1", UserID: "UANA", Text: "hi"}); err != nil {
		t.Fatal(err)
	}
	fc := &fakeCore{cfg: cfg, plat: bridgetest.New(bridges.Limits{MaxMessageRunes: 4000})}
	hub := NewHub()
	srv := NewServer(Options{Config: cfg, Store: st, Core: fc, Hub: hub, Heartbeat: 20 * time.Millisecond})
	hs := httptest.NewServer(srv.Handler())
	hs.Config.RegisterOnShutdown(srv.Shutdown)
	t.Cleanup(func() { srv.Shutdown(); hs.Close() })
	return &serverEnv{srv: srv, core: fc, st: st, conv: conv, url: hs.URL, hub: hub}
}

func (e *serverEnv) client(token string) *Client { return &Client{Base: e.url, Token: token} }

// audit returns the hand-off audit log, oldest first.
func (e *serverEnv) audit(t *testing.T) []store.HandoffEvent {
	t.Helper()
	rows, err := e.st.HandoffAudit(context.Background(), 1000)
	if err != nil {
		t.Fatalf("HandoffAudit: %v", err)
	}
	slices.Reverse(rows)
	return rows
}

// auditHas reports whether rows hold one that matches want in its action,
// request, person, user, conversation and key, and whose reason contains
// reason.
func auditHas(rows []store.HandoffEvent, want store.HandoffEvent, reason string) bool {
	return slices.ContainsFunc(rows, func(r store.HandoffEvent) bool {
		return r.Action == want.Action && r.Request == want.Request && r.Person == want.Person && r.UserID == want.UserID &&
			r.ConversationID == want.ConversationID && r.Key == want.Key && strings.Contains(r.Reason, reason) &&
			strings.HasPrefix(r.Remote, "127.0.0.1:") && !r.At.IsZero()
	})
}

// TestAttachRefusals: attach fails closed, saying why: no token, an
// unknown one, a person not mapped to the bot, not allowed by its access
// lists, or not taking part in the conversation; an unknown conversation.
func TestAttachRefusals(t *testing.T) {
	e := newServerEnv(t)
	cases := []struct{ name, token, conv, want string }{
		{"no token", "", e.conv.ID, "no handoff token"},
		{"unknown token", "x-token-0123456789abcdefgh", e.conv.ID, "unknown handoff token"},
		{"not mapped to the bot", "nobot-token-0123456789abcdef", e.conv.ID, "nobot has no user id for bot team"},
		{"not allowed by access", eveToken, e.conv.ID, "eve (UEVE) may not talk to bot team"},
		{"not a participant", bobToken, e.conv.ID, "bob (UBOB) does not take part in conversation"},
		{"unknown conversation", anaToken, "nope", `no conversation "nope"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := e.client(tc.token).Attach(context.Background(), tc.conv, strings.NewReader(""), &strings.Builder{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Attach: %v, want an error containing %q", err, tc.want)
			}
			if _, _, err := e.client(tc.token).Export(context.Background(), tc.conv, t.TempDir(), t.TempDir()); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Export: %v, want an error containing %q", err, tc.want)
			}
		})
	}
	if n := len(e.core.plat.Calls()); n != 0 {
		t.Errorf("refused attaches posted %d messages", n)
	}
	// Each refusal is in the audit log with who, which conversation and
	// why, as far as the request got; no token is.
	rows := e.audit(t)
	if len(rows) != 2*len(cases) {
		t.Errorf("%d audit rows, want %d refusals", len(rows), 2*len(cases))
	}
	key := store.ConversationKey{Bot: "team", Channel: "C1", Thread: "T1"}
	for _, want := range []struct {
		ev     store.HandoffEvent
		reason string
	}{
		{store.HandoffEvent{Action: store.HandoffRefused, Request: "attach"}, "no handoff token"},
		{store.HandoffEvent{Action: store.HandoffRefused, Request: "export"}, "unknown handoff token"},
		{store.HandoffEvent{Action: store.HandoffRefused, Request: "attach", Person: "nobot", ConversationID: e.conv.ID, Key: key}, "nobot has no user id"},
		{store.HandoffEvent{Action: store.HandoffRefused, Request: "attach", Person: "eve", UserID: "UEVE", ConversationID: e.conv.ID, Key: key}, "may not talk to bot team"},
		{store.HandoffEvent{Action: store.HandoffRefused, Request: "attach", Person: "bob", UserID: "UBOB", ConversationID: e.conv.ID, Key: key}, "does not take part"},
		{store.HandoffEvent{Action: store.HandoffRefused, Request: "export", Person: "bob", UserID: "UBOB", ConversationID: e.conv.ID, Key: key}, "does not take part"},
		{store.HandoffEvent{Action: store.HandoffRefused, Request: "attach", Person: "ana"}, `no conversation "nope"`},
	} {
		if !auditHas(rows, want.ev, want.reason) {
			t.Errorf("audit log lacks %+v (%q):\n%+v", want.ev, want.reason, rows)
		}
	}
	for _, r := range rows {
		if r.Action != store.HandoffRefused {
			t.Errorf("refused requests recorded as %s: %+v", r.Action, r)
		}
		for _, tok := range []string{anaToken, bobToken, eveToken, "x-token"} {
			if strings.Contains(r.Reason, tok) {
				t.Errorf("audit row holds a token: %+v", r)
			}
		}
	}
	// Without handoff.users nobody may.
	e.core.cfg.Handoff.Users = nil
	if err := e.client(anaToken).Attach(context.Background(), e.conv.ID, strings.NewReader(""), &strings.Builder{}); err == nil ||
		!strings.Contains(err.Error(), "terminal hand-off is off") {
		t.Errorf("Attach without handoff.users: %v", err)
	}
}

// TestAttachSession: a participant (and an admin) attaches; the
// conversation is told; lines become their messages, y decides the open
// card as them; what the hub is shown reaches the terminal; end of input
// detaches and the conversation is told.
func TestAttachSession(t *testing.T) {
	e := newServerEnv(t)
	key := bridges.ConversationKey{Bot: "team", Channel: "C1", Thread: "T1"}
	inR, inW := newPipe()
	var out testkit.SyncBuffer
	done := make(chan error, 1)
	go func() { done <- e.client(anaToken).Attach(context.Background(), e.conv.ID, inR, &out) }()
	testkit.WaitUntil(t, "attached", 20*time.Second, func() bool { return strings.Contains(out.String(), "attached to conversation "+e.conv.ID) })
	e.core.plat.WaitFor(t, key, 5*time.Second, "the attach notice", func(m bridgetest.Msg) bool {
		return strings.Contains(m.Text, "ana attached a terminal")
	})

	inW.line("hello from the desk")
	testkit.WaitUntil(t, "the message", 20*time.Second, func() bool {
		e.core.mu.Lock()
		defer e.core.mu.Unlock()
		return len(e.core.msgs) == 1 && e.core.msgs[0].Text == "hello from the desk" && e.core.msgs[0].UserID == "UANA" &&
			e.core.msgs[0].Key == key && strings.HasPrefix(e.core.msgs[0].MsgID, "handoff-")
	})
	e.core.mu.Lock()
	own := e.core.msgs[0].MsgID
	e.core.mu.Unlock()
	e.hub.Sent(key, own, "ana", "hello from the desk")            // the terminal's own: not repeated
	e.hub.Sent(key, "1795.0001", "Bob", "what about\nthe tests?") // someone in chat
	e.hub.AgentEvent(key, streamjson.TextDelta{Text: "Hel"})
	e.hub.AgentEvent(key, streamjson.TextDelta{Text: "lo!"})
	e.hub.AgentEvent(key, streamjson.AssistantText{Text: "Hello!"})
	e.hub.AgentEvent(bridges.ConversationKey{Bot: "team", Channel: "C1", Thread: "other"}, streamjson.TextDelta{Text: "NOT MINE"})
	e.hub.Shown(key, bridges.Message{Text: "🔐 Bash wants to run", CardID: "card-1", Buttons: []bridges.Button{
		{ID: bridges.ChoiceAllow, Label: "Allow"}, {ID: bridges.ChoiceDeny, Label: "Deny"}}})
	testkit.WaitUntil(t, "the card", 20*time.Second, func() bool { return strings.Contains(out.String(), "[1] Allow (y) [2] Deny (n)") })
	inW.line("y")
	testkit.WaitUntil(t, "the decision", 20*time.Second, func() bool {
		e.core.mu.Lock()
		defer e.core.mu.Unlock()
		return len(e.core.acts) == 1 && e.core.acts[0].CardID == "card-1" && e.core.acts[0].Choice == bridges.ChoiceAllow &&
			e.core.acts[0].UserID == "UANA"
	})
	e.core.mu.Lock()
	reply := e.core.acts[0].Reply
	e.core.mu.Unlock()
	_ = reply(context.Background(), "⛔ not yours")
	e.hub.Shown(key, bridges.Message{Text: "🔐 Bash wants to run\n\n✅ Allowed by @ana", CardID: "card-1"})
	testkit.WaitUntil(t, "the outcome", 20*time.Second, func() bool { return strings.Contains(out.String(), "┗ ✅ Allowed by @ana") })
	inW.line("y") // no card open: a message
	testkit.WaitUntil(t, "y as a message", 20*time.Second, func() bool {
		e.core.mu.Lock()
		defer e.core.mu.Unlock()
		return len(e.core.msgs) == 2 && e.core.msgs[1].Text == "y"
	})
	inW.close()
	if err := <-done; err != nil {
		t.Fatalf("Attach: %v", err)
	}
	text := out.String()
	for _, want := range []string{"Hello!\n", "! ⛔ not yours", "» Bob: what about the tests?\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("terminal lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "NOT MINE") || strings.Count(text, "Hello!") != 1 || strings.Contains(text, "» ana") {
		t.Errorf("terminal shows another conversation or the text twice:\n%s", text)
	}
	e.core.plat.WaitFor(t, key, 5*time.Second, "the detach notice", func(m bridgetest.Msg) bool {
		return strings.Contains(m.Text, "ana's terminal detached")
	})
	// The detach notice is posted as the terminal's stream ends; the hub
	// forgets it as that request returns, a moment later on a busy machine.
	testkit.WaitUntil(t, "no terminal attached after the detach", 20*time.Second, func() bool { return e.hub.Attached(key) == 0 })
	// The attach and the detach are in the audit log, in that order; the
	// messages and the click are not hand-off events.
	skey := store.ConversationKey(key)
	rows := e.audit(t)
	if len(rows) != 2 || !auditHas(rows[:1], store.HandoffEvent{Action: store.HandoffAttach, Request: "attach", Person: "ana", UserID: "UANA", ConversationID: e.conv.ID, Key: skey}, "") ||
		!auditHas(rows[1:], store.HandoffEvent{Action: store.HandoffDetach, Request: "attach", Person: "ana", UserID: "UANA", ConversationID: e.conv.ID, Key: skey}, "") {
		t.Errorf("audit log after one attach:\n%+v", rows)
	}

	// An admin who never wrote there may attach too.
	if err := e.client("dave-token-0123456789abcdef").Attach(context.Background(), e.conv.ID, strings.NewReader(""), &out); err != nil {
		t.Errorf("admin attach: %v", err)
	}
}

// TestSendNeedsOwnAttachment: send and decide name an attachment; another
// person's (or none) is refused.
func TestSendNeedsOwnAttachment(t *testing.T) {
	e := newServerEnv(t)
	a := &attachment{id: "a1", key: bridges.ConversationKey{Bot: "team", Channel: "C1", Thread: "T1"}, person: "ana", userID: "UANA",
		events: make(chan Event, 1)}
	e.hub.add(a)
	for _, tc := range []struct{ token, attach string }{{bobToken, "a1"}, {anaToken, "a2"}} {
		if err := e.client(tc.token).post(context.Background(), "send", input{Attach: tc.attach, Text: "x"}); err == nil || !strings.Contains(err.Error(), "not attached") {
			t.Errorf("send as %s to %s: %v", tc.token[:3], tc.attach, err)
		}
	}
	if len(e.core.msgs) != 0 {
		t.Errorf("a refused send reached the core: %v", e.core.msgs)
	}
}

// TestSlowTerminalLosesEventsNotTheCore: the hub never blocks the core: a
// terminal that does not read drops events and is told once.
func TestSlowTerminalLosesEventsNotTheCore(t *testing.T) {
	h := NewHub()
	key := bridges.ConversationKey{Bot: "b", Channel: "c"}
	a := &attachment{id: "a", key: key, events: make(chan Event, 2)}
	h.add(a)
	for range 10 {
		h.AgentEvent(key, streamjson.TextDelta{Text: "x"}) // returns at once
	}
	if len(a.events) != 2 || !a.takeLost() || a.takeLost() {
		t.Errorf("buffered %d, lost flag not set once", len(a.events))
	}
}

// TestImportExportRoundTrip: export refuses a conversation without a
// transcript; import writes the transcript where the conversation's agent
// resumes it and creates the conversation with that session; export then
// gives it back; a second import of the session is refused.
func TestImportExportRoundTrip(t *testing.T) {
	e := newServerEnv(t)
	ctx := context.Background()
	if _, _, err := e.client(anaToken).Export(ctx, e.conv.ID, t.TempDir(), t.TempDir()); err == nil || !strings.Contains(err.Error(), "no agent session yet") {
		t.Errorf("export without a session: %v", err)
	}
	const id = "0b7c1f3e-2a4d-4c1e-9f00-5a6b7c8d9e0f"
	file := filepath.Join(t.TempDir(), id+".jsonl")
	body := `{"type":"user","sessionId":"` + id + `","message":{"role":"user","content":"kiwi"}}` + "\n" +
		`{"type":"assistant","sessionId":"` + id + `"}` + "\n"
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := e.client(eveToken).Import(ctx, "team", "C1", file); err == nil || !strings.Contains(err.Error(), "may not talk to bot team") {
		t.Errorf("import by someone the bot does not allow: %v", err)
	}
	// A failed import leaves nothing behind: once the bot runs, it works.
	e.core.stopped.Store(true)
	if _, err := e.client(anaToken).Import(ctx, "team", "C9", file); err == nil || !strings.Contains(err.Error(), "bot team is not running") {
		t.Errorf("import while the bot is stopped: %v", err)
	}
	e.core.stopped.Store(false)
	im, err := e.client(anaToken).Import(ctx, "team", "C9", file)
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	if im.Session != id || im.Messages != 2 || im.Channel != "C9" {
		t.Errorf("imported = %+v", im)
	}
	conv, err := e.st.ConversationByID(ctx, im.Conversation)
	if err != nil || conv.SessionID != id || conv.OwnerUserID != "UANA" || conv.Agent != "coder" {
		t.Fatalf("conversation = %+v, %v", conv, err)
	}
	want := TranscriptPath(cliDir(e.core.cfg.DataDir, id), e.core.cfg.Agents["coder"].Workdir, id)
	if b, err := os.ReadFile(want); err != nil || string(b) != body {
		t.Errorf("transcript at %s: %q, %v", want, b, err)
	}
	top := e.core.plat.WaitFor(t, bridges.ConversationKey{Bot: "team", Channel: "C9"}, time.Second, "the import notice", func(m bridgetest.Msg) bool {
		return strings.Contains(m.Text, "ana imported a Claude Code session from a terminal (2 messages")
	})
	if conv.Key.Thread == "" || conv.Key.Thread != top.Ref.ID || im.Thread != top.Ref.ID {
		t.Errorf("the conversation %v is not the thread on the notice %s", conv.Key, top.Ref.ID)
	}
	if _, err := e.client(anaToken).Import(ctx, "team", "C8", file); err == nil || !strings.Contains(err.Error(), "already a conversation") {
		t.Errorf("second import: %v", err)
	}
	// ana took no part in the imported conversation yet, but owns it: as
	// a participant she is who wrote there; an admin may export it.
	dir, cfgDir := t.TempDir(), t.TempDir()
	gotID, path, err := e.client("dave-token-0123456789abcdef").Export(ctx, im.Conversation, dir, cfgDir)
	if err != nil || gotID != id {
		t.Fatalf("export: %s, %v", gotID, err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != string(normalizedOnly(normalizeTranscript([]byte(body)))) || path != TranscriptPath(cfgDir, dir, id) {
		t.Errorf("exported %s: %q, %v", path, b, err)
	}
	rows := e.audit(t)
	for _, want := range []struct {
		ev     store.HandoffEvent
		reason string
	}{
		{store.HandoffEvent{Action: store.HandoffRefused, Request: "export", Person: "ana", UserID: "UANA", ConversationID: e.conv.ID, Key: e.conv.Key}, "no agent session yet"},
		{store.HandoffEvent{Action: store.HandoffRefused, Request: "import", Person: "eve", UserID: "UEVE", Key: store.ConversationKey{Bot: "team", Channel: "C1"}}, "may not talk to bot team"},
		{store.HandoffEvent{Action: store.HandoffRefused, Request: "import", Person: "ana", UserID: "UANA", Key: store.ConversationKey{Bot: "team", Channel: "C9"}}, "bot team is not running"},
		{store.HandoffEvent{Action: store.HandoffImport, Request: "import", Person: "ana", UserID: "UANA", ConversationID: im.Conversation, Key: conv.Key}, ""},
		{store.HandoffEvent{Action: store.HandoffRefused, Request: "import", Person: "ana", UserID: "UANA", Key: store.ConversationKey{Bot: "team", Channel: "C8"}}, "already a conversation"},
		{store.HandoffEvent{Action: store.HandoffExport, Request: "export", Person: "dave", UserID: "UDAVE", ConversationID: im.Conversation, Key: conv.Key}, ""},
	} {
		if !auditHas(rows, want.ev, want.reason) {
			t.Errorf("audit log lacks %+v (%q):\n%+v", want.ev, want.reason, rows)
		}
	}
}
