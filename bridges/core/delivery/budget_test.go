package delivery

import (
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
)

func TestBudget(t *testing.T) {
	var b Budget
	t0 := time.Unix(0, 0)
	iv := time.Second
	if w := b.Take(t0, iv, false); w != 0 {
		t.Fatalf("first streaming edit waits %s", w)
	}
	if w := b.Take(t0.Add(300*time.Millisecond), iv, false); w != 700*time.Millisecond {
		t.Fatalf("second edit within the interval waits %s, want 700ms", w)
	}
	if w := b.Take(t0.Add(300*time.Millisecond), iv, true); w != 0 {
		t.Fatal("an urgent post must never wait")
	}
	// The urgent post pushed the next streaming slot back.
	if w := b.Take(t0.Add(time.Second), iv, false); w != time.Second {
		t.Fatalf("streaming after an urgent post waits %s, want 1s", w)
	}
	if w := b.Take(t0.Add(2*time.Second), iv, false); w != 0 {
		t.Fatalf("streaming after the slot waits %s", w)
	}
}

// TestBudgetReleasedWithLastWorker: a channel's budget lives as long as a
// worker of that channel does.
func TestBudgetReleasedWithLastWorker(t *testing.T) {
	var bs Budgets
	k1 := bridges.ConversationKey{Bot: "bot", Channel: "C", Thread: "1"}
	k2 := bridges.ConversationKey{Bot: "bot", Channel: "C", Thread: "2"}
	b1, b2 := bs.For(k1), bs.For(k2)
	if b1 != b2 {
		t.Fatal("threads of one channel got different budgets")
	}
	bs.Release(k1)
	if bs.Len() != 1 {
		t.Fatal("budget released while a worker still holds it")
	}
	bs.Release(k2)
	if bs.Len() != 0 {
		t.Errorf("%d budgets left after the last worker", bs.Len())
	}
}

// TestBudgetDebtIsCapped: urgent operations always go and push streaming
// edits back one interval each, but a burst pushes them back at most
// MaxBudgetDebt intervals; streaming edits keep one per interval.
func TestBudgetDebtIsCapped(t *testing.T) {
	var b Budget
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const iv = time.Second
	for range 50 {
		if w := b.Take(now, iv, true); w != 0 {
			t.Fatalf("an urgent take waited %v", w)
		}
	}
	if w := b.Take(now, iv, false); w != MaxBudgetDebt*iv {
		t.Errorf("after a burst of 50 urgent posts a streaming edit waits %v, want %v", w, MaxBudgetDebt*iv)
	}
	now = now.Add(MaxBudgetDebt * iv)
	if w := b.Take(now, iv, false); w != 0 {
		t.Errorf("once the debt is paid a streaming edit waits %v", w)
	}
	if w := b.Take(now.Add(iv/2), iv, false); w != iv/2 {
		t.Errorf("a second streaming edit within the interval waits %v, want %v", w, iv/2)
	}
}
