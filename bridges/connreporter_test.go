package bridges_test

import (
	"reflect"
	"testing"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/kits/platformtest"
)

// The reporter reports each step once, counts failed attempts in a row
// (reset by a connection) and reports nothing for a drop while not
// connected.
func TestConnReporter(t *testing.T) {
	rec := &platformtest.StateRecorder{}
	r := bridges.NewConnReporter(rec)
	r.Starting()
	r.Failed("dial: refused")
	r.Failed("dial: refused again")
	r.Lost("not connected: nothing to report")
	r.Connected()
	if !r.Up() || r.Failures() != 0 {
		t.Errorf("after Connected: up %v, failures %d", r.Up(), r.Failures())
	}
	r.Lost("socket dropped")
	r.Failed("timeout 1")
	r.Failed("timeout 2")
	want := []bridges.BotState{
		{State: bridges.ConnStarting},
		{State: bridges.ConnReconnecting, Reason: "dial: refused", Attempt: 1},
		{State: bridges.ConnReconnecting, Reason: "dial: refused again", Attempt: 2},
		{State: bridges.ConnConnected},
		{State: bridges.ConnReconnecting, Reason: "socket dropped"},
		{State: bridges.ConnReconnecting, Reason: "timeout 1", Attempt: 1},
		{State: bridges.ConnReconnecting, Reason: "timeout 2", Attempt: 2},
	}
	if !reflect.DeepEqual(rec.States(), want) {
		t.Errorf("states:\n got %+v\nwant %+v", rec.States(), want)
	}
}

// The reporter never gives up, however many attempts fail; a handler
// that takes no reports is fine.
func TestConnReporterNeverGivesUp(t *testing.T) {
	r := bridges.NewConnReporter(noReports{})
	for range 100000 {
		r.Failed("down")
	}
	if r.Failures() != 100000 || r.Up() {
		t.Errorf("failures %d, up %v", r.Failures(), r.Up())
	}
}

// noReports is a Handler without ReportState.
type noReports struct{ bridges.Handler }
