package schedule

import (
	"context"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/worker"
	"github.com/agentbridge/agentbridge/bridges/features/commands"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/profile"
	"github.com/agentbridge/agentbridge/store"
)

// The !schedule command through the command table it is registered in
// (commands.NewTable); adding, listing and the approval card through the
// core are tested in bridges/core.

// cmdConv is a commands.Conversation over a real store that records its
// notices; the methods a test does not need are left to the nil embedded
// interface (calling one panics).
type cmdConv struct {
	commands.Conversation
	key     bridges.ConversationKey
	bot     *config.Bot
	st      *store.Store
	notices []string
}

func (f *cmdConv) Key() bridges.ConversationKey { return f.key }
func (f *cmdConv) ID() string                   { return "conv-1" }
func (f *cmdConv) Bot() *config.Bot             { return f.bot }
func (f *cmdConv) Profile() *profile.Agent      { return &profile.Agent{Name: "default"} }
func (f *cmdConv) Now() time.Time               { return time.Date(2026, 1, 5, 8, 0, 0, 0, time.UTC) }
func (f *cmdConv) Log() *slog.Logger            { return slog.New(slog.DiscardHandler) }
func (f *cmdConv) Notice(_ context.Context, text string) {
	f.notices = append(f.notices, text)
}

// newCmdConv is a conversation of bot "bot" (admin dave) and the command
// table with the feature's commands, over one store.
func newCmdConv(t *testing.T) (*cmdConv, *commands.Table) {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "bridge.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	f := NewFeature(Options{Config: &config.Config{}, Store: st})
	return &cmdConv{
		key: bridges.ConversationKey{Bot: "bot", Channel: "C1", Thread: "T1"},
		bot: &config.Bot{Name: "bot", Access: config.Access{Admins: []string{"dave"}}},
		st:  st,
	}, commands.NewTable(f.Commands()...)
}

// active reports whether schedule id is still active.
func active(t *testing.T, st *store.Store, id int64) bool {
	t.Helper()
	sc, err := st.ScheduleByID(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return sc.Active()
}

// TestScheduleRmOtherBotRefused: "!schedule rm N" names a schedule by its
// number, which is unique across bots: a schedule of another bot is not
// there for this one, even for an admin or its creator.
func TestScheduleRmOtherBotRefused(t *testing.T) {
	ctx := context.Background()
	for _, user := range []string{"alice", "dave"} {
		f, tbl := newCmdConv(t)
		other, err := f.st.AddSchedule(ctx, store.Schedule{Source: store.ScheduleFromChat, Name: "other bot's",
			Key: store.ConversationKey{Bot: "otherbot", Channel: "C1", Thread: "T1"}, Cron: "0 9 * * *", TZ: "UTC",
			Prompt: "x", CreatedBy: "alice", ConversationID: "elsewhere"})
		if err != nil {
			t.Fatal(err)
		}
		l, _ := tbl.Parse("!schedule rm " + strconv.FormatInt(other.ID, 10))
		tbl.Run(ctx, f, "m1", worker.Person{ID: user}, l)
		want := "There is no schedule #" + strconv.FormatInt(other.ID, 10) + "."
		if len(f.notices) != 1 || f.notices[0] != want {
			t.Errorf("%s: notices %q; want %q", user, f.notices, want)
		}
		if !active(t, f.st, other.ID) {
			t.Errorf("%s: the other bot's schedule was removed", user)
		}
	}
}

// TestScheduleRmOwnBot: the same command removes this bot's schedule for
// its creator and refuses it to someone else.
func TestScheduleRmOwnBot(t *testing.T) {
	ctx := context.Background()
	f, tbl := newCmdConv(t)
	sc, err := f.st.AddSchedule(ctx, store.Schedule{Source: store.ScheduleFromChat, Name: "mine",
		Key: store.ConversationKey(f.key), Cron: "0 9 * * *", TZ: "UTC", Prompt: "x", CreatedBy: "alice", ConversationID: "conv-1"})
	if err != nil {
		t.Fatal(err)
	}
	l, _ := tbl.Parse("!schedule rm #" + strconv.FormatInt(sc.ID, 10))
	tbl.Run(ctx, f, "m1", worker.Person{ID: "bob"}, l)
	if !active(t, f.st, sc.ID) {
		t.Errorf("removed for someone else; notices %q", f.notices)
	}
	tbl.Run(ctx, f, "m2", worker.Person{ID: "alice"}, l)
	if len(f.notices) != 2 || !strings.HasPrefix(f.notices[0], "⛔ Only whoever made schedule") ||
		!strings.HasPrefix(f.notices[1], "🗑 Removed schedule #") || active(t, f.st, sc.ID) {
		t.Errorf("notices %q, still active %v", f.notices, active(t, f.st, sc.ID))
	}
}

// TestScheduleSubcommandCase: "!schedule RM N" removes like "rm".
func TestScheduleSubcommandCase(t *testing.T) {
	ctx := context.Background()
	for _, v := range []string{"RM", "Rm", "rM"} {
		f, tbl := newCmdConv(t)
		sc, err := f.st.AddSchedule(ctx, store.Schedule{Source: store.ScheduleFromChat, Name: "mine",
			Key: store.ConversationKey(f.key), Cron: "0 9 * * *", TZ: "UTC", Prompt: "x", CreatedBy: "alice", ConversationID: "conv-1"})
		if err != nil {
			t.Fatal(err)
		}
		l, _ := tbl.Parse("!schedule " + v + " " + strconv.FormatInt(sc.ID, 10))
		tbl.Run(ctx, f, "m1", worker.Person{ID: "alice"}, l)
		if active(t, f.st, sc.ID) || len(f.notices) != 1 || !strings.HasPrefix(f.notices[0], "🗑 Removed schedule #") {
			t.Errorf("!schedule %s: notices %q, still active %v", v, f.notices, active(t, f.st, sc.ID))
		}
	}
}
