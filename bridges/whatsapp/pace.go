package whatsapp

import (
	"context"
	"sync"
	"time"
)

// pacer spaces the messages sent to one chat at least interval apart: no
// bursts (WhatsApp flags accounts that send like bots).
type pacer struct {
	interval time.Duration
	mu       sync.Mutex
	next     map[string]time.Time // chat → earliest time of its next send
}

func newPacer(interval time.Duration) *pacer {
	return &pacer{interval: interval, next: map[string]time.Time{}}
}

// wait blocks until a message may be sent to chat and reserves that slot.
// It returns ctx's error when ctx ends first (the slot stays taken).
func (p *pacer) wait(ctx context.Context, chat string) error {
	d := p.reserve(chat, time.Now())
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// reserve takes the next free slot of chat at or after now and returns how
// long to wait for it.
func (p *pacer) reserve(chat string, now time.Time) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	at := now
	if next := p.next[chat]; next.After(now) {
		at = next
	}
	p.next[chat] = at.Add(p.interval)
	if len(p.next) > 4096 { // forget chats that are long quiet
		for c, t := range p.next {
			if t.Before(now) {
				delete(p.next, c)
			}
		}
	}
	return at.Sub(now)
}
