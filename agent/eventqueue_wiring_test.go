package agent

import (
	"context"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/eventqueue"
	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// TestStuckConsumerStopsSession: a CLI that keeps printing while nobody
// reads its events is stopped once its event queue overflows; the consumer
// then finds the overflow marker and an unexpected Exit, and the session's
// memory stayed bounded.
func TestStuckConsumerStopsSession(t *testing.T) {
	cli := testkit.FakeCLI(t, `
i=0
while :; do
  i=$((i+1))
  echo '{"type":"assistant","message":{"id":"m'$i'","role":"assistant","content":[{"type":"tool_use","id":"t'$i'","name":"Bash","input":{"command":"true"}}]}}'
done
`)
	s, err := Start(context.Background(), Options{Command: cli, Workdir: t.TempDir(), Home: t.TempDir()}, testkit.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	select { // nobody reads Events meanwhile
	case <-s.Done():
	case <-time.After(60 * time.Second):
		_ = s.Close(context.Background())
		t.Fatal("the session was not stopped although nobody read its events")
	}
	var overflow, exit bool
	n := 0
	for ev := range s.Events() {
		n++
		switch e := ev.(type) {
		case streamjson.EventsDropped:
			overflow = overflow || e.Overflow
		case streamjson.Exit:
			exit = !e.Expected
		}
	}
	if !overflow || !exit || n > eventqueue.DefaultMaxEvents+eventqueue.ChanBuffer+4 {
		t.Errorf("overflow marker %v, unexpected exit %v, %d events (limit %d)", overflow, exit, n, eventqueue.DefaultMaxEvents)
	}
}
