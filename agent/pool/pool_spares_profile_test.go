package pool

import (
	"context"
	"fmt"
	"testing"

	"github.com/agentbridge/agentbridge/agent/agenttest"
)

// TestSpareNotHandedToAnotherProfile: a ready spare of profile "coder" is
// never handed to a new conversation of profile "reviewer" (whose spares
// are off), even one asking for the very same spawn options: the real pool
// spawns that conversation cold, with the session id it asked for, and
// coder's spare stays ready for coder.
func TestSpareNotHandedToAnotherProfile(t *testing.T) {
	r := newSpareRig(t, 1, 4, nil)
	r.pool.KeepSpares(r.cfg)
	r.waitStatus(t, "a ready spare", ready(1))
	spare := r.spawnLog(t)
	if len(spare) != 1 {
		t.Fatalf("spawns %+v, want coder's spare", spare)
	}
	other := r.cfg
	other.Limit.Profile, other.Count = "reviewer", 0
	ctx, cancel := context.WithTimeout(context.Background(), agenttest.EventTimeout)
	defer cancel()
	// First with no spare config for reviewer at all, then with Count 0.
	for i, keep := range []bool{false, true} {
		if keep {
			r.pool.KeepSpares(other)
		}
		opts := r.newOpts()
		s, err := r.pool.AcquireNew(ctx, fmt.Sprint("conv-reviewer-", i), other.Limit, opts)
		if err != nil {
			t.Fatal(err)
		}
		if s.SessionID() != opts.SessionID || s.SessionID() == spare[0].sid {
			t.Fatalf("reviewer's conversation (spare config %v) got session %s (asked %s; coder's spare is %s): want a cold spawn",
				keep, s.SessionID(), opts.SessionID, spare[0].sid)
		}
		if st := r.pool.SpareStatus("coder"); st.Ready != 1 {
			t.Errorf("coder's spares after reviewer's acquire: %+v, want its spare still ready", st)
		}
	}

	// coder's own new conversation still gets the spare.
	mine, err := r.pool.AcquireNew(ctx, "conv-coder", r.cfg.Limit, r.newOpts())
	if err != nil {
		t.Fatal(err)
	}
	if mine.SessionID() != spare[0].sid {
		t.Errorf("coder's conversation got session %s, want its spare %s", mine.SessionID(), spare[0].sid)
	}
}
