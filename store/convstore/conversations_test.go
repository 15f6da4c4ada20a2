package convstore

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/store/internal/storetest"
	"github.com/agentbridge/agentbridge/store/sqldb"
)

func TestGetOrCreateConversation(t *testing.T) {
	ctx := context.Background()
	kit.Each(t, func(t *testing.T, s *Store) {
		start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		storetest.UseClock(s.db, start, time.Second)
		key := ConversationKey{Bot: "team", Channel: "C1", Thread: "T1"}

		c, created, err := s.GetOrCreateConversation(ctx, key, "coder", "U1")
		if err != nil || !created {
			t.Fatalf("first call: created=%v err=%v, want created", created, err)
		}
		if c.ID == "" || c.Key != key || c.Agent != "coder" || c.OwnerUserID != "U1" || c.SessionID != "" {
			t.Fatalf("created conversation = %+v", c)
		}
		if !c.CreatedAt.Equal(start.Add(time.Second)) || !c.LastActiveAt.Equal(c.CreatedAt) {
			t.Fatalf("timestamps = %v / %v, want %v", c.CreatedAt, c.LastActiveAt, start.Add(time.Second))
		}

		again, created, err := s.GetOrCreateConversation(ctx, key, "other-agent", "U2")
		if err != nil || created {
			t.Fatalf("second call: created=%v err=%v, want existing", created, err)
		}
		if again != c {
			t.Fatalf("second call returned %+v, want unchanged %+v", again, c)
		}

		// Thread '' and another thread are different conversations.
		noThread, created, err := s.GetOrCreateConversation(ctx, ConversationKey{Bot: "team", Channel: "C1"}, "coder", "U1")
		if err != nil || !created || noThread.ID == c.ID {
			t.Fatalf("thread-less key: %+v created=%v err=%v", noThread, created, err)
		}

		got, err := s.GetConversation(ctx, key)
		if err != nil || got != c {
			t.Fatalf("GetConversation = %+v, %v", got, err)
		}
		got, err = s.ConversationByID(ctx, c.ID)
		if err != nil || got != c {
			t.Fatalf("ConversationByID = %+v, %v", got, err)
		}
		_, err = s.GetConversation(ctx, ConversationKey{Bot: "team", Channel: "C2"})
		storetest.WantErrIs(t, "GetConversation unknown", err, sqldb.ErrNotFound)
		_, err = s.ConversationByID(ctx, "nope")
		storetest.WantErrIs(t, "ConversationByID unknown", err, sqldb.ErrNotFound)
	})
}

func TestGetOrCreateConversationInvalid(t *testing.T) {
	kit.Each(t, func(t *testing.T, s *Store) {
		tests := []struct {
			name  string
			key   ConversationKey
			agent string
		}{
			{"no bot", ConversationKey{Channel: "C"}, "coder"},
			{"no channel", ConversationKey{Bot: "b"}, "coder"},
			{"no agent", ConversationKey{Bot: "b", Channel: "C"}, ""},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, _, err := s.GetOrCreateConversation(context.Background(), tt.key, tt.agent, "U")
				storetest.WantErrIs(t, "GetOrCreateConversation", err, sqldb.ErrInvalidArgument)
			})
		}
	})
}

func TestGetOrCreateConversationConcurrent(t *testing.T) {
	kit.Each(t, func(t *testing.T, s *Store) {
		const n = 12
		key := ConversationKey{Bot: "b", Channel: "C", Thread: "T"}
		ids := make([]string, n)
		createdBy := make([]bool, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Go(func() {
				<-start
				var c Conversation
				c, createdBy[i], errs[i] = s.GetOrCreateConversation(context.Background(), key, "coder", "U")
				ids[i] = c.ID
			})
		}
		close(start)
		wg.Wait()
		creators := 0
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("caller %d: %v", i, errs[i])
			}
			if ids[i] != ids[0] {
				t.Fatalf("caller %d got id %s, caller 0 got %s", i, ids[i], ids[0])
			}
			if createdBy[i] {
				creators++
			}
		}
		if creators != 1 {
			t.Fatalf("%d callers saw created=true, want 1", creators)
		}
	})
}

func TestConversationSettings(t *testing.T) {
	ctx := context.Background()
	kit.Each(t, func(t *testing.T, s *Store) {
		start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		storetest.UseClock(s.db, start, time.Minute)
		c := storetest.NewConvAt(t, s, "b", "C", "T")

		setters := []struct {
			name string
			set  func(ctx context.Context, id, v string) error
			get  func(Conversation) string
		}{
			{"session id", s.SetSessionID, func(c Conversation) string { return c.SessionID }},
			{"model", s.SetModel, func(c Conversation) string { return c.Model }},
			{"permission mode", s.SetPermissionMode, func(c Conversation) string { return c.PermissionMode }},
		}
		for _, st := range setters {
			t.Run(st.name, func(t *testing.T) {
				before, err := s.ConversationByID(ctx, c.ID)
				if err != nil {
					t.Fatal(err)
				}
				if err := st.set(ctx, c.ID, "value-"+st.name); err != nil {
					t.Fatalf("set: %v", err)
				}
				after, err := s.ConversationByID(ctx, c.ID)
				if err != nil {
					t.Fatal(err)
				}
				if got := st.get(after); got != "value-"+st.name {
					t.Fatalf("after set: %q", got)
				}
				if !after.UpdatedAt.After(before.UpdatedAt) {
					t.Fatalf("updated_at not advanced: %v → %v", before.UpdatedAt, after.UpdatedAt)
				}
				if err := st.set(ctx, c.ID, ""); err != nil {
					t.Fatalf("clear: %v", err)
				}
				cleared, _ := s.ConversationByID(ctx, c.ID)
				if got := st.get(cleared); got != "" {
					t.Fatalf("after clear: %q", got)
				}
				storetest.WantErrIs(t, "set on unknown conversation", st.set(ctx, "nope", "x"), sqldb.ErrNotFound)
			})
		}

		before, _ := s.ConversationByID(ctx, c.ID)
		if err := s.TouchConversation(ctx, c.ID); err != nil {
			t.Fatalf("TouchConversation: %v", err)
		}
		after, _ := s.ConversationByID(ctx, c.ID)
		if !after.LastActiveAt.After(before.LastActiveAt) || !after.UpdatedAt.Equal(before.UpdatedAt) {
			t.Fatalf("touch: last active %v → %v, updated %v → %v", before.LastActiveAt, after.LastActiveAt, before.UpdatedAt, after.UpdatedAt)
		}
		storetest.WantErrIs(t, "touch unknown", s.TouchConversation(ctx, "nope"), sqldb.ErrNotFound)
	})
}

func TestListConversations(t *testing.T) {
	ctx := context.Background()
	kit.Each(t, func(t *testing.T, s *Store) {
		storetest.UseClock(s.db, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Second)
		if list, err := s.ListConversations(ctx); err != nil || len(list) != 0 {
			t.Fatalf("empty store: %v, %v", list, err)
		}
		a := storetest.NewConvAt(t, s, "b", "C", "A")
		b := storetest.NewConvAt(t, s, "b", "C", "B")
		c := storetest.NewConvAt(t, s, "b", "C", "C")
		if err := s.TouchConversation(ctx, a.ID); err != nil {
			t.Fatal(err)
		}
		list, err := s.ListConversations(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, x := range list {
			got = append(got, x.ID)
		}
		want := []string{a.ID, c.ID, b.ID}
		if len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
			t.Fatalf("order = %v, want %v (most recently active first)", got, want)
		}
	})
}

// TestSwitchAgent: !agent's write stores the profile and the fresh
// session, clears the overrides chosen for the old profile and removes
// its grants (kept for the audit, with who moved it), survives a reread,
// and refuses an unknown conversation or an empty session id.
func TestSwitchAgent(t *testing.T) {
	ctx := context.Background()
	kit.Each(t, func(t *testing.T, s *Store) {
		c := storetest.NewConvAt(t, s, "b", "C", "T")
		if err := s.SetModel(ctx, c.ID, "opus"); err != nil {
			t.Fatal(err)
		}
		if err := s.SetPermissionMode(ctx, c.ID, "plan"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.AddGrants(ctx, c.ID, []Grant{{Tool: "Bash", Match: "ls *", GrantedBy: "U1"}, {Tool: "Read", GrantedBy: "U1"}}); err != nil {
			t.Fatal(err)
		}
		if n, err := s.SwitchAgent(ctx, c.ID, "gemini", "fresh-1", "U2"); err != nil || n != 2 {
			t.Fatalf("SwitchAgent: %d grants removed, %v; want 2", n, err)
		}
		if gs, err := s.ActiveGrants(ctx, c.ID); err != nil || len(gs) != 0 {
			t.Fatalf("active grants after the switch: %+v, %v", gs, err)
		}
		if all, _ := s.GrantsForConversation(ctx, c.ID); len(all) != 2 || all[0].RemovedBy != "U2" {
			t.Fatalf("grant audit after the switch: %+v", all)
		}
		got, err := s.ConversationByID(ctx, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.AgentOverride != "gemini" || got.SessionID != "fresh-1" || got.Model != "" || got.PermissionMode != "" || got.Agent != c.Agent {
			t.Fatalf("after switch: override %q session %q model %q mode %q agent %q", got.AgentOverride, got.SessionID, got.Model, got.PermissionMode, got.Agent)
		}
		if byKey, _ := s.GetConversation(ctx, c.Key); byKey.AgentOverride != "gemini" {
			t.Fatalf("GetConversation: override %q", byKey.AgentOverride)
		}
		if n, err := s.SwitchAgent(ctx, c.ID, "", "fresh-2", "U2"); err != nil || n != 0 {
			t.Fatalf("switch back: %v", err)
		}
		if back, _ := s.ConversationByID(ctx, c.ID); back.AgentOverride != "" || back.SessionID != "fresh-2" {
			t.Fatalf("after switching back: override %q session %q", back.AgentOverride, back.SessionID)
		}
		storetest.WantErrIs(t, "unknown conversation", err2(s.SwitchAgent(ctx, "nope", "x", "s", "U2")), sqldb.ErrNotFound)
		storetest.WantErrIs(t, "no session id", err2(s.SwitchAgent(ctx, c.ID, "x", "", "U2")), sqldb.ErrInvalidArgument)
	})
}

func err2(_ int, err error) error { return err }
