package commands

import (
	"context"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/access"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/profile"
	"github.com/agentbridge/agentbridge/store"
)

// fakeConv is a Conversation over a real store that records its notices
// and removals; the methods a test does not need are left to the nil
// embedded interface (calling one panics).
type fakeConv struct {
	Conversation
	key     bridges.ConversationKey
	bot     *config.Bot
	st      *store.Store
	notices []string
	removed []int64
}

func (f *fakeConv) Key() bridges.ConversationKey { return f.key }
func (f *fakeConv) Access() *access.Authority {
	return access.New(&config.Config{Bots: []*config.Bot{f.bot}}, f.st)
}
func (f *fakeConv) ID() string              { return "conv-1" }
func (f *fakeConv) Bot() *config.Bot        { return f.bot }
func (f *fakeConv) Profile() *profile.Agent { return &profile.Agent{Name: "default"} }
func (f *fakeConv) Store() Store            { return f.st }
func (f *fakeConv) Now() time.Time          { return time.Date(2026, 1, 5, 8, 0, 0, 0, time.UTC) }
func (f *fakeConv) Log() *slog.Logger       { return slog.New(slog.DiscardHandler) }
func (f *fakeConv) Notice(_ context.Context, text string) {
	f.notices = append(f.notices, text)
}

func (f *fakeConv) RemoveSchedule(ctx context.Context, sc store.Schedule, by string) error {
	f.removed = append(f.removed, sc.ID)
	return f.st.RemoveSchedule(ctx, sc.ID, by)
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

// TestScheduleRmOtherBotRefused: "!schedule rm N" names a schedule by its
// number, which is unique across bots: a schedule of another bot is not
// there for this one, even for an admin or its creator.
func TestScheduleRmOtherBotRefused(t *testing.T) {
	ctx := context.Background()
	for _, user := range []string{"alice", "dave"} {
		f := newFakeConv(t)
		other, err := f.st.AddSchedule(ctx, store.Schedule{Source: store.ScheduleFromChat, Name: "other bot's",
			Key: store.ConversationKey{Bot: "otherbot", Channel: "C1", Thread: "T1"}, Cron: "0 9 * * *", TZ: "UTC",
			Prompt: "x", CreatedBy: "alice", ConversationID: "elsewhere"})
		if err != nil {
			t.Fatal(err)
		}
		l, _ := Parse("!schedule rm " + strconv.FormatInt(other.ID, 10))
		Run(ctx, f, "m1", Author{ID: user}, l)
		want := "There is no schedule #" + strconv.FormatInt(other.ID, 10) + "."
		if len(f.notices) != 1 || f.notices[0] != want || len(f.removed) != 0 {
			t.Errorf("%s: notices %q, removed %v; want %q and nothing removed", user, f.notices, f.removed, want)
		}
		if sc, err := f.st.ScheduleByID(ctx, other.ID); err != nil || !sc.Active() {
			t.Errorf("%s: the other bot's schedule: %+v, %v", user, sc, err)
		}
	}
}

// TestScheduleRmOwnBot: the same command removes this bot's schedule for
// its creator and refuses it to someone else.
func TestScheduleRmOwnBot(t *testing.T) {
	ctx := context.Background()
	f := newFakeConv(t)
	sc, err := f.st.AddSchedule(ctx, store.Schedule{Source: store.ScheduleFromChat, Name: "mine",
		Key: store.ConversationKey(f.key), Cron: "0 9 * * *", TZ: "UTC", Prompt: "x", CreatedBy: "alice", ConversationID: "conv-1"})
	if err != nil {
		t.Fatal(err)
	}
	l, _ := Parse("!schedule rm #" + strconv.FormatInt(sc.ID, 10))
	Run(ctx, f, "m1", Author{ID: "bob"}, l)
	Run(ctx, f, "m2", Author{ID: "alice"}, l)
	if len(f.notices) != 2 || !strings.HasPrefix(f.notices[0], "⛔ Only whoever made schedule") ||
		!strings.HasPrefix(f.notices[1], "🗑 Removed schedule #") || len(f.removed) != 1 {
		t.Errorf("notices %q, removed %v", f.notices, f.removed)
	}
}
