package schedstore

import (
	"context"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/store/convstore"
	"github.com/agentbridge/agentbridge/store/internal/storetest"
	"github.com/agentbridge/agentbridge/store/sqldb"
)

func cfgSchedule(name, cron, prompt string) Schedule {
	return Schedule{Name: name, Key: convstore.ConversationKey{Bot: "team", Channel: "C1"}, Cron: cron, TZ: "UTC", Prompt: prompt, CatchUp: true}
}

func TestSyncConfigSchedules(t *testing.T) {
	kit.Each(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		clock := storetest.UseClock(s.db, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), 0)

		a, u, r, err := s.SyncConfigSchedules(ctx, []Schedule{cfgSchedule("standup", "0 9 * * *", "summarise"), cfgSchedule("nightly", "@daily", "check")})
		if err != nil || a != 2 || u != 0 || r != 0 {
			t.Fatalf("first sync: %d %d %d %v", a, u, r, err)
		}
		all, err := s.ActiveSchedules(ctx)
		if err != nil || len(all) != 2 {
			t.Fatalf("active = %v, %v", all, err)
		}
		standup := all[0]
		if standup.Source != ScheduleFromConfig || standup.Name != "standup" || !standup.CatchUp || !standup.LastFireAt.IsZero() {
			t.Errorf("stored %+v", standup)
		}
		fire := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
		if err := s.RecordScheduleRun(ctx, standup.ID, fire, "inbox-1"); err != nil {
			t.Fatal(err)
		}

		// Same definitions again: nothing changes, history is kept.
		if a, u, r, err := s.SyncConfigSchedules(ctx, []Schedule{cfgSchedule("standup", "0 9 * * *", "summarise"), cfgSchedule("nightly", "@daily", "check")}); err != nil || a+u+r != 0 {
			t.Fatalf("idempotent sync: %d %d %d %v", a, u, r, err)
		}
		// A new prompt keeps the last firing; a new cron starts from now; a
		// name gone from the YAML is removed.
		clock.Set(time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC))
		a, u, r, err = s.SyncConfigSchedules(ctx, []Schedule{cfgSchedule("standup", "0 9 * * *", "summarise more"), cfgSchedule("weekly", "@weekly", "x")})
		if err != nil || a != 1 || u != 1 || r != 1 {
			t.Fatalf("changing sync: %d %d %d %v", a, u, r, err)
		}
		got, err := s.ScheduleByID(ctx, standup.ID)
		if err != nil || got.Prompt != "summarise more" || !got.LastFireAt.Equal(fire) || got.LastInboxID != "inbox-1" || got.Runs != 1 {
			t.Errorf("updated standup = %+v, %v", got, err)
		}
		if nightly, _ := s.ScheduleByID(ctx, all[1].ID); nightly.Active() || nightly.RemovedBy != "config" {
			t.Errorf("nightly should be removed by config: %+v", nightly)
		}
		if _, _, _, err := s.SyncConfigSchedules(ctx, []Schedule{cfgSchedule("standup", "30 8 * * *", "summarise more"), cfgSchedule("weekly", "@weekly", "x")}); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.ScheduleByID(ctx, standup.ID); !got.LastFireAt.Equal(clock.Time()) {
			t.Errorf("after a cron change LastFireAt = %v, want now %v", got.LastFireAt, clock.Time())
		}
		_, _, _, err = s.SyncConfigSchedules(ctx, []Schedule{cfgSchedule("x", "@daily", "a"), cfgSchedule("x", "@daily", "b")})
		storetest.WantErrIs(t, "duplicate names", err, sqldb.ErrInvalidArgument)
	})
}

func TestChatSchedules(t *testing.T) {
	kit.Each(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		conv := storetest.NewConv(t, convstore.New(s.db), convstore.ConversationKey{Bot: "team", Channel: "C1", Thread: "111.222"})
		add := func(name string, src ScheduleSource, key convstore.ConversationKey, convID string) Schedule {
			t.Helper()
			sc, err := s.AddSchedule(ctx, Schedule{Source: src, Name: name, Key: key, Cron: "0 9 * * *", Prompt: "p " + name,
				CatchUp: true, CreatedBy: "UALICE", ConversationID: convID})
			if err != nil {
				t.Fatalf("AddSchedule %s: %v", name, err)
			}
			return sc
		}
		chat := add("a", ScheduleFromChat, conv.Key, conv.ID)
		agent := add("b", ScheduleFromAgent, conv.Key, conv.ID)
		other := add("c", ScheduleFromChat, convstore.ConversationKey{Bot: "team", Channel: "C2"}, "")
		if chat.ID == 0 || chat.ID == agent.ID || chat.CreatedBy != "UALICE" || chat.Key != conv.Key {
			t.Fatalf("stored %+v / %+v", chat, agent)
		}
		if got, _ := s.SchedulesInChannel(ctx, "team", "C1"); len(got) != 2 {
			t.Errorf("in channel C1: %d, want 2", len(got))
		}
		if got, _ := s.SchedulesOfConversation(ctx, conv.ID); len(got) != 2 || got[0].ID != chat.ID || got[1].ID != agent.ID {
			t.Errorf("of conversation: %+v", got)
		}
		if err := s.RemoveSchedule(ctx, chat.ID, "UBOB"); err != nil {
			t.Fatal(err)
		}
		storetest.WantErrIs(t, "remove twice", s.RemoveSchedule(ctx, chat.ID, "UBOB"), sqldb.ErrNotFound)
		storetest.WantErrIs(t, "remove unknown", s.RemoveSchedule(ctx, 999, "UBOB"), sqldb.ErrNotFound)
		if got, _ := s.ScheduleByID(ctx, chat.ID); got.Active() || got.RemovedBy != "UBOB" {
			t.Errorf("removed = %+v", got)
		}
		if got, _ := s.ActiveSchedules(ctx); len(got) != 2 {
			t.Errorf("active after remove: %d", len(got))
		}
		fire := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
		if err := s.RecordScheduleSkip(ctx, other.ID, fire); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.ScheduleByID(ctx, other.ID); got.Skips != 1 || !got.LastFireAt.Equal(fire) || got.Runs != 0 {
			t.Errorf("after skip: %+v", got)
		}
		storetest.WantErrIs(t, "record unknown", s.RecordScheduleRun(ctx, 999, fire, "x"), sqldb.ErrNotFound)
		_, err := s.AddSchedule(ctx, Schedule{Source: ScheduleFromConfig, Name: "x", Key: conv.Key, Cron: "@daily", Prompt: "p"})
		storetest.WantErrIs(t, "add a config schedule", err, sqldb.ErrInvalidArgument)
		_, err = s.AddSchedule(ctx, Schedule{Source: ScheduleFromChat, Name: "x", Key: conv.Key, Prompt: "p"})
		storetest.WantErrIs(t, "add without cron", err, sqldb.ErrInvalidArgument)
	})
}
