package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges/adapters/slack/slackfake"
)

// scaleWait bounds each reply in the scale run (a 2-core machine running
// 32 CLIs is slow).
const scaleWait = 10 * time.Minute

// BenchmarkConcurrentConversations: Slack threads in one channel talk to
// the bridge binary at once, with the real CLI against the fake model: 100
// threads with max_live 32 (and the default warm spare), and a quick 10
// threads with max_live 4. There are three rounds: every thread sends a
// message at once and the next round starts when all are answered, so idle
// agents are evicted (least recently used first) and resumed
// transparently. Every reply must arrive, and each "[echo-history]" turn
// must hold that thread's earlier messages and no other thread's. One op is
// one whole run; reported: replies answered (%), first-reply (round 1) and
// follow-up (rounds 2 and 3, mostly resumed) latency percentiles,
// evictions, resumed spawns, and the bridge's own peak RSS (without its
// CLIs).
//
// It takes minutes, so it is a benchmark, not a test:
// go test ./cmd/bridge -run '^$' -bench ConcurrentConversations -benchtime 1x -timeout 60m
func BenchmarkConcurrentConversations(b *testing.B) {
	for _, sz := range []struct{ convs, maxLive int }{{100, 32}, {10, 4}} {
		b.Run(fmt.Sprintf("conversations=%d,max_live=%d", sz.convs, sz.maxLive), func(b *testing.B) {
			benchConversations(b, sz.convs, 3, sz.maxLive)
		})
	}
}

func benchConversations(b *testing.B, convs, turns, maxLive int) {
	for b.Loop() {
		r := runConversations(b, convs, turns, maxLive)
		b.ReportMetric(100*float64(r.answered)/float64(convs*turns), "answered-%")
		b.ReportMetric(float64(r.wrongHistory), "wrong-histories")
		b.ReportMetric(pct(r.first, 50).Seconds(), "s-first-reply-p50")
		b.ReportMetric(pct(r.first, 95).Seconds(), "s-first-reply-p95")
		b.ReportMetric(pct(r.followUp, 50).Seconds(), "s-follow-up-p50")
		b.ReportMetric(pct(r.followUp, 95).Seconds(), "s-follow-up-p95")
		b.ReportMetric(float64(r.evictions), "evictions")
		b.ReportMetric(float64(r.resumes), "resumed-spawns")
		b.ReportMetric(float64(r.peakRSSKB)/1024, "MB-bridge-peak-RSS")
		if r.answered != convs*turns || r.wrongHistory > 0 {
			b.Errorf("%d of %d replies, %d wrong histories", r.answered, convs*turns, r.wrongHistory)
		}
	}
}

// scaleResult is what one run measured.
type scaleResult struct {
	answered, wrongHistory int
	first, followUp        []time.Duration
	evictions, resumes     int
	peakRSSKB              int64
}

// runConversations runs convs threads of turns messages each, in rounds:
// every thread sends its next message at once, and the next round starts
// when all of them are answered (people come back later, so most threads
// find their agent evicted and resume it).
func runConversations(b *testing.B, convs, turns, maxLive int) scaleResult {
	b.StopTimer()
	e := startSlackBridgeWith(b, profileOptions{maxLive: maxLive})
	var peak atomic.Int64
	stopRSS := sampleRSS(e.bridge.cmd.Process.Pid, &peak)
	b.StartTimer()

	var (
		mu      sync.Mutex
		res     scaleResult
		threads = make([]string, convs)
		sent    = make([][]string, convs)
		failed  = make([]bool, convs)
	)
	for turn := 1; turn <= turns; turn++ {
		var wg sync.WaitGroup
		for c := range convs {
			if failed[c] {
				continue
			}
			wg.Go(func() {
				text := fmt.Sprintf("conv%03d turn%d", c, turn)
				want := "pong: " + text
				if turn > 1 {
					text, want = "[echo-history] "+text, "history: "
				}
				at := time.Now()
				thread := threads[c]
				if thread == "" {
					thread = e.slack.Mention(slackChan, alice, text, "")
				} else {
					e.slack.SendMessage(slackChan, alice, text, thread)
				}
				// The reply is a post, or a native stream when the turn ran
				// past status_delay (its text is the stream's current one).
				var reply slackfake.Message
				err := e.slack.WaitFor(func() bool {
					for _, p := range e.slack.Posts() {
						if p.ThreadTS != thread || !p.At.After(at) {
							continue
						}
						if m, ok := e.slack.Current(p.Channel, p.TS); ok && strings.Contains(m.Text, want) &&
							(turn == 1 || strings.Contains(m.Text, fmt.Sprintf("turn%d", turn-1))) {
							reply, reply.At = m, time.Now()
							return true
						}
					}
					return false
				}, scaleWait)
				mu.Lock()
				defer mu.Unlock()
				threads[c] = thread
				if err != nil {
					failed[c] = true
					b.Errorf("conversation %d turn %d: no reply within %v", c, turn, scaleWait)
					return
				}
				res.answered++
				if turn == 1 {
					res.first = append(res.first, reply.At.Sub(at))
				} else {
					res.followUp = append(res.followUp, reply.At.Sub(at))
					if !historyIs(reply.Text, c, sent[c]) {
						res.wrongHistory++
						b.Errorf("conversation %d turn %d: history %q, want exactly %q", c, turn, reply.Text, sent[c])
					}
				}
				sent[c] = append(sent[c], text)
			})
		}
		wg.Wait()
	}
	b.StopTimer()
	res.peakRSSKB = stopRSS()
	logs := e.bridge.logs.String()
	res.evictions = strings.Count(logs, "evicting the least recently used idle session")
	res.resumes = len(resumedSpawn.FindAllStringIndex(logs, -1))
	b.StartTimer()
	return res
}

// resumedSpawn matches the log line of a spawn that resumes a session.
var resumedSpawn = regexp.MustCompile(`msg="agent started" .*resume=true`)

// convTag matches the conversation tags the scale run writes.
var convTag = regexp.MustCompile(`conv(\d{3}) turn\d`)

// historyIs reports whether an "[echo-history]" reply lists exactly the
// earlier messages of conversation c.
func historyIs(reply string, c int, sent []string) bool {
	var got []string
	for _, m := range convTag.FindAllStringSubmatch(reply, -1) {
		if n, _ := strconv.Atoi(m[1]); n != c {
			return false // another conversation's message
		}
		got = append(got, m[0])
	}
	// The reply also quotes the current message ("pong"-style echo of the
	// prompt is not part of the history): compare the earlier ones.
	var want []string
	for _, s := range sent {
		want = append(want, convTag.FindString(s))
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			return false
		}
	}
	return true
}

// sampleRSS samples the VmRSS of pid every 100 ms into peak until the
// returned function is called; that returns the peak in kB (VmHWM if
// higher).
func sampleRSS(pid int, peak *atomic.Int64) func() int64 {
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			if kb := procStatusKB(pid, "VmRSS:"); kb > peak.Load() {
				peak.Store(kb)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	return func() int64 {
		close(stop)
		<-done
		return max(peak.Load(), procStatusKB(pid, "VmHWM:"))
	}
}

// procStatusKB reads a kB field of /proc/pid/status (0 if unavailable).
func procStatusKB(pid int, field string) int64 {
	f, err := os.Open(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb
		}
	}
	return 0
}

// pct is the p-th percentile of ds (0 when empty).
func pct(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, (len(s)*p+99)/100-1)]
}
