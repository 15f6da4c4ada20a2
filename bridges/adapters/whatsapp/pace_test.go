package whatsapp

import (
	"testing"
	"time"
)

// The pacer spaces one chat's messages an interval apart, chats
// independently, and a quiet chat sends at once again.
func TestPacerSlots(t *testing.T) {
	p := newPacer(500 * time.Millisecond)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	steps := []struct {
		chat string
		at   time.Duration // after t0
		wait time.Duration
	}{
		{"a", 0, 0},
		{"a", 0, 500 * time.Millisecond}, // a burst waits its turn
		{"a", 0, time.Second},
		{"b", 0, 0}, // another chat is not held up
		{"a", 200 * time.Millisecond, 1300 * time.Millisecond},
		{"a", 5 * time.Second, 0}, // quiet for a while: at once
		{"a", 5*time.Second + 100*time.Millisecond, 400 * time.Millisecond},
	}
	for i, s := range steps {
		if got := p.reserve(s.chat, t0.Add(s.at)); got != s.wait {
			t.Errorf("step %d (%s at +%v): wait %v, want %v", i, s.chat, s.at, got, s.wait)
		}
	}
}

// A slot used late (its timer fired late on a busy machine) moves the
// chat's next slot: sends, not only slots, stay an interval apart.
func TestPacerLateSendMovesTheNextSlot(t *testing.T) {
	p := newPacer(500 * time.Millisecond)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p.reserve("a", t0)                          // at once; next slot t0+500ms
	p.reserve("a", t0)                          // waits for t0+500ms; next slot t0+1s
	p.sentAt("a", t0.Add(900*time.Millisecond)) // that send happened 400 ms late
	if got, want := p.reserve("a", t0.Add(900*time.Millisecond)), 500*time.Millisecond; got != want {
		t.Errorf("the send after a late one waits %v, want %v", got, want)
	}
	p.sentAt("a", t0.Add(1400*time.Millisecond)) // on time: nothing moves
	if got, want := p.reserve("a", t0.Add(1400*time.Millisecond)), 500*time.Millisecond; got != want {
		t.Errorf("the send after an on-time one waits %v, want %v", got, want)
	}
}
