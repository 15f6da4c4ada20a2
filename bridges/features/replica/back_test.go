package replica

import (
	"context"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/internal/testkit"
)

// TestPlatformBackWakesTheWaitingReplica: replies of bot "b" wait on one
// replica; the first sign of b's platform seen by another wakes them
// there, once; a sign of another bot, or with nobody waiting, wakes
// nothing.
func TestPlatformBackWakesTheWaitingReplica(t *testing.T) {
	st := openPG(t)
	ctx := context.Background()
	waiting, wc, _ := startReplica(t, st, 3*time.Second)
	seeing, sc, _ := startReplica(t, st, 3*time.Second)

	seeing.PlatformBack(ctx, "b") // nobody waits: no signal
	waiting.WaitingFor(ctx, "b")
	testkit.WaitUntil(t, "the other replica to hear that b's replies wait", 10*time.Second, func() bool { return seeing.waitsFor("b") })
	seeing.PlatformBack(ctx, "other")
	seeing.PlatformBack(ctx, "b")
	seeing.PlatformBack(ctx, "b") // told once
	waitFor(t, wc.woken, "b", 10*time.Second)
	select {
	case bot := <-wc.woken:
		t.Errorf("woken again (%s)", bot)
	case bot := <-sc.woken:
		t.Errorf("the replica that saw the sign was woken (%s)", bot)
	case <-time.After(500 * time.Millisecond):
	}
}

// waitsFor reports whether another replica said that replies of bot wait.
func (r *Replica) waitsFor(bot string) bool {
	r.back.mu.Lock()
	defer r.back.mu.Unlock()
	_, ok := r.back.waiters[bot]
	return ok
}
