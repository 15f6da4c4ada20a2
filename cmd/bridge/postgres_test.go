package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/internal/dirlock"
	"github.com/agentbridge/agentbridge/store"
	"github.com/agentbridge/agentbridge/store/pgtest"
)

// sharedPG is the test process's PostgreSQL server, started by the first
// test that needs one and stopped by TestMain.
var sharedPG pgtest.Shared

// runBridgeCmd runs the bridge binary with args in dir and returns its
// combined output and exit code.
func runBridgeCmd(t *testing.T, dir string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(bridgeBin, args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}
	timer := time.AfterFunc(60*time.Second, func() { _ = cmd.Process.Kill() })
	defer timer.Stop()
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(out), ee.ExitCode()
	}
	if err != nil {
		t.Fatalf("run bridge %v: %v", args, err)
	}
	return string(out), 0
}

// installation is what fillInstallation wrote, for reading back.
type installation struct {
	conv      store.Conversation
	msg       store.InboxMessage
	reply     store.OutboxMessage
	schedules []store.Schedule
}

// fillInstallation writes a bridge's worth of rows into the SQLite file at
// path through the store: a conversation with a finished message, a posted
// reply and usage, a decided approval, a grant, a schedule, a rating, a web
// conversation with a message, a share and a tool call.
func fillInstallation(t *testing.T, path string) installation {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var in installation
	steps := []func() error{
		func() (err error) {
			in.conv, _, err = st.GetOrCreateConversation(ctx, store.ConversationKey{Bot: "team", Channel: "C1", Thread: "1.5"}, "coder", "U1")
			return err
		},
		func() error { return st.SetSessionID(ctx, in.conv.ID, "5e55-1") },
		func() (err error) {
			in.msg, _, err = st.Enqueue(ctx, store.InboxMessage{ConversationID: in.conv.ID, PlatformMsgID: "1.6", UserID: "U1", Text: "hello"})
			return err
		},
		func() error { return st.MarkInbox(ctx, in.msg.ID, store.InboxCompleted, "") },
		func() error {
			rs, err := st.EndTurn(ctx, store.Usage{ConversationID: in.conv.ID, SessionID: "5e55-1", UserID: "U1", CostUSD: 0.5},
				[]store.OutboxMessage{{ConversationID: in.conv.ID, Text: "pong: hello"}})
			if err == nil {
				in.reply = rs[0]
				err = st.MarkOutboxPosted(ctx, rs[0].ID)
			}
			return err
		},
		func() error {
			_, err := st.RecordApprovalRequest(ctx, store.Approval{ID: "req-1", ConversationID: in.conv.ID, ToolName: "Bash", Input: []byte(`{}`)})
			if err == nil {
				_, err = st.RecordApprovalDecision(ctx, "req-1", store.DecisionAlways, "U1", "")
			}
			return err
		},
		func() error {
			_, err := st.AddGrants(ctx, in.conv.ID, []store.Grant{{Tool: "Bash", Match: "make test", GrantedBy: "U1", ApprovalID: "req-1"}})
			return err
		},
		func() error {
			_, err := st.AddSchedule(ctx, store.Schedule{Source: store.ScheduleFromChat, Name: "standup", Key: in.conv.Key, Cron: "0 9 * * 1-5", Prompt: "summarise"})
			return err
		},
		func() error {
			_, err := st.AddWebMessage(ctx, store.WebMessage{ID: "w1", Key: store.ConversationKey{Bot: "console", Channel: "ana", Thread: "t"}, Author: "ana", Text: "hi, see docs/postgres.md"})
			return err
		},
		func() error { return st.ShareWebThread(ctx, "console", "t", "bob", store.WebViewer) },
		func() error {
			return st.RecordWebTool(ctx, store.WebTool{Key: store.ConversationKey{Bot: "console", Channel: "ana", Thread: "t"}, ID: "tool-1", Name: "Bash", Input: `{"command":"ls"}`})
		},
		func() error {
			_, err := st.RecordFeedback(ctx, store.Feedback{ReplyID: in.reply.ID, ConversationID: in.conv.ID, UserID: "U1", Rating: store.RatingGood})
			return err
		},
		func() (err error) { in.schedules, err = st.ActiveSchedules(ctx); return err },
		func() (err error) { in.conv, err = st.ConversationByID(ctx, in.conv.ID); return err },
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("fill step %d: %v", i, err)
		}
	}
	return in
}

// TestMigrateStore: `bridge migrate-store` copies a SQLite installation
// into an empty PostgreSQL database — every table, counts reported, the
// password never shown — and the copy reads back through the store;
// a second run, a non-empty target or a running bridge change nothing.
func TestMigrateStore(t *testing.T) {
	t.Parallel()
	srv := sharedPG.Need(t)
	ctx := context.Background()
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "data")
	path := filepath.Join(dataDir, "bridge.db")
	want := fillInstallation(t, path)

	db := srv.NewDatabaseName(t, "")
	to := strings.Replace(srv.URL(db), "postgres://bridge@", "postgres://bridge:pw-s3cret@", 1)
	out, code := runBridgeCmd(t, dir, "migrate-store", "-from", "sqlite://data/bridge.db", "-to", to)
	if code != exitOK {
		t.Fatalf("migrate-store exited %d:\n%s", code, out)
	}
	counts := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) == 2 && strings.HasPrefix(line, "  ") {
			counts[f[0]] = f[1]
		}
	}
	for table, n := range map[string]string{"conversations": "1", "inbox": "1", "outbox": "1", "approvals": "1", "usage": "1",
		"grants": "1", "schedules": "1", "feedback": "1", "web_messages": "1", "web_threads": "1", "web_shares": "1",
		"web_tools": "1", "web_sessions": "0", "leases": "0", "session_states": "0", "replica_configs": "0", "handoff_audit": "0", "web_session_key": "0"} {
		if counts[table] != n {
			t.Errorf("table %s: copied %q rows, want %s:\n%s", table, counts[table], n, out)
		}
	}
	if !strings.Contains(out, "12 rows in 21 tables") {
		t.Errorf("output lacks %q:\n%s", "12 rows in 21 tables", out)
	}
	if strings.Contains(out, "pw-s3cret") {
		t.Errorf("output shows the password:\n%s", out)
	}

	pg, err := store.OpenPostgres(ctx, srv.DSN(db), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	conv, err := pg.GetConversation(ctx, want.conv.Key)
	if err != nil || conv != want.conv {
		t.Errorf("conversation = %+v, %v; want %+v", conv, err, want.conv)
	}
	if m, err := pg.InboxByID(ctx, want.msg.ID); err != nil || m.Text != "hello" || m.State != store.InboxCompleted || !m.CreatedAt.Equal(want.msg.CreatedAt) {
		t.Errorf("message = %+v, %v", m, err)
	}
	if r, err := pg.OutboxByID(ctx, want.reply.ID); err != nil || r.State != store.OutboxPosted || r.Text != "pong: hello" {
		t.Errorf("reply = %+v, %v", r, err)
	}
	if gs, err := pg.ActiveGrants(ctx, conv.ID); err != nil || len(gs) != 1 || gs[0].Match != "make test" || gs[0].Num != 1 {
		t.Errorf("grants = %+v, %v", gs, err)
	}
	if a, err := pg.GetApproval(ctx, "req-1"); err != nil || a.Decision != store.DecisionAlways || a.Open() {
		t.Errorf("approval = %+v, %v", a, err)
	}
	if u, err := pg.UsageTotals(ctx, conv.ID); err != nil || u.CostUSD != 0.5 || u.Count != 1 {
		t.Errorf("usage = %+v, %v", u, err)
	}
	if sc, err := pg.ActiveSchedules(ctx); err != nil || len(sc) != 1 || sc[0] != want.schedules[0] {
		t.Errorf("schedules = %+v, %v; want %+v", sc, err, want.schedules)
	}
	// The web conversation: shared, searchable through PostgreSQL's index.
	if ts, err := pg.WebThreads(ctx, "console", "bob", store.WebThreadQuery{Search: "postgres", Limit: 5}); err != nil ||
		len(ts) != 1 || ts[0].Thread != "t" || ts[0].Role != store.WebViewer {
		t.Errorf("bob's search = %+v, %v", ts, err)
	}

	// Again: the target is not empty; nothing changes.
	out, code = runBridgeCmd(t, dir, "migrate-store", "-from", "sqlite://data/bridge.db", "-to", to)
	if code != exitRuntime || !strings.Contains(out, "already holds data") || !strings.Contains(out, "nothing was copied") {
		t.Errorf("second migrate-store exited %d:\n%s", code, out)
	}
	if n, err := pg.ListConversations(ctx); err != nil || len(n) != 1 {
		t.Errorf("conversations after the refused run = %d, %v", len(n), err)
	}

	// A bridge running on the source's data_dir: refused at once.
	lock, err := dirlock.Acquire(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	out, code = runBridgeCmd(t, dir, "migrate-store", "-from", "sqlite://data/bridge.db", "-to", srv.URL(srv.NewDatabaseName(t, "")))
	if err := lock.Release(); err != nil {
		t.Fatal(err)
	}
	if code != exitRuntime || !strings.Contains(out, "in use by another bridge") {
		t.Errorf("migrate-store beside a running bridge exited %d:\n%s", code, out)
	}
}

// TestMigrateStoreUsage: bad or missing locations are usage errors (exit
// 2); a SQLite source that does not exist is not created.
func TestMigrateStoreUsage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, args := range [][]string{
		{},
		{"-from", "sqlite://a.db"},
		{"-from", "mysql://x", "-to", "postgres://u@h/db"},
		{"-from", "sqlite://", "-to", "postgres://u@h/db"},
		{"-from", "sqlite://a.db", "-to", "sqlite://a.db"},
		{"-from", "sqlite://a.db", "-to", "postgres://u@h/db", "extra"},
	} {
		out, code := runBridgeCmd(t, dir, append([]string{"migrate-store"}, args...)...)
		if code != exitUsage || !strings.Contains(out, "bridge migrate-store:") {
			t.Errorf("migrate-store %v exited %d, want %d:\n%s", args, code, exitUsage, out)
		}
	}
	out, code := runBridgeCmd(t, dir, "migrate-store", "-from", "sqlite://data/none.db", "-to", "postgres://u@h/db")
	if code != exitRuntime || !strings.Contains(out, "no database at data/none.db") {
		t.Errorf("missing source: exit %d:\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "data", "none.db")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing source was created: %v", err)
	}
}
