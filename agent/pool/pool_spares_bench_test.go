package pool

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentbridge/agentbridge/agent"
	"github.com/agentbridge/agentbridge/agent/agenttest"
	"github.com/agentbridge/agentbridge/agent/sandbox"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// benchBridgeOpts are Options as the bridge runs agents: bubblewrap when
// installed, a private state directory (under root) per session.
func benchBridgeOpts(b *testing.B, h *harness) agent.Options {
	opts := h.opts()
	if _, err := exec.LookPath("bwrap"); err == nil {
		opts.Sandbox = &sandbox.Bwrap{}
	}
	return opts
}

// BenchmarkFirstTurn: the first message of a new conversation, from the
// pool call to its Result, five ways in the same run: on a warm spare that
// ran a warm-up turn (SpareConfig.WarmUp), on one spawned, initialized and
// prewarmed ahead of time (the default without WarmUp), on one not
// prewarmed (SpareConfig.NoPrewarm), on a cold spawn, and a follow-up on a
// live process for reference. The replacement spare is awaited between
// iterations, untimed.
//
// Run: go test ./agent/pool -run '^$' -bench FirstTurn -benchtime 15x
func BenchmarkFirstTurn(b *testing.B) {
	b.Run("warm-spare,warm-up", func(b *testing.B) { benchWarmFirstTurn(b, func(c *SpareConfig) { c.WarmUp = true }) })
	b.Run("warm-spare", func(b *testing.B) { benchWarmFirstTurn(b, func(*SpareConfig) {}) })
	b.Run("warm-spare,no-prewarm", func(b *testing.B) { benchWarmFirstTurn(b, func(c *SpareConfig) { c.NoPrewarm = true }) })
	b.Run("cold", func(b *testing.B) {
		h := &harness{agenttest.NewHarness(b)}
		pool := New(slog.New(slog.DiscardHandler))
		defer closeBenchPool(b, pool)
		tmpl := benchBridgeOpts(b, h)
		limit := Limit{Profile: "p", MaxLive: 4}
		i := 0
		for b.Loop() {
			opts := tmpl
			opts.SessionID = uuid.NewString()
			opts.StateDir = filepath.Join(b.TempDir(), opts.SessionID)
			key := fmt.Sprint("conv-", i)
			i++
			s, err := pool.AcquireNew(context.Background(), key, limit, opts)
			if err != nil {
				b.Fatal(err)
			}
			benchFirstTurn(b, pool, key, s)
		}
	})
	b.Run("follow-up", func(b *testing.B) {
		h := &harness{agenttest.NewHarness(b)}
		opts := benchBridgeOpts(b, h)
		opts.StateDir = filepath.Join(b.TempDir(), "state")
		s, err := agent.Start(context.Background(), opts, slog.New(slog.DiscardHandler))
		if err != nil {
			b.Fatal(err)
		}
		agenttest.BenchFollowUps(b, s)
	})
}

// waitBenchSpare waits until the pool has a ready spare.
func waitBenchSpare(b *testing.B, pool *Pool) {
	b.Helper()
	testkit.WaitUntilSeen(b, "a ready spare", agenttest.EventTimeout, func() (bool, string) {
		st := pool.SpareStatus("p")
		return st.Ready > 0, fmt.Sprintf("%+v", st)
	})
}

func closeBenchPool(b *testing.B, pool *Pool) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := pool.Close(ctx); err != nil {
		b.Error(err)
	}
}

// BenchmarkCLIMemory measures the resident memory of one live CLI process
// (its whole process tree: bubblewrap and the CLI, when sandboxed) as the
// bridge runs it: after initialize and prewarm (a warm spare), after a
// first turn, and after ten turns. Each op is one process; the metrics are
// means.
//
// Run: go test ./agent/pool -run '^$' -bench CLIMemory -benchtime 3x
func BenchmarkCLIMemory(b *testing.B) {
	h := &harness{agenttest.NewHarness(b)}
	var idle, one, ten float64
	for b.Loop() {
		opts := benchBridgeOpts(b, h)
		opts.SessionID = uuid.NewString()
		opts.StateDir = filepath.Join(b.TempDir(), "state")
		s, err := agent.Start(context.Background(), opts, slog.New(slog.DiscardHandler))
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Initialize(context.Background()); err != nil {
			b.Fatal(err)
		}
		if err := s.Prewarm(context.Background()); err != nil {
			b.Fatal(err)
		}
		idle += settledTreeRSS(b, s.PID())
		for i := range 10 {
			agenttest.BenchSend(b, s, fmt.Sprintf("message %d", i))
			agenttest.BenchResult(b, s.Events())
			if i == 0 {
				one += settledTreeRSS(b, s.PID())
			}
		}
		ten += settledTreeRSS(b, s.PID())
		agenttest.BenchClose(b, s)
	}
	n := float64(b.N)
	b.ReportMetric(idle/n, "MB-RSS-initialized")
	b.ReportMetric(one/n, "MB-RSS-after-1-turn")
	b.ReportMetric(ten/n, "MB-RSS-after-10-turns")
}

// settledTreeRSS waits a moment for the CLI's post-turn work (transcript
// writes, GC) and returns the RSS of pid and its descendants in MB.
func settledTreeRSS(b *testing.B, pid int) float64 {
	b.Helper()
	time.Sleep(500 * time.Millisecond)
	kb, err := treeRSSKB(pid)
	if err != nil {
		b.Fatal(err)
	}
	return float64(kb) / 1024
}

// treeRSSKB sums VmRSS over pid and all its descendants (Linux /proc).
func treeRSSKB(pid int) (int64, error) {
	children := map[int][]int{}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0, fmt.Errorf("read /proc: %w", err)
	}
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so cut at the last ')'.
		rest := string(stat[strings.LastIndexByte(string(stat), ')')+1:])
		f := strings.Fields(rest)
		if len(f) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		children[ppid] = append(children[ppid], p)
	}
	var total int64
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		total += vmRSSKB(p)
		queue = append(queue, children[p]...)
	}
	return total, nil
}

// vmRSSKB is the VmRSS of pid in kB (0 if it is gone).
func vmRSSKB(pid int) int64 {
	f, err := os.Open(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb
		}
	}
	return 0
}

// benchWarmFirstTurn times first turns on warm spares configured by
// setup: with a warm-up turn, prewarmed, or neither.
func benchWarmFirstTurn(b *testing.B, setup func(*SpareConfig)) {
	h := &harness{agenttest.NewHarness(b)}
	pool := New(slog.New(slog.DiscardHandler))
	defer closeBenchPool(b, pool)
	tmpl := benchBridgeOpts(b, h)
	cfg := SpareConfig{Limit: Limit{Profile: "p", MaxLive: 4}, Count: 1, Options: tmpl, StateRoot: b.TempDir()}
	setup(&cfg)
	pool.KeepSpares(cfg)
	i := 0
	for b.Loop() {
		b.StopTimer()
		waitBenchSpare(b, pool)
		opts := tmpl
		opts.SessionID = uuid.NewString()
		key := fmt.Sprint("conv-", i)
		i++
		b.StartTimer()
		s, err := pool.AcquireNew(context.Background(), key, cfg.Limit, opts)
		if err != nil {
			b.Fatal(err)
		}
		if s.SessionID() == opts.SessionID {
			b.Fatal("no warm spare was used")
		}
		benchFirstTurn(b, pool, key, s)
	}
}

// benchFirstTurn times the first turn of session s of key, then (untimed)
// removes it from the pool.
func benchFirstTurn(b *testing.B, pool *Pool, key string, s *agent.Session) {
	agenttest.BenchSend(b, s, "first message")
	agenttest.BenchResult(b, s.Events())
	b.StopTimer()
	if err := pool.Remove(context.Background(), key); err != nil {
		b.Fatal(err)
	}
	for range s.Events() {
	}
	b.StartTimer()
}
