package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/fakemodel"
	"github.com/agentbridge/agentbridge/store"
)

// TestSlackE2EPostgresStore: a bridge whose store is PostgreSQL (the real
// CLI, the fake model and Slack) keeps everything there — no bridge.db in
// data_dir — and the ledger in PostgreSQL carries a crash mid-turn: after
// SIGKILL and a restart the interrupted message reaches the agent again,
// the message sent while it was down is answered, and the conversation
// goes on with its history.
func TestSlackE2EPostgresStore(t *testing.T) {
	t.Parallel()
	srv := sharedPG.Need(t)
	db := srv.NewDatabaseName(t, "")
	e := startSlackBridgeWith(t, profileOptions{top: fmt.Sprintf("store: { driver: postgres, dsn: %q }\n", srv.URL(db))})
	ts := e.slack.Mention(slackChan, alice, "hello there", "")
	e.waitThreadText(t, ts, "pong: hello there")
	if _, err := os.Stat(filepath.Join(e.ab.dir, "data", "bridge.db")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("data_dir has a bridge.db with store.driver postgres: %v", err)
	}

	e.slack.SendMessage(slackChan, alice, "[slow 40] [slowms 100] survive the crash", ts)
	if _, err := e.model.WaitForRequest(ctxTimeout(t, e2eWait), func(r fakemodel.Request) bool {
		return strings.Contains(fakemodel.LastUserText(r), "survive the crash")
	}); err != nil {
		t.Fatal(err)
	}
	e.bridge.kill9()
	e.slack.SendMessage(slackChan, alice, "sent while down", ts)
	restarted := time.Now()
	e.ab.restart(t)
	e.bridge = e.ab.bridge
	e.waitThreadText(t, ts, "sent while down")
	// The interrupted message comes back with the redelivery note; on a busy
	// machine the message sent while down may reach the CLI in the same
	// request, after it, so any user text of a request counts.
	if _, err := e.model.WaitForRequest(ctxTimeout(t, e2eWait), func(r fakemodel.Request) bool {
		return r.Time.After(restarted) && slices.ContainsFunc(fakemodel.UserTexts(r), func(text string) bool {
			return strings.Contains(text, "your previous turn was interrupted") && strings.Contains(text, "survive the crash")
		})
	}); err != nil {
		t.Errorf("the interrupted message was not re-delivered after the restart: %v", err)
	}
	e.slack.SendMessage(slackChan, alice, "[echo-history] what did I say?", ts)
	e.waitThreadText(t, ts, "history: hello there")

	// What the bridge recorded is in PostgreSQL.
	ctx := context.Background()
	st, err := store.OpenPostgres(ctx, srv.DSN(db), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	convs, err := st.ListConversations(ctx)
	if err != nil || len(convs) != 1 || convs[0].SessionID == "" || convs[0].Key.Bot != "team" {
		t.Fatalf("conversations in PostgreSQL = %+v, %v", convs, err)
	}
	if title, err := st.ConversationTitle(ctx, convs[0].ID); err != nil || !strings.Contains(title, "hello there") {
		t.Errorf("title = %q, %v", title, err)
	}
	if u, err := st.UsageTotals(ctx, convs[0].ID); err != nil || u.Count < 3 {
		t.Errorf("usage in PostgreSQL = %+v, %v; want a row per turn", u, err)
	}
}

// TestPostgresStoreOneBridge: a second bridge with its own data_dir (as on
// another machine) but the same PostgreSQL database exits 1 at once,
// naming the first; the first keeps answering.
func TestPostgresStoreOneBridge(t *testing.T) {
	t.Parallel()
	srv := sharedPG.Need(t)
	e := startSlackBridgeWith(t, profileOptions{top: fmt.Sprintf("store: { driver: postgres, dsn: %q }\n", srv.URL(srv.NewDatabaseName(t, "")))})
	ts := e.slack.Mention(slackChan, alice, "hello", "")
	e.waitThreadText(t, ts, "pong: hello")

	other := t.TempDir()
	cfg, err := os.ReadFile(filepath.Join(e.ab.dir, "bridge.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// data_dir ./data is another directory there; a port of its own, so
	// that only the database is shared.
	cfg = []byte(strings.ReplaceAll(string(cfg), e.bridge.addr, freeAddr(t)))
	if err := os.WriteFile(filepath.Join(other, "bridge.yaml"), cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	out, code := runSecondBridge(t, other, "run")
	want := fmt.Sprintf("database in use by another bridge (held by agentbridge on %s pid %d", hostname(t), e.bridge.cmd.Process.Pid)
	if code != exitRuntime || !strings.Contains(out, want) || !strings.Contains(out, "stop that bridge first") {
		t.Errorf("second bridge on the database exited %d, want %d with %q and what to do; output:\n%s", code, exitRuntime, want, out)
	}
	e.slack.SendMessage(slackChan, alice, "still here?", ts)
	e.waitThreadText(t, ts, "pong: still here?")
}

func hostname(t *testing.T) string {
	t.Helper()
	h, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	return h
}
