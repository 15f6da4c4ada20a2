package cards_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/worker"
	"github.com/agentbridge/agentbridge/bridges/features/cards"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/profile"
	"github.com/agentbridge/agentbridge/store"
)

// host is a conversation for the cards over a real store, on a platform
// without buttons: it records posts, notices, private replies and the
// answers sent to the CLI.
type host struct {
	st       *store.Store
	conv     store.Conversation
	bot      *config.Bot
	posts    int
	notices  []string
	private  []string
	answered []string // "id allow" or "id deny"
}

func newHost(t *testing.T) *host {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "bridge.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	conv, _, err := st.GetOrCreateConversation(ctx, store.ConversationKey{Bot: "bot", Channel: "C1", Thread: "T1"}, "default", "alice")
	if err != nil {
		t.Fatal(err)
	}
	return &host{st: st, conv: conv, bot: &config.Bot{Name: "bot", Access: config.Access{Approvers: []string{"carol"}}}}
}

func (h *host) Log() *slog.Logger                  { return slog.New(slog.DiscardHandler) }
func (h *host) ID() string                         { return h.conv.ID }
func (h *host) Key() bridges.ConversationKey       { return bridges.ConversationKey(h.conv.Key) }
func (h *host) Bot() *config.Bot                   { return h.bot }
func (h *host) Profile() *profile.Agent            { return &profile.Agent{Name: "default"} }
func (h *host) Limits() bridges.Limits             { return bridges.Limits{MaxMessageRunes: 4000} }
func (h *host) MaxRunes() int                      { return 4000 }
func (h *host) Now() time.Time                     { return time.Unix(1_700_000_000, 0) }
func (h *host) Store() *store.Store                { return h.st }
func (h *host) Notice(_ context.Context, t string) { h.notices = append(h.notices, t) }
func (h *host) Post(context.Context, bridges.Message) (bridges.MessageRef, error) {
	h.posts++
	return bridges.MessageRef{Key: h.Key(), ID: fmt.Sprintf("m%d", h.posts)}, nil
}
func (h *host) EditOrPost(_ context.Context, ref bridges.MessageRef, _, _ bridges.Message) (bridges.MessageRef, error) {
	return ref, nil
}
func (h *host) ReplyPrivately(_ context.Context, _ bridges.Action, t string) {
	h.private = append(h.private, t)
}
func (h *host) Record(ctx context.Context, _ string, do func(context.Context) error, _ ...any) {
	if err := do(ctx); err != nil {
		panic(err)
	}
}
func (h *host) CountApproval(string)        {}
func (h *host) IsApprover(user string) bool { return slices.Contains(h.bot.Access.Approvers, user) }
func (h *host) Requesters() map[string]worker.Person {
	return map[string]worker.Person{"alice": {ID: "alice", Name: "alice"}}
}
func (h *host) ScheduledRun() string                      { return "" }
func (h *host) Live() bool                                { return true }
func (h *host) CanElicit() bool                           { return false }
func (h *host) StartTimer(time.Duration, string)          {}
func (h *host) StopTimer(string)                          {}
func (h *host) BeginTurn(context.Context)                 {}
func (h *host) BeforeCard(context.Context)                {}
func (h *host) Note(context.Context, string)              {}
func (h *host) ToolWaiting(context.Context, string)       {}
func (h *host) ToolDecided(context.Context, string, bool) {}
func (h *host) ToolInput(string) json.RawMessage          { return nil }
func (h *host) RestartSoon(context.Context) bool          { return false }
func (h *host) Respond(_ context.Context, id string, d streamjson.Decision) error {
	h.answered = append(h.answered, fmt.Sprintf("%s %v", id, d.Allow))
	return nil
}
func (h *host) RespondElicitation(context.Context, string, string, map[string]any) error { return nil }
func (h *host) ask(ctx context.Context, s *cards.Set, id, cmd string) {
	s.OnPermission(ctx, streamjson.PermissionRequest{RequestID: id, ToolName: "Bash", Input: json.RawMessage(`{"command":"` + cmd + `"}`)})
}

func (h *host) reply(ctx context.Context, s *cards.Set, user, text, quoting string) bool {
	return s.AnswerFromText(ctx, store.InboxMessage{ConversationID: h.conv.ID, UserID: user, UserName: user, Text: text, ReplyTo: quoting})
}

// A typed choice decides the card it quotes, else the newest; a reply
// quoting a message that is no card decides nothing (it is for the agent);
// only the turn's requesters and the approvers decide (fail closed).
func TestTypedAnswersAndWhoDecides(t *testing.T) {
	ctx := context.Background()
	h := newHost(t)
	s := cards.New(h)
	h.ask(ctx, s, "r1", "touch a.txt")  // posted as m1
	h.ask(ctx, s, "r2", "rm -rf build") // posted as m2
	if s.Len() != 2 {
		t.Fatalf("%d open cards, want 2", s.Len())
	}
	if h.reply(ctx, s, "alice", "yes", "some-answer") || len(h.answered) != 0 {
		t.Fatalf("a reply quoting no card decided %v; want it passed on to the agent", h.answered)
	}
	if !h.reply(ctx, s, "alice", "1", "m1") || !slices.Equal(h.answered, []string{"r1 true"}) {
		t.Fatalf("answers after quoting card 1 = %v, want r1 allowed", h.answered)
	}
	if !h.reply(ctx, s, "mallory", "1", "") || len(h.answered) != 1 || !strings.Contains(h.notices[len(h.notices)-1], "only @alice") {
		t.Fatalf("a stranger's answer: answers %v notices %q; want refused", h.answered, h.notices)
	}
	s.OnAction(ctx, bridges.Action{CardID: "r2", Choice: bridges.ChoiceAllow, UserID: "mallory"})
	if len(h.answered) != 1 || len(h.private) != 1 {
		t.Fatalf("a stranger's click: answers %v private replies %q; want refused", h.answered, h.private)
	}
	s.OnAction(ctx, bridges.Action{CardID: "r2", Choice: bridges.ChoiceDeny, UserID: "carol"})
	if !slices.Equal(h.answered, []string{"r1 true", "r2 false"}) || s.Len() != 0 {
		t.Fatalf("an approver's deny: answers %v, %d open; want r2 denied and no card open", h.answered, s.Len())
	}
	if !h.reply(ctx, s, "alice", "1", "m1") || !strings.Contains(h.notices[len(h.notices)-1], "already closed") {
		t.Fatalf("a choice quoting a closed card: notices %q; want told it is closed", h.notices)
	}
}
