package pool

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentbridge/agentbridge/agent"
	"github.com/agentbridge/agentbridge/agent/agenttest"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// spareCLIScript stands in for the claude CLI in the spare tests: it logs
// each start ("<unix nanos> <pid> <session id>") to $SPAWNLOG, answers
// initialize (once the file $GATE exists, if set), logs each prewarm
// (get_context_usage) to $SPAWNLOG.prewarm, each apply_flag_settings to $SPAWNLOG.env (answered
// with the error $ENVFAIL if set) and each rewind to $SPAWNLOG.rewind, and answers every user
// message with a started receipt, a result and a completed receipt, never calling a model.
// $STDERR and $EXIT make it fail at once.
const spareCLIScript = `
sid=""
prev=""
for a in "$@"; do
	if [ "$prev" = "--session-id" ] || [ "$prev" = "--resume" ]; then sid="$a"; fi
	prev="$a"
done
echo "$(date +%s%N) $$ $sid" >> "$SPAWNLOG"
if [ -n "$EXIT" ]; then echo "$STDERR" >&2; exit "$EXIT"; fi
while IFS= read -r line; do
	case "$line" in
	*'"subtype":"initialize"'*)
		[ -n "$NOINIT" ] && continue
		while [ -n "$GATE" ] && [ ! -e "$GATE" ]; do sleep 0.01; done
		id=$(printf '%s' "$line" | sed 's/.*"request_id":"\([^"]*\)".*/\1/')
		printf '{"type":"control_response","response":{"subtype":"success","request_id":"%s","response":{}}}\n' "$id";;
	*'"subtype":"apply_flag_settings"'*)
		echo "$sid $line" >> "$SPAWNLOG.env"
		id=$(printf '%s' "$line" | sed 's/.*"request_id":"\([^"]*\)".*/\1/')
		if [ -n "$ENVFAIL" ]; then
			printf '{"type":"control_response","response":{"subtype":"error","request_id":"%s","error":"%s"}}\n' "$id" "$ENVFAIL"
		else
			printf '{"type":"control_response","response":{"subtype":"success","request_id":"%s"}}\n' "$id"
		fi;;
	*'"subtype":"rewind_conversation"'*)
		echo "$sid" >> "$SPAWNLOG.rewind"
		id=$(printf '%s' "$line" | sed 's/.*"request_id":"\([^"]*\)".*/\1/')
		printf '{"type":"control_response","response":{"subtype":"success","request_id":"%s","response":{"rewound":true}}}\n' "$id";;
	*'"subtype":"get_context_usage"'*)
		echo "$sid" >> "$SPAWNLOG.prewarm"
		id=$(printf '%s' "$line" | sed 's/.*"request_id":"\([^"]*\)".*/\1/')
		printf '{"type":"control_response","response":{"subtype":"success","request_id":"%s","response":{"categories":[]}}}\n' "$id";;
	*'"type":"user"'*)
		u=$(printf '%s' "$line" | sed 's/.*"uuid":"\([^"]*\)".*/\1/')
		printf '{"type":"command_lifecycle","command_uuid":"%s","state":"started"}\n' "$u"
		printf '{"type":"system","subtype":"init","session_id":"%s"}\n' "$sid"
		printf '{"type":"result","subtype":"success","is_error":false,"result":"pong","session_id":"%s"}\n' "$sid"
		printf '{"type":"command_lifecycle","command_uuid":"%s","state":"completed"}\n' "$u";;
	esac
done
`

// spareRig is a pool with the scripted CLI and a spare config for it.
type spareRig struct {
	pool    *Pool
	cfg     SpareConfig
	spawns  string // the script's start log
	records *testkit.LogRecorder
}

func newSpareRig(t *testing.T, count, maxLive int, env map[string]string) *spareRig {
	t.Helper()
	spawns := filepath.Join(t.TempDir(), "spawns.log")
	if env == nil {
		env = map[string]string{}
	}
	env["SPAWNLOG"] = spawns
	rh := &testkit.LogRecorder{}
	logger := slog.New(teeHandler{testkit.Logger(t).Handler(), rh})
	r := &spareRig{
		pool:    New(logger),
		spawns:  spawns,
		records: rh,
		cfg: SpareConfig{
			Limit:      Limit{Profile: "coder", MaxLive: maxLive},
			Count:      count,
			Options:    agent.Options{Command: testkit.FakeCLI(t, spareCLIScript), Workdir: t.TempDir(), Home: t.TempDir(), Env: env, CloseGrace: 5 * time.Second},
			StateRoot:  filepath.Join(t.TempDir(), "sessions"),
			MinBackoff: 50 * time.Millisecond,
			MaxBackoff: 400 * time.Millisecond,
		},
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := r.pool.Close(ctx); err != nil {
			t.Errorf("pool Close: %v", err)
		}
	})
	return r
}

// waitStatus waits until the profile's spare status satisfies cond.
func (r *spareRig) waitStatus(t *testing.T, what string, cond func(SpareStatus) bool) SpareStatus {
	t.Helper()
	var st SpareStatus
	testkit.WaitUntil(t, what, agenttest.EventTimeout, func() bool {
		st = r.pool.SpareStatus(r.cfg.Limit.Profile)
		return cond(st)
	})
	return st
}

// waitKeeper waits until the spare keeper has looked at the pool at least
// once more after everything done so far (its next decision is taken with
// every change in view).
func (r *spareRig) waitKeeper(t *testing.T) {
	t.Helper()
	decided := func() uint64 {
		r.pool.mu.Lock()
		defer r.pool.mu.Unlock()
		return r.pool.spares[r.cfg.Limit.Profile].decided
	}
	r.pool.notify()
	d0 := decided()
	r.pool.notify()
	testkit.WaitUntil(t, "the spare keeper's next decision", agenttest.EventTimeout, func() bool { return decided() > d0 })
}

// spawnLine is one start of the scripted CLI.
type spawnLine struct {
	at  time.Time
	pid int
	sid string
}

func (r *spareRig) spawnLog(t *testing.T) []spawnLine {
	t.Helper()
	b, err := os.ReadFile(r.spawns)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []spawnLine
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		ns, _ := strconv.ParseInt(f[0], 10, 64)
		pid, _ := strconv.Atoi(f[1])
		sl := spawnLine{at: time.Unix(0, ns), pid: pid}
		if len(f) > 2 {
			sl.sid = f[2]
		}
		out = append(out, sl)
	}
	return out
}

// spawnsAtLeast waits until the scripted CLIs have logged at least n
// starts and returns the log. A start the pool reports (Starting) is
// logged by the child process itself, a moment later on a busy machine:
// a test reads the log only through this wait.
func (r *spareRig) spawnsAtLeast(t *testing.T, n int) []spawnLine {
	t.Helper()
	var got []spawnLine
	testkit.WaitUntil(t, fmt.Sprintf("%d CLI starts in the spawn log", n), agenttest.EventTimeout, func() bool {
		got = r.spawnLog(t)
		return len(got) >= n
	})
	return got
}

// takeSpare keeps spares as r.cfg says, waits for one ready spare and
// takes it for conversation conv-1; the session's events are recorded
// until the test ends.
func (r *spareRig) takeSpare(t *testing.T) (*agent.Session, *agenttest.Recorder) {
	t.Helper()
	r.pool.KeepSpares(r.cfg)
	r.waitStatus(t, "a ready spare", ready(1))
	ctx, cancel := context.WithTimeout(context.Background(), agenttest.EventTimeout)
	defer cancel()
	s, err := r.pool.AcquireNew(ctx, "conv-1", r.cfg.Limit, r.newOpts())
	if err != nil {
		t.Fatal(err)
	}
	return s, agenttest.Record(t, s)
}

// newOpts are the options a new conversation of the profile asks for.
func (r *spareRig) newOpts() agent.Options {
	o := r.cfg.Options
	o.SessionID = uuid.NewString()
	o.Env = map[string]string{}
	for k, v := range r.cfg.Options.Env {
		o.Env[k] = v
	}
	return o
}

func ready(n int) func(SpareStatus) bool { return func(s SpareStatus) bool { return s.Ready == n } }

// TestSpareHandOver: a ready spare becomes the new conversation's session
// (its session id and state directory), answers like any session, and a
// replacement with another id is started in the background.
func TestSpareHandOver(t *testing.T) {
	r := newSpareRig(t, 1, 4, nil)
	r.pool.KeepSpares(r.cfg)
	r.waitStatus(t, "a ready spare", ready(1))

	opts := r.newOpts()
	ctx, cancel := context.WithTimeout(context.Background(), agenttest.EventTimeout)
	defer cancel()
	s, err := r.pool.AcquireNew(ctx, "conv-1", r.cfg.Limit, opts)
	if err != nil {
		t.Fatal(err)
	}
	rec := agenttest.Record(t, s)
	spawns := r.spawnLog(t)
	if len(spawns) != 1 || s.SessionID() != spawns[0].sid || s.SessionID() == opts.SessionID {
		t.Fatalf("session %s (asked %s), spawns %+v: want the spare's session", s.SessionID(), opts.SessionID, spawns)
	}
	if fi, err := os.Stat(filepath.Join(r.cfg.StateRoot, s.SessionID())); err != nil || !fi.IsDir() {
		t.Errorf("the spare's state dir %s: %v", s.SessionID(), err)
	}
	if got, ok := r.pool.Get("conv-1"); !ok || got != s {
		t.Errorf("Get(conv-1) = %v, %v", got, ok)
	}
	if got := r.prewarmed(t); !slices.Contains(got, s.SessionID()) {
		t.Errorf("the spare %s was not prewarmed before it was handed over (prewarmed: %v)", s.SessionID(), got)
	}
	agenttest.Send(t, s, "hello")
	if res := agenttest.NextResult(t, rec); res.SessionID != s.SessionID() {
		t.Errorf("result of session %s, want %s", res.SessionID, s.SessionID())
	}

	st := r.waitStatus(t, "a replacement spare", ready(1))
	spawns = r.spawnLog(t)
	if len(spawns) != 2 || spawns[1].sid == s.SessionID() || st.Failures != 0 {
		t.Errorf("after the hand-over: spawns %+v, status %+v", spawns, st)
	}
	if n := r.pool.Len(); n != 2 {
		t.Errorf("pool holds %d processes, want the conversation and the new spare", n)
	}
}

// TestNewConversationTakesBootingSpare: a new conversation that finds the
// only spare still starting takes that spare rather than booting a second
// process beside it: AcquireNew returns once the spare answers initialize,
// with the spare's session, no spawn of its own and no prewarm (the
// conversation's first turn warms it).
func TestNewConversationTakesBootingSpare(t *testing.T) {
	r, gate := newGatedSpareRig(t, 1, 4, nil)
	ctx, cancel := context.WithTimeout(context.Background(), agenttest.EventTimeout)
	defer cancel()

	done := r.acquireNewAsync(ctx, "first", r.newOpts())
	// Claimed: the spare is no longer counted as one, and nothing else starts.
	r.waitStatus(t, "the booting spare claimed", func(s SpareStatus) bool { return s.Starting == 0 && s.Ready == 0 })
	select {
	case g := <-done:
		t.Fatalf("AcquireNew returned before the spare was ready: %+v", g)
	case <-time.After(300 * time.Millisecond):
	}
	if spawns := r.spawnsAtLeast(t, 1); len(spawns) != 1 {
		t.Fatalf("spawns %+v while the conversation waits for the booting spare: want the spare only", spawns)
	}
	openGate(t, gate)
	g := <-done
	if g.err != nil {
		t.Fatal(g.err)
	}
	rec := agenttest.Record(t, g.s)
	spawns := r.spawnsAtLeast(t, 1)
	if g.s.SessionID() != spawns[0].sid {
		t.Errorf("the conversation got %s, want the booting spare's %s", g.s.SessionID(), spawns[0].sid)
	}
	if b, _ := os.ReadFile(r.spawns + ".prewarm"); strings.Contains(string(b), spawns[0].sid) {
		t.Error("the claimed spare was prewarmed while its conversation waited")
	}
	agenttest.Send(t, g.s, "hello")
	if res := agenttest.NextResult(t, rec); res.Text != "pong" {
		t.Errorf("first turn on the claimed spare: %+v", res)
	}
	st := r.waitStatus(t, "a replacement spare", ready(1))
	if spawns := r.spawnLog(t); len(spawns) != 2 || st.Failures != 0 {
		t.Errorf("after the hand-over: spawns %+v, status %+v", spawns, st)
	}
}

// TestClaimedSpareThatHangsStartsCold: a conversation waits for the
// booting spare it claimed at most claimWaitMin (twice the spares' boot
// time when longer): a spare that never answers initialize leaves it to a
// cold spawn of its own, and stays a spare.
func TestClaimedSpareThatHangsStartsCold(t *testing.T) {
	r, gate := newGatedSpareRig(t, 1, 4, nil)
	ctx, cancel := context.WithTimeout(context.Background(), agenttest.EventTimeout)
	defer cancel()

	opts := r.newOpts()
	began := time.Now()
	s, err := r.pool.AcquireNew(ctx, "first", r.cfg.Limit, opts)
	if err != nil {
		t.Fatal(err)
	}
	agenttest.Record(t, s)
	took := time.Since(began)
	if took < claimWaitMin || took > claimWaitMin+3*time.Second {
		t.Errorf("AcquireNew took %v with a spare that never boots, want about %v", took, claimWaitMin)
	}
	if s.SessionID() != opts.SessionID {
		t.Errorf("the conversation got %s, want a cold spawn of %s", s.SessionID(), opts.SessionID)
	}
	openGate(t, gate)
	r.waitStatus(t, "the spare ready, still a spare", ready(1))
	if spawns := r.spawnLog(t); len(spawns) != 2 || spawns[0].sid == s.SessionID() {
		t.Errorf("spawns %+v: want the spare, then the conversation's own", spawns)
	}
}

// TestSpareReplacementWaitsForFirstTurn: the replacement of a spare handed
// over is spawned once that session's first turn is done, not while it
// runs; and after RefillWait at the latest when no turn comes.
func TestSpareReplacementWaitsForFirstTurn(t *testing.T) {
	r := newSpareRig(t, 1, 4, nil)
	r.cfg.RefillWait = time.Hour
	s, rec := r.takeSpare(t)
	r.waitKeeper(t)
	if n := len(r.spawnLog(t)); n != 1 {
		t.Fatalf("%d spawns before the first turn, want only the spare's", n)
	}
	agenttest.Send(t, s, "hello")
	agenttest.NextResult(t, rec)
	r.waitStatus(t, "the replacement after the first turn", ready(1))
	if n := len(r.spawnLog(t)); n != 2 {
		t.Errorf("%d spawns after the first turn, want 2", n)
	}

	// No turn on the next one: the replacement comes after RefillWait.
	r.cfg.RefillWait = 200 * time.Millisecond
	r.pool.KeepSpares(r.cfg)
	ctx, cancel := context.WithTimeout(context.Background(), agenttest.EventTimeout)
	defer cancel()
	if _, err := r.pool.AcquireNew(ctx, "conv-2", r.cfg.Limit, r.newOpts()); err != nil {
		t.Fatal(err)
	}
	handed := time.Now()
	r.waitStatus(t, "the replacement after RefillWait", ready(1))
	spawns := r.spawnLog(t)
	if len(spawns) != 3 || spawns[2].at.Sub(handed) < 150*time.Millisecond {
		t.Errorf("spawns %+v: want a third one RefillWait after the hand-over at %v", spawns, handed)
	}
}

// TestSpareNoPrewarm: with NoPrewarm a spare is ready after initialize
// without being prewarmed.
func TestSpareNoPrewarm(t *testing.T) {
	r := newSpareRig(t, 1, 4, nil)
	r.cfg.NoPrewarm = true
	r.pool.KeepSpares(r.cfg)
	r.waitStatus(t, "a ready spare", ready(1))
	if got := r.prewarmed(t); len(got) != 0 {
		t.Errorf("prewarmed %v with NoPrewarm", got)
	}
}

// prewarmed lists the session ids of the spares prewarmed so far.
func (r *spareRig) prewarmed(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(r.spawns + ".prewarm")
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Fields(string(b))
}

// TestSpareNotUsedWhenSpawnDiffers: a new conversation whose spawn options
// differ from the profile's (model, permission mode, workdir, environment)
// is spawned cold with its own session id; the spare stays.
func TestSpareNotUsedWhenSpawnDiffers(t *testing.T) {
	t.Parallel() // a real CLI or many spawns, independent of the others: beside them
	r := newSpareRig(t, 1, 8, nil)
	r.pool.KeepSpares(r.cfg)
	r.waitStatus(t, "a ready spare", ready(1))
	tests := []struct {
		name   string
		change func(o *agent.Options)
	}{
		{"model override", func(o *agent.Options) { o.Model = "opus" }},
		{"permission mode", func(o *agent.Options) { o.PermissionMode = "plan" }},
		{"workdir", func(o *agent.Options) { o.Workdir = t.TempDir() }},
		{"environment", func(o *agent.Options) { o.Env["EXTRA"] = "1" }},
		{"extra flag", func(o *agent.Options) { o.Args = []string{"--verbose"} }},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := r.newOpts()
			tt.change(&opts)
			ctx, cancel := context.WithTimeout(context.Background(), agenttest.EventTimeout)
			defer cancel()
			s, err := r.pool.AcquireNew(ctx, "conv-"+strconv.Itoa(i), r.cfg.Limit, opts)
			if err != nil {
				t.Fatal(err)
			}
			agenttest.Record(t, s)
			if s.SessionID() != opts.SessionID {
				t.Errorf("got session %s, want a cold spawn of %s", s.SessionID(), opts.SessionID)
			}
			if st := r.pool.SpareStatus("coder"); st.Ready != 1 {
				t.Errorf("spare status %+v: the spare should stay", st)
			}
		})
	}
	if _, err := r.pool.AcquireNew(context.Background(), "x", r.cfg.Limit, agent.Options{Resume: true, SessionID: "s"}); err == nil {
		t.Error("AcquireNew accepted options that resume a session")
	}
}

// TestSparesYieldToConversations: spares count against MaxLive, take only
// free slots, and are the first to go when a conversation needs a slot,
// before any idle conversation is evicted and without a "queued" notice.
func TestSparesYieldToConversations(t *testing.T) {
	r := newSpareRig(t, 1, 2, nil)
	r.pool.KeepSpares(r.cfg)
	r.waitStatus(t, "a ready spare", ready(1))
	ctx, cancel := context.WithTimeout(context.Background(), agenttest.EventTimeout)
	defer cancel()

	a, err := r.pool.AcquireNew(ctx, "A", r.cfg.Limit, r.newOpts())
	if err != nil {
		t.Fatal(err)
	}
	recA := agenttest.Record(t, a)
	agenttest.Send(t, a, "hello")
	agenttest.NextResult(t, recA)
	r.waitStatus(t, "a replacement spare in the second slot", ready(1))

	waited := false
	limit := r.cfg.Limit
	limit.OnWait = func() { waited = true }
	opts := r.newOpts()
	opts.Model = "other" // no spare fits: a cold spawn that needs a slot
	b, err := r.pool.Acquire(ctx, "B", limit, opts)
	if err != nil {
		t.Fatal(err)
	}
	agenttest.Record(t, b)
	r.waitKeeper(t)
	if !a.Alive() || !b.Alive() || waited {
		t.Errorf("A alive %v, B alive %v, told to wait %v: the spare should have made room", a.Alive(), b.Alive(), waited)
	}
	if st := r.pool.SpareStatus("coder"); st.Ready+st.Starting != 0 || r.pool.Len() != 2 {
		t.Errorf("status %+v with %d processes: the full profile must hold no spare", st, r.pool.Len())
	}

	// A freed slot gets a spare again.
	if err := r.pool.Remove(ctx, "B"); err != nil {
		t.Fatal(err)
	}
	st := r.waitStatus(t, "a spare in the freed slot", ready(1))
	if st.Failures != 0 || r.pool.Len() != 2 {
		t.Errorf("status %+v, %d processes", st, r.pool.Len())
	}
}

// TestSpareDeathReplacedAfterBackoff: a spare that dies unused counts as a
// failure and is replaced, no sooner than the back-off.
func TestSpareDeathReplacedAfterBackoff(t *testing.T) {
	r := newSpareRig(t, 1, 4, nil)
	r.pool.KeepSpares(r.cfg)
	r.waitStatus(t, "a ready spare", ready(1))
	first := r.spawnLog(t)[0]
	killed := time.Now()
	if err := syscall.Kill(first.pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	st := r.waitStatus(t, "a replacement after the death", func(s SpareStatus) bool { return s.Failures == 1 && s.Ready == 1 })
	if !strings.Contains(st.LastError, "exited") {
		t.Errorf("last error %q", st.LastError)
	}
	spawns := r.spawnLog(t)
	if len(spawns) != 2 {
		t.Fatalf("spawns %+v", spawns)
	}
	if gap := spawns[1].at.Sub(killed); gap < r.cfg.MinBackoff {
		t.Errorf("replacement spawned %v after the death, before the %v back-off", gap, r.cfg.MinBackoff)
	}
	testkit.WaitUntil(t, "the dead spare's state removed", agenttest.EventTimeout, func() bool {
		_, err := os.Stat(filepath.Join(r.cfg.StateRoot, first.sid))
		return os.IsNotExist(err)
	})
}

// TestSpareCrashLoopBacksOff: a command that cannot start, exits at once
// (bad flags) or never answers initialize is retried with a doubling
// back-off, not in a storm; the status and an error log say why.
func TestSpareCrashLoopBacksOff(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		command string
		initTO  time.Duration
		why     string
	}{
		{"bad flags", map[string]string{"EXIT": "1", "STDERR": "error: unknown option '--bogus'"}, "", 0, "unknown option '--bogus'"},
		{"no such binary", nil, "/nonexistent/claude", 0, "find the CLI"},
		{"initialize never answered", map[string]string{"NOINIT": "1"}, "", 100 * time.Millisecond, "initialize"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newSpareRig(t, 1, 4, tt.env)
			if tt.command != "" {
				r.cfg.Options.Command = tt.command
			}
			r.cfg.InitTimeout = tt.initTO
			var times []time.Time
			var mu sync.Mutex
			r.records.SetOnRecord(func(rec slog.Record) {
				if rec.Level == slog.LevelError && strings.Contains(rec.Message, "warm spare") {
					mu.Lock()
					times = append(times, rec.Time)
					mu.Unlock()
				}
			})
			r.pool.KeepSpares(r.cfg)
			st := r.waitStatus(t, "four failures", func(s SpareStatus) bool { return s.Failures >= 4 })
			if st.Ready != 0 || !strings.Contains(st.LastError, tt.why) || st.NextAttempt.IsZero() {
				t.Errorf("status %+v, want failing because of %q", st, tt.why)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(times) < 4 {
				t.Fatalf("%d error logs for %d failures", len(times), st.Failures)
			}
			if !r.records.Has(slog.LevelError, "keep failing") {
				t.Error("no error log names the repeated failure")
			}
			// Failure i (1-based) waits MinBackoff·2^(i-1), capped; the log's
			// clock is read just after the failure's, hence 10% of slack.
			for i := 1; i < len(times); i++ {
				want := min(r.cfg.MinBackoff<<(i-1), r.cfg.MaxBackoff)
				if gap := times[i].Sub(times[i-1]); gap < want*9/10 {
					t.Errorf("failure %d came %v after failure %d, before the %v back-off", i+1, gap, i, want)
				}
			}
		})
	}
}

// TestSpareRecycledAfterIdleTimeout: a spare unused for the idle timeout is
// stopped (its state removed) and replaced by a fresh one; that is no
// failure.
func TestSpareRecycledAfterIdleTimeout(t *testing.T) {
	r := newSpareRig(t, 1, 4, nil)
	r.cfg.Limit.IdleTimeout = 300 * time.Millisecond
	r.pool.KeepSpares(r.cfg)
	testkit.WaitUntil(t, "a second spare", agenttest.EventTimeout, func() bool { return len(r.spawnLog(t)) >= 2 })
	st := r.waitStatus(t, "the fresh spare ready", ready(1))
	if st.Failures != 0 {
		t.Errorf("status %+v: recycling is no failure", st)
	}
	first := r.spawnLog(t)[0]
	testkit.WaitUntil(t, "the recycled spare's state removed", agenttest.EventTimeout, func() bool {
		_, err := os.Stat(filepath.Join(r.cfg.StateRoot, first.sid))
		return os.IsNotExist(err)
	})
}

// TestKeepSparesCountChanges: raising the count starts spares one at a
// time; zero stops them all and removes their state.
func TestKeepSparesCountChanges(t *testing.T) {
	r := newSpareRig(t, 2, 4, nil)
	r.pool.KeepSpares(r.cfg)
	r.waitStatus(t, "two ready spares", ready(2))
	r.cfg.Count = 0
	r.pool.KeepSpares(r.cfg)
	r.waitStatus(t, "no spares", func(s SpareStatus) bool { return s.Ready+s.Starting == 0 })
	// The spare leaves the pool before its state directory is removed:
	// wait for both, not for the first alone.
	testkit.WaitUntil(t, "no processes and no state dirs", agenttest.EventTimeout, func() bool {
		ents, err := os.ReadDir(r.cfg.StateRoot)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		return r.pool.Len() == 0 && len(ents) == 0
	})
}

// teeHandler sends records to two handlers.
type teeHandler struct{ a, b slog.Handler }

func (t teeHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return t.a.Enabled(ctx, l) || t.b.Enabled(ctx, l)
}
func (t teeHandler) Handle(ctx context.Context, r slog.Record) error {
	_ = t.a.Handle(ctx, r.Clone())
	return t.b.Handle(ctx, r)
}
func (t teeHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return teeHandler{t.a.WithAttrs(as), t.b.WithAttrs(as)}
}
func (t teeHandler) WithGroup(n string) slog.Handler {
	return teeHandler{t.a.WithGroup(n), t.b.WithGroup(n)}
}

// TestBootSlotsLimitConcurrentBoots: with one boot slot, a second spawn
// waits until the first CLI has booted (its first init), then starts; a
// caller that gives up while waiting spawns nothing.
func TestBootSlotsLimitConcurrentBoots(t *testing.T) {
	r := newSpareRig(t, 0, 4, nil)
	r.pool.boots = make(chan struct{}, 1)
	ctx, cancel := context.WithTimeout(context.Background(), agenttest.EventTimeout)
	defer cancel()
	a, err := r.pool.Acquire(ctx, "a", r.cfg.Limit, r.newOpts())
	if err != nil {
		t.Fatal(err)
	}
	recA := agenttest.Record(t, a)

	gaveUp, stop := context.WithCancel(ctx)
	stop()
	if _, err := r.pool.Acquire(gaveUp, "gave-up", r.cfg.Limit, r.newOpts()); !errors.Is(err, context.Canceled) {
		t.Errorf("Acquire while a CLI boots, cancelled: %v, want context.Canceled", err)
	}

	got := make(chan error, 1)
	go func() {
		b, err := r.pool.Acquire(ctx, "b", r.cfg.Limit, r.newOpts())
		if err == nil {
			agenttest.Record(t, b)
		}
		got <- err
	}()
	time.Sleep(200 * time.Millisecond)
	if n := len(r.spawnsAtLeast(t, 1)); n != 1 {
		t.Fatalf("%d spawns while the first CLI boots, want 1", n)
	}
	agenttest.Send(t, a, "hello") // the scripted CLI's init: it has booted
	agenttest.NextResult(t, recA)
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	testkit.WaitUntil(t, "the second spawn after the first booted", agenttest.EventTimeout, func() bool { return len(r.spawnLog(t)) == 2 })
}

// TestSpareWarmUpRefused: a spare whose CLI refuses the warm-up turn (here
// apply_flag_settings) is discarded without being handed over or counted
// as a failure, warm-up turns are off for the profile from then on (and
// SpareStatus says why), and the next spare is ready without one.
func TestSpareWarmUpRefused(t *testing.T) {
	r := newSpareRig(t, 1, 4, map[string]string{"ENVFAIL": "no flag settings here"})
	r.cfg.WarmUp = true
	r.pool.KeepSpares(r.cfg)
	st := r.waitStatus(t, "a ready spare after the refused warm-up", ready(1))
	if !strings.Contains(st.WarmUpOff, "no flag settings here") || st.Failures != 0 {
		t.Errorf("status %+v: want warm-up off with the CLI's reason, no failure", st)
	}
	spawns := r.spawnLog(t)
	if len(spawns) != 2 {
		t.Fatalf("spawns %+v: want the discarded spare and its replacement", spawns)
	}
	if env := r.logLines(t, ".env"); len(env) != 1 || !strings.HasPrefix(env[0], spawns[0].sid+" ") {
		t.Errorf("apply_flag_settings %q: want one, from the first spare only", env)
	}
	if got := r.prewarmed(t); len(got) != 1 || got[0] != spawns[1].sid {
		t.Errorf("prewarmed %v: want the replacement, prewarmed instead", got)
	}
	s, err := r.pool.AcquireNew(context.Background(), "conv", r.cfg.Limit, r.cfg.Options)
	if err != nil {
		t.Fatal(err)
	}
	if s.SessionID() != spawns[1].sid {
		t.Errorf("handed over %s, want the replacement %s", s.SessionID(), spawns[1].sid)
	}
}

// TestSpareWarmUpMustReachTheLocalModel: a warm-up turn whose model
// request did not arrive at the pool's local model (the scripted CLI
// answers without calling any model, as a CLI whose requests go to
// another provider would) discards the spare and turns warm-up turns off.
func TestSpareWarmUpMustReachTheLocalModel(t *testing.T) {
	r := newSpareRig(t, 1, 4, nil)
	r.cfg.WarmUp = true
	r.pool.KeepSpares(r.cfg)
	st := r.waitStatus(t, "a ready spare", ready(1))
	if !strings.Contains(st.WarmUpOff, "did not arrive at the local model") {
		t.Errorf("status %+v: want warm-up off because the request went elsewhere", st)
	}
	spawns := r.spawnLog(t)
	env := r.logLines(t, ".env")
	if len(spawns) != 2 || len(env) != 2 {
		t.Fatalf("spawns %+v, apply_flag_settings %q: want one spare pointed at the local model and back, then a replacement", spawns, env)
	}
	// Pointed at the local model, then back at the profile's own URL
	// ("" when the profile sets none: the CLI's default).
	if !strings.Contains(env[0], `"ANTHROPIC_BASE_URL":"http://127.0.0.1:`) || !strings.Contains(env[1], `"ANTHROPIC_BASE_URL":""`) {
		t.Errorf("apply_flag_settings %q: want the local model, then the default", env)
	}
	if rw := r.logLines(t, ".rewind"); len(rw) != 2 {
		t.Errorf("rewinds %q: want each of the two warm-up turns rewound", rw)
	}
}

// TestSpareWarmUpBlocked: a profile whose model requests might not follow
// ANTHROPIC_BASE_URL (from its env or a settings file of its workdir), or
// whose settings have hooks that would see the warm-up turn, gets no
// warm-up turn at all.
func TestSpareWarmUpBlocked(t *testing.T) {
	for name, setup := range map[string]func(r *spareRig){
		"env": func(r *spareRig) { r.cfg.Options.Env["CLAUDE_CODE_USE_BEDROCK"] = "1" },
		"settings file": func(r *spareRig) {
			dir := filepath.Join(r.cfg.Options.Workdir, ".claude")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "settings.json"), []byte(`{"env":{"ANTHROPIC_BASE_URL":"https://gateway.example"}}`), 0o644); err != nil {
				t.Fatal(err)
			}
		},
		"hooks": func(r *spareRig) {
			dir := filepath.Join(r.cfg.Options.Workdir, ".claude")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			hooks := `{"hooks":{"UserPromptSubmit":[{"hooks":[{"type":"command","command":"notify-team"}]}]}}`
			if err := os.WriteFile(filepath.Join(dir, "settings.local.json"), []byte(hooks), 0o644); err != nil {
				t.Fatal(err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			r := newSpareRig(t, 1, 4, nil)
			r.cfg.WarmUp = true
			setup(r)
			r.pool.KeepSpares(r.cfg)
			st := r.waitStatus(t, "a ready spare", ready(1))
			if st.WarmUpOff == "" {
				t.Errorf("status %+v: want the reason there is no warm-up turn", st)
			}
			if env := r.logLines(t, ".env"); len(env) != 0 {
				t.Errorf("apply_flag_settings %q: want none", env)
			}
			if n := len(r.spawnsAtLeast(t, 1)); n != 1 {
				t.Errorf("%d spawns, want 1", n)
			}
			if got := r.prewarmed(t); len(got) != 1 {
				t.Errorf("prewarmed %v: want the spare prewarmed instead", got)
			}
		})
	}
}

// logLines returns the lines of the script's log with suffix (".env", ".rewind").
func (r *spareRig) logLines(t *testing.T, suffix string) []string {
	t.Helper()
	b, err := os.ReadFile(r.spawns + suffix)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// TestKeepSparesReplacesStaleSpares: when KeepSpares gets spawn options
// that differ (a reloaded profile), the spares started with the old ones
// are stopped and replaced, and a new session with the new options takes
// a replacement; options that stay the same keep the spare.
func TestKeepSparesReplacesStaleSpares(t *testing.T) {
	r := newSpareRig(t, 1, 8, nil)
	r.pool.KeepSpares(r.cfg)
	r.waitStatus(t, "a ready spare", ready(1))
	old := r.pool.spareSessions("coder")

	same := r.cfg
	r.pool.KeepSpares(same)
	r.waitKeeper(t)
	if now := r.pool.spareSessions("coder"); !slices.Equal(now, old) {
		t.Fatalf("spares %v after the same options, want %v kept", now, old)
	}

	changed := r.cfg
	changed.Options.Model = "haiku"
	r.pool.KeepSpares(changed)
	st := r.waitStatus(t, "a replacement spare", func(st SpareStatus) bool {
		now := r.pool.spareSessions("coder")
		return st.Ready == 1 && len(now) == 1 && !slices.Contains(old, now[0])
	})
	if st.Failures != 0 {
		t.Errorf("status %+v", st)
	}
	opts := r.newOpts()
	opts.Model = "haiku"
	ctx, cancel := context.WithTimeout(context.Background(), agenttest.EventTimeout)
	defer cancel()
	s, err := r.pool.AcquireNew(ctx, "conv", r.cfg.Limit, opts)
	if err != nil {
		t.Fatal(err)
	}
	agenttest.Record(t, s)
	if s.SessionID() == opts.SessionID {
		t.Error("a new session with the new options was spawned cold: the replacement spare was not used")
	}
}

// spareSessions lists the session ids of profile's spares not stopping.
func (p *Pool) spareSessions(profile string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, e := range p.entries {
		if e.spare != nil && e.spare.cfg.Limit.Profile == profile && !e.stopping && e.s != nil {
			out = append(out, e.s.SessionID())
		}
	}
	slices.Sort(out)
	return out
}

// TestClaimedSpareOfReloadedProfileStartsCold: a conversation waiting for
// the booting spare it claimed does not get it once the profile's spawn
// options changed meanwhile (a reload): it starts a CLI of its own at once,
// and the stale spare is stopped.
func TestClaimedSpareOfReloadedProfileStartsCold(t *testing.T) {
	r, _ := newGatedSpareRig(t, 1, 8, nil)
	ctx, cancel := context.WithTimeout(context.Background(), agenttest.EventTimeout)
	defer cancel()
	opts := r.newOpts()
	done := r.acquireNewAsync(ctx, "conv", opts)
	r.waitStatus(t, "the spare claimed", func(s SpareStatus) bool { return s.Starting == 0 })
	stale := r.spawnsAtLeast(t, 1)[0].sid
	changed := r.cfg
	changed.Options.Model = "haiku"
	began := time.Now()
	r.pool.KeepSpares(changed)
	g := <-done
	if g.err != nil {
		t.Fatal(g.err)
	}
	agenttest.Record(t, g.s)
	if g.s.SessionID() != opts.SessionID || time.Since(began) > claimWaitMin/2 {
		t.Errorf("got session %s after %v, want a cold spawn of %s at once", g.s.SessionID(), time.Since(began), opts.SessionID)
	}
	testkit.WaitUntil(t, "the stale spare stopped", agenttest.EventTimeout, func() bool { return !slices.Contains(r.pool.spareSessions("coder"), stale) })
}

// acquired is what an AcquireNew in the background returned.
type acquired struct {
	s   *agent.Session
	err error
}

// acquireNewAsync runs AcquireNew for key with opts in the background.
func (r *spareRig) acquireNewAsync(ctx context.Context, key string, opts agent.Options) <-chan acquired {
	done := make(chan acquired, 1)
	go func() {
		s, err := r.pool.AcquireNew(ctx, key, r.cfg.Limit, opts)
		done <- acquired{s, err}
	}()
	return done
}

// arrivals records n new conversations gap apart, the last one now, for
// the profile's adaptive spare count, and wakes the keeper.
func (r *spareRig) arrivals(n int, gap time.Duration) {
	r.pool.mu.Lock()
	defer r.pool.mu.Unlock()
	now := time.Now()
	for i := n - 1; i >= 0; i-- {
		r.pool.spares[r.cfg.Limit.Profile].auto.arrive(now.Add(-time.Duration(i) * gap))
	}
	r.pool.notifyLocked()
}

// newGatedSpareRig is newSpareRig whose CLIs answer initialize only once
// openGate(gate) ran, with its config changed by tweak (if not nil) and its
// spares kept: it returns once the first spare is starting.
func newGatedSpareRig(t *testing.T, count, maxLive int, tweak func(*SpareConfig)) (r *spareRig, gate string) {
	t.Helper()
	gate = filepath.Join(t.TempDir(), "gate")
	r = newSpareRig(t, count, maxLive, map[string]string{"GATE": gate})
	if tweak != nil {
		tweak(&r.cfg)
	}
	r.pool.KeepSpares(r.cfg)
	r.waitStatus(t, "a spare starting", func(s SpareStatus) bool { return s.Starting == 1 })
	return r, gate
}

// openGate lets the gated CLIs answer initialize.
func openGate(t *testing.T, gate string) {
	t.Helper()
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
}
