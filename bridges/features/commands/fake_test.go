package commands

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/access"
	"github.com/agentbridge/agentbridge/bridges/core/worker"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/profile"
	"github.com/agentbridge/agentbridge/store"
)

// fakeConv is a Conversation over a real store that records its notices;
// the methods a test does not need are left to the nil
// embedded interface (calling one panics).
type fakeConv struct {
	Conversation
	key     bridges.ConversationKey
	bot     *config.Bot
	st      *store.Store
	notices []string
}

func (f *fakeConv) Key() bridges.ConversationKey { return f.key }
func (f *fakeConv) Access() *access.Authority {
	return access.New(&config.Config{Bots: []*config.Bot{f.bot}}, f.st)
}
func (f *fakeConv) ID() string              { return "conv-1" }
func (f *fakeConv) Bot() *config.Bot        { return f.bot }
func (f *fakeConv) Profile() *profile.Agent { return &profile.Agent{Name: "default"} }
func (f *fakeConv) Store() *store.Store     { return f.st }
func (f *fakeConv) Now() time.Time          { return time.Date(2026, 1, 5, 8, 0, 0, 0, time.UTC) }
func (f *fakeConv) Log() *slog.Logger       { return slog.New(slog.DiscardHandler) }
func (f *fakeConv) Notice(_ context.Context, text string) {
	f.notices = append(f.notices, text)
}

func newFakeConv(t *testing.T) *fakeConv {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "bridge.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return &fakeConv{
		key: bridges.ConversationKey{Bot: "bot", Channel: "C1", Thread: "T1"},
		bot: &config.Bot{Name: "bot", Access: config.Access{Admins: []string{"dave"}}},
		st:  st,
	}
}

// testTable is the built-in commands and a registered one standing in
// for a feature's (bridges/features/schedule registers !schedule).
var testTable = NewTable(Command{Name: "schedule", Usage: "add|list|rm", Help: "a feature's command",
	Run: func(ctx context.Context, c Conversation, _ worker.Person, l Line) { c.Notice(ctx, "schedule "+l.Text) }})
