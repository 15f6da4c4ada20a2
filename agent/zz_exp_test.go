package agent

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/sandbox"
)

func TestZZFollowVariants(t *testing.T) {
	h := newHarness(t)
	mk := map[string]func() Options{
		"plain": func() Options { return h.opts() },
		"mcp": func() Options {
			o := h.opts()
			o.MCPServers = map[string]MCPServer{"bridge": &echoMCP{}}
			o.AllowedTools = []string{"mcp__bridge__echo"}
			return o
		},
		"bwrap+mcp": func() Options {
			o := h.opts()
			o.MCPServers = map[string]MCPServer{"bridge": &echoMCP{}}
			o.AllowedTools = []string{"mcp__bridge__echo"}
			o.Sandbox = &sandbox.Bwrap{}
			o.StateDir = filepath.Join(t.TempDir(), "s")
			return o
		},
	}
	names := []string{"plain", "mcp", "bwrap+mcp"}
	sess := map[string]*Session{}
	for _, n := range names {
		s, err := Start(context.Background(), mk[n](), slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		sess[n] = s
		defer s.Close(context.Background())
		zzRun(s, "warm")
		zzRun(s, "warm")
	}
	res := map[string][]time.Duration{}
	for i := 0; i < 20; i++ {
		for _, n := range names {
			t0 := time.Now()
			zzRun(sess[n], fmt.Sprint("msg ", i))
			res[n] = append(res[n], time.Since(t0))
		}
	}
	for _, n := range names {
		d := res[n]
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		fmt.Printf("%-10s median %v p10 %v p90 %v\n", n, d[len(d)/2].Round(100*time.Microsecond), d[2].Round(100*time.Microsecond), d[18].Round(100*time.Microsecond))
	}
}

func zzRun(s *Session, text string) {
	s.Send(context.Background(), UserMessage{UUID: fmt.Sprint(time.Now().UnixNano()), Text: text})
	for ev := range s.Events() {
		if _, ok := ev.(Result); ok {
			return
		}
	}
}
