package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/agenttest"
	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// TestSessionMalformedOutputAndCrash drives a session with a scripted fake
// CLI: undecodable and oversize lines become DecodeErrors and the stream
// goes on; hook callbacks and unsupported control requests are answered
// automatically; an exit the host did not ask for is an unexpected Exit
// with the stderr tail, credentials redacted.
func TestSessionMalformedOutputAndCrash(t *testing.T) {
	out := filepath.Join(t.TempDir(), "stdin.jsonl")
	cli := testkit.FakeCLI(t, `
echo 'not json at all'
head -c 5000 /dev/zero | tr '\0' 'x'; echo
echo '{"type":"control_request","request_id":"hk-1","request":{"subtype":"hook_callback","callback_id":"h1","input":{"tool_name":"Bash"}}}'
echo '{"type":"control_request","request_id":"el-1","request":{"subtype":"request_user_dialog"}}'
echo '{"type":"control_request","request_id":"perm-1","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"ls"}}}'
head -n 3 > "$OUT"
echo 'API key sk-ant-abcdefghijklmnop1234 failed' >&2
echo 'SLACK_BOT_TOKEN=xoxb-123456789-abcdef and Authorization: Bearer abcdefghijk123' >&2
exit 3
`)
	s, err := Start(context.Background(), Options{
		Command: cli, Workdir: t.TempDir(), Home: t.TempDir(), MaxLineBytes: 1000,
		Env: map[string]string{"OUT": out},
	}, testkit.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	rec := agenttest.Record(t, s)
	t.Cleanup(func() { _ = s.Close(context.Background()); rec.WaitClosed(t) })

	p := agenttest.NextPermission(t, rec)
	if p.RequestID != "perm-1" || !s.Busy() {
		t.Fatalf("permission %+v busy %v", p, s.Busy())
	}
	agenttest.Respond(t, s, "perm-1", streamjson.Decision{Allow: true})
	ex := agenttest.NextExit(t, rec)
	if ex.Expected || ex.Code != 3 || ex.Reason != "crashed" || ex.Err == nil {
		t.Errorf("exit %+v", ex)
	}
	for _, secret := range []string{"sk-ant-abcdefghijklmnop1234", "xoxb-123456789-abcdef", "abcdefghijk123"} {
		if strings.Contains(ex.StderrTail, secret) {
			t.Errorf("stderr tail leaks %q: %q", secret, ex.StderrTail)
		}
	}
	if !strings.Contains(ex.StderrTail, "API key") || !strings.Contains(ex.StderrTail, "[redacted]") {
		t.Errorf("stderr tail %q", ex.StderrTail)
	}
	rec.WaitClosed(t)

	var decodeErrs, hooks, unknowns int
	for _, ev := range rec.All() {
		switch e := ev.(type) {
		case streamjson.DecodeError:
			decodeErrs++
		case streamjson.HookCallback:
			hooks++
		case streamjson.Unknown:
			if e.Type == "control_request" && e.Subtype == "request_user_dialog" {
				unknowns++
			}
		}
	}
	if decodeErrs != 2 || hooks != 1 || unknowns != 1 {
		t.Errorf("decode errors %d (want 2), hook callbacks %d (want 1), unknown control requests %d (want 1)", decodeErrs, hooks, unknowns)
	}

	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSpace(string(data)), "\n")
	sort.Strings(got)
	want := []string{
		`{"type":"control_response","response":{"subtype":"error","request_id":"el-1","error":"unsupported control request subtype request_user_dialog"}}`,
		`{"type":"control_response","response":{"subtype":"success","request_id":"hk-1","response":{}}}`,
		`{"type":"control_response","response":{"subtype":"success","request_id":"perm-1","response":{"behavior":"allow","updatedInput":{"command":"ls"}}}}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("stdin got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestSessionExitWithoutAsking: a CLI that exits 0 by itself is an
// unexpected exit with reason "exited"; pending state is cleared.
func TestSessionExitWithoutAsking(t *testing.T) {
	cli := testkit.FakeCLI(t, `echo '{"type":"control_request","request_id":"p","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{}}}'; read line; exit 0`)
	s, err := Start(context.Background(), Options{Command: cli, Workdir: t.TempDir()}, testkit.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	rec := agenttest.Record(t, s)
	agenttest.NextPermission(t, rec)
	agenttest.Send(t, s, "bye")
	ex := agenttest.NextExit(t, rec)
	if ex.Expected || ex.Reason != "exited" || ex.Code != 0 {
		t.Errorf("exit %+v", ex)
	}
	rec.WaitClosed(t)
	if s.Busy() || s.Alive() || len(s.PendingPermissions()) != 0 {
		t.Errorf("after exit: busy %v alive %v pending %v", s.Busy(), s.Alive(), s.PendingPermissions())
	}
	if err := s.Respond(context.Background(), "p", streamjson.Decision{Allow: true}); err == nil {
		t.Error("Respond after exit succeeded")
	}
	if err := s.Interrupt(context.Background()); err == nil {
		t.Error("Interrupt after exit succeeded")
	}
	if err := s.Close(context.Background()); err != nil {
		t.Errorf("Close after exit: %v", err)
	}
}

// TestSessionControlTimeout: a CLI that never answers makes control
// requests fail with ErrControlTimeout.
func TestSessionControlTimeout(t *testing.T) {
	cli := testkit.FakeCLI(t, `cat > /dev/null`)
	s, err := Start(context.Background(), Options{Command: cli, Workdir: t.TempDir(), ControlTimeout: 200 * time.Millisecond}, testkit.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	rec := agenttest.Record(t, s)
	defer func() { _ = s.Close(context.Background()); rec.WaitClosed(t) }()
	if err := s.SetModel(context.Background(), "x"); !errors.Is(err, ErrControlTimeout) {
		t.Errorf("SetModel: %v, want ErrControlTimeout", err)
	}
}

func TestStartRejectsBadOptions(t *testing.T) {
	tests := []struct {
		name string
		opts Options
	}{
		{"no workdir", Options{}},
		{"resume without id", Options{Workdir: t.TempDir(), Resume: true}},
		{"session id not a uuid", Options{Workdir: t.TempDir(), SessionID: "conv-1"}},
		{"negative max turns", Options{Workdir: t.TempDir(), MaxTurns: -1}},
		{"missing command", Options{Workdir: t.TempDir(), Command: filepath.Join(t.TempDir(), "nope")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if s, err := Start(context.Background(), tt.opts, nil); err == nil {
				_ = s.Close(context.Background())
				t.Error("Start succeeded")
			}
		})
	}
}

// TestFreshSessionNotEvictedBeforeFirstSend: a session spawned for a message
// that is not written yet is protected from eviction (it could not even be
// resumed), but an idle stop or a session that has been used may proceed.
func TestFreshSessionNotEvictedBeforeFirstSend(t *testing.T) {
	cli := testkit.FakeCLI(t, "cat > /dev/null\n")
	start := func() *Session {
		s, err := Start(context.Background(), Options{Command: cli, Workdir: t.TempDir(), Home: t.TempDir()}, testkit.Logger(t))
		if err != nil {
			t.Fatal(err)
		}
		rec := agenttest.Record(t, s)
		t.Cleanup(func() { _ = s.Close(context.Background()); rec.WaitClosed(t) })
		return s
	}
	s := start()
	if s.TryBeginStop("evicted") {
		t.Fatal("a fresh session that was never sent a message was evictable")
	}
	if !s.TryBeginStop("idle") {
		t.Fatal("an idle stop of a fresh session was refused")
	}

	used := start()
	used.mu.Lock()
	used.st.everSent = true // as after a completed first message
	used.mu.Unlock()
	if !used.TryBeginStop("evicted") {
		t.Fatal("a used idle session was not evictable")
	}
}

// TestWriteToClosedStdinIsErrClosed: a CLI that closed its stdin (it is
// exiting) makes a write fail as ErrClosed, so that callers wait for the
// exit that says why (a warm spare's failure is then counted with the
// CLI's stderr, not as a broken pipe).
func TestWriteToClosedStdinIsErrClosed(t *testing.T) {
	closed := filepath.Join(t.TempDir(), "stdin-closed")
	cli := testkit.FakeCLI(t, `
exec 0<&-
echo 'error: unknown option' >&2
touch "$CLOSED"
sleep 5
exit 1
`)
	s, err := Start(context.Background(), Options{Command: cli, Workdir: t.TempDir(), Home: t.TempDir(),
		Env: map[string]string{"CLOSED": closed}}, testkit.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	testkit.WaitUntil(t, "the CLI closed its stdin", 10*time.Second, func() bool { _, err := os.Stat(closed); return err == nil })
	start := time.Now()
	err = s.Initialize(context.Background())
	if !errors.Is(err, ErrClosed) || !errors.Is(err, syscall.EPIPE) {
		t.Fatalf("Initialize = %v, want ErrClosed from the broken pipe", err)
	}
	if waited := time.Since(start); waited > 4*time.Second {
		t.Errorf("Initialize took %s: it waited for the exit, not the failed write", waited)
	}
}
