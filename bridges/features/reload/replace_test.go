package reload_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges/features/reload"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/profile"
)

// fakeConv is a conversation as reloads see it, with its agent's state
// set by the test.
type fakeConv struct {
	now              time.Time
	spawned, inTurn  bool
	agentBusy        bool
	notices          []string
	restarts, stops  int
	rechecks         []time.Duration
	refreshedProfile *profile.Agent
	repl             reload.Replacement
}

func (f *fakeConv) Log() *slog.Logger                  { return slog.New(slog.DiscardHandler) }
func (f *fakeConv) Now() time.Time                     { return f.now }
func (f *fakeConv) Profile() *profile.Agent            { return &profile.Agent{Name: "coder"} }
func (f *fakeConv) Refresh(cfg *config.Config)         { f.refreshedProfile = cfg.Agents["coder"] }
func (f *fakeConv) Spawned() bool                      { return f.spawned }
func (f *fakeConv) Live() bool                         { return f.spawned }
func (f *fakeConv) InTurn() bool                       { return f.inTurn }
func (f *fakeConv) AgentBusy() bool                    { return f.agentBusy }
func (f *fakeConv) Notice(_ context.Context, t string) { f.notices = append(f.notices, t) }
func (f *fakeConv) Restart(context.Context)            { f.restarts++ }
func (f *fakeConv) Stop(context.Context, string)       { f.stops++ }
func (f *fakeConv) Recheck(d time.Duration)            { f.rechecks = append(f.rechecks, d) }
func (f *fakeConv) Replacement() *reload.Replacement   { return &f.repl }

var cfg = &config.Config{Agents: map[string]*profile.Agent{"coder": {Name: "coder", Model: "haiku"}}}

// TestReplacementWaitsForTurnAndTask: a due replacement never happens in
// a turn; a background task delays it (told once) and, once it ended, the
// agent gets TaskSettle to answer it before the process is replaced.
func TestReplacementWaitsForTurnAndTask(t *testing.T) {
	ctx := context.Background()
	f := &fakeConv{now: time.Unix(1000, 0), spawned: true, inTurn: true}
	f.repl.Note(streamjson.TaskStarted{TaskID: "t1", Background: true}, f.now)
	reload.OnReload(ctx, f, cfg, true, false)
	if f.refreshedProfile != cfg.Agents["coder"] || !f.repl.Due() || f.restarts != 0 {
		t.Fatalf("after reload in a turn: refreshed %v due %v restarts %d", f.refreshedProfile, f.repl.Due(), f.restarts)
	}
	f.inTurn = false
	f.repl.Check(ctx, f)
	f.repl.Check(ctx, f)
	if f.restarts != 0 || len(f.notices) != 1 || !strings.Contains(f.notices[0], "background task has finished") {
		t.Fatalf("with a background task: restarts %d notices %q", f.restarts, f.notices)
	}
	if f.repl.Holds(true) {
		t.Fatal("messages held while the old process still answers during the task")
	}
	f.repl.Note(streamjson.TaskNotification{TaskID: "t1"}, f.now)
	f.repl.Check(ctx, f)
	if f.restarts != 0 || len(f.rechecks) != 1 || f.rechecks[0] != reload.TaskSettle {
		t.Fatalf("right after the task: restarts %d rechecks %v", f.restarts, f.rechecks)
	}
	if !f.repl.Holds(true) {
		t.Fatal("messages not held for the replacement once only the settle time stands before it")
	}
	f.now = f.now.Add(reload.TaskSettle)
	f.repl.Check(ctx, f)
	if f.restarts != 1 || f.repl.Due() {
		t.Fatalf("after the settle time: restarts %d due %v", f.restarts, f.repl.Due())
	}
}

// TestReplacementForce: a forced reload ends a background task (telling
// the thread) at the next moment without a turn.
func TestReplacementForce(t *testing.T) {
	f := &fakeConv{now: time.Unix(1000, 0), spawned: true}
	f.repl.Note(streamjson.TaskStarted{TaskID: "t1", Background: true}, f.now)
	reload.OnReload(context.Background(), f, cfg, true, true)
	if f.restarts != 1 || len(f.notices) != 1 || !strings.Contains(f.notices[0], "ended its background task") {
		t.Fatalf("restarts %d notices %q", f.restarts, f.notices)
	}
}

// TestReplacementNotDue: a reload that changes no spawn setting, or a
// conversation without an agent, replaces nothing.
func TestReplacementNotDue(t *testing.T) {
	ctx := context.Background()
	f := &fakeConv{now: time.Unix(1000, 0), spawned: true}
	reload.OnReload(ctx, f, cfg, false, false)
	g := &fakeConv{now: time.Unix(1000, 0)}
	reload.OnReload(ctx, g, cfg, true, true)
	if f.restarts+g.restarts != 0 || f.repl.Due() || g.repl.Due() {
		t.Fatalf("restarts %d/%d", f.restarts, g.restarts)
	}
	f.agentBusy = true // a turn the agent started itself
	reload.OnReload(ctx, f, cfg, true, false)
	if f.restarts != 0 || !f.repl.Due() {
		t.Fatalf("replaced while the agent runs its own turn")
	}
	f.agentBusy = false
	f.repl.Check(ctx, f)
	if f.restarts != 1 {
		t.Fatal("not replaced once idle")
	}
	if got := reload.StatusLine(config.Generation{Number: 3, At: time.Unix(0, 0)}, true); !strings.Contains(got, "generation 3") ||
		!strings.Contains(got, "restarts with it when idle") {
		t.Fatalf("status line %q", got)
	}
}
