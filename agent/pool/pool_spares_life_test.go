package pool

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent"
	"github.com/agentbridge/agentbridge/agent/agenttest"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// The warm spares' lives: deaths and crash loops, recycling, count changes,
// boot slots, warm-up turns refused or blocked, stale spares replaced.

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
