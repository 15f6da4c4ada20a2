package whatsapp

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// Replies the agent produces while WhatsApp is disconnected are refused by
// the client (ErrNotConnected, a transient error): the outbox keeps them
// through a 40 s outage (longer than the ≈ 30 s after which replies used
// to be given up) and posts them once the connection is back, once each,
// in order, the first saying it is late — the real CLI and fake model, the
// core, the adapter and the fake client that refuses sends like the real
// one.
func TestLiveRepliesWaitOutDisconnect(t *testing.T) {
	t.Parallel() // waits out a 40 s outage and the retry after it
	l := startClaudeEnv(t)
	dm := pnJID(alice)
	setConnected := func(up bool) {
		l.fake.mu.Lock()
		l.fake.connected = up
		l.fake.mu.Unlock()
	}

	const outage = 40 * time.Second
	setConnected(false)
	l.dispatch(l.msg(dm, pnJID(alice), "first while offline"))
	// The first answer was refused at least once before the second is sent,
	// so the second waits behind it.
	l.waitCallsWithin(liveTimeout, "a refused send of the first answer", func(cs []fakeCall) bool {
		for _, c := range cs {
			if c.Op == "SendMessage" && c.Err != nil && strings.Contains(textOf(c), "pong: first while offline") {
				return true
			}
		}
		return false
	})
	l.dispatch(l.msg(dm, pnJID(alice), "second while offline"))
	time.Sleep(outage)
	if shown := l.fake.Shown(dm); len(shown) != 0 {
		t.Fatalf("shown while disconnected: %q", shown)
	}

	setConnected(true)
	l.waitCallsWithin(liveTimeout, "both answers shown", func([]fakeCall) bool {
		shown := l.fake.Shown(dm)
		return slices.ContainsFunc(shown, func(s string) bool { return strings.Contains(s, "pong: second while offline") })
	})
	var answers []string
	for _, s := range l.fake.Shown(dm) {
		if strings.Contains(s, "pong: ") {
			answers = append(answers, s)
		}
	}
	if len(answers) != 2 || !strings.Contains(answers[0], "first while offline") || !strings.Contains(answers[1], "second while offline") {
		t.Fatalf("answers shown = %q, want the first then the second, once each", answers)
	}
	if !strings.Contains(answers[0], "delivered after a WhatsApp outage") || strings.Contains(answers[1], "delivered after") {
		t.Errorf("answers shown = %q, want the late note on the first only", answers)
	}
}
