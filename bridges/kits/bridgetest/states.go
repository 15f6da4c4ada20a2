package bridgetest

import (
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/bridges"
)

// WantState is an expected connection state report: the state, the
// attempt and a part of the reason ("" matches any).
type WantState struct {
	State   bridges.ConnState
	Attempt int
	Reason  string
}

// CheckStates fails tb unless got are exactly the states of want, in order.
func CheckStates(tb testing.TB, got []bridges.BotState, want []WantState) {
	tb.Helper()
	if len(got) != len(want) {
		tb.Fatalf("states = %+v, want %d", got, len(want))
	}
	for i, w := range want {
		if got[i].State != w.State || got[i].Attempt != w.Attempt || !strings.Contains(got[i].Reason, w.Reason) {
			tb.Errorf("state %d = %+v, want %s attempt %d reason with %q", i, got[i], w.State, w.Attempt, w.Reason)
		}
	}
}
