package bridges_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/bridges"
)

// stateRecorder is a Handler that only records reported states.
type stateRecorder struct {
	bridges.Handler // nil: the reporter calls nothing else
	states          []bridges.BotState
}

func (r *stateRecorder) ReportState(s bridges.BotState) { r.states = append(r.states, s) }

// The reporter reports each step once, counts failed attempts in a row
// (reset by a connection), reports nothing for a drop while not connected,
// and stops reporting when the cap is reached.
func TestConnReporter(t *testing.T) {
	rec := &stateRecorder{}
	r := bridges.NewConnReporter(rec, 3)
	r.Starting()
	if !r.Failed("dial: refused") || !r.Failed("dial: refused again") {
		t.Fatal("Failed gave up below the cap")
	}
	r.Lost("not connected: nothing to report")
	r.Connected()
	if !r.Up() || r.Failures() != 0 {
		t.Errorf("after Connected: up %v, failures %d", r.Up(), r.Failures())
	}
	r.Lost("socket dropped")
	r.Failed("timeout 1")
	r.Failed("timeout 2")
	if r.Failed("timeout 3") {
		t.Error("Failed retried at the cap")
	}
	want := []bridges.BotState{
		{State: bridges.ConnStarting},
		{State: bridges.ConnReconnecting, Reason: "dial: refused", Attempt: 1},
		{State: bridges.ConnReconnecting, Reason: "dial: refused again", Attempt: 2},
		{State: bridges.ConnConnected},
		{State: bridges.ConnReconnecting, Reason: "socket dropped"},
		{State: bridges.ConnReconnecting, Reason: "timeout 1", Attempt: 1},
		{State: bridges.ConnReconnecting, Reason: "timeout 2", Attempt: 2},
	}
	if !reflect.DeepEqual(rec.states, want) {
		t.Errorf("states:\n got %+v\nwant %+v", rec.states, want)
	}
	last := errors.New("timeout 3")
	f := r.GaveUp("Example", last)
	if f.Remedy != bridges.RemedyRestart || !strings.Contains(f.Reason, "Example after 3 failed attempts") ||
		f.Hint == "" || !errors.Is(f, last) {
		t.Errorf("GaveUp = %+v", f)
	}
}

// Without a cap the reporter never gives up; a handler that takes no
// reports is fine.
func TestConnReporterUncapped(t *testing.T) {
	r := bridges.NewConnReporter(noReports{}, 0)
	for range 1000 {
		if !r.Failed("down") {
			t.Fatal("an uncapped reporter gave up")
		}
	}
}

// noReports is a Handler without ReportState.
type noReports struct{ bridges.Handler }
