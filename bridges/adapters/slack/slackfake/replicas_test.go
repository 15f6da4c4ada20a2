package slackfake

import (
	"testing"
	"time"
)

// TestSocketsShareEvents: with several sockets of one app connected (one
// per bridge replica), each event goes to exactly one of them, spread over
// all; events a socket left unacked when it died go to another at once.
func TestSocketsShareEvents(t *testing.T) {
	s := New(t)
	a, b := dialSocketMode(t, s), dialSocketMode(t, s)
	a.next() // hello
	b.next()
	for range 4 {
		s.SendMessage("D1", "U1", "hello", "")
	}
	got := map[*rawSocket]int{}
	for _, r := range []*rawSocket{a, b} {
		for range 2 {
			e := r.next()
			if e["type"] != "events_api" {
				t.Fatalf("got %v", e)
			}
			r.ack(e["envelope_id"].(string))
			got[r]++
		}
	}
	if got[a] != 2 || got[b] != 2 {
		t.Errorf("events per socket: a %d, b %d; want 2 each", got[a], got[b])
	}

	lost := s.SendMessage("D1", "U1", "to a, never acked", "")
	envs := s.EnvelopesFor(lost)
	if len(envs) != 1 {
		t.Fatalf("envelopes for %s: %v", lost, envs)
	}
	dying, other := a, b
	if err := s.WaitFor(func() bool { return !s.EnvelopesFor(lost)[0].Sent.IsZero() }, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	if envs[0].Conn == 2 { // b got it
		dying, other = b, a
	}
	dying.next()
	dying.ws.Close()
	e := other.next()
	ev := e["payload"].(map[string]any)["event"].(map[string]any)
	if ev["ts"] != lost || e["retry_attempt"] != float64(1) {
		t.Errorf("the other socket got %v, want the retry of %s", e, lost)
	}
}
