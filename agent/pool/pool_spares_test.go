package pool

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
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
