// Package assemble makes the conversation core with the features every
// bridge has: spending limits (bridges/spend), scheduling (bridges/schedule:
// its scheduler, its !schedule command and its agent tools) and the agents'
// bridge tools (bridges/agenttools, with the features' tools registered).
// The running bridge (bridges/app) and the adapters' test kit
// (bridges/bridgetest) both assemble their core here, so that a feature is
// wired in one place. It sits below bridges/app because the adapters'
// own tests reach it through bridgetest, and app imports the adapters.
package assemble

import (
	"context"

	"github.com/agentbridge/agentbridge/bridges/agenttools"
	"github.com/agentbridge/agentbridge/bridges/core"
	"github.com/agentbridge/agentbridge/bridges/schedule"
	"github.com/agentbridge/agentbridge/bridges/spend"
)

// Core is core.NewCore(o) with o's Spend, Scheduler, Commands and Tools
// set to the bridge's features, made from o's Config, Store, Logger,
// Metrics and Clock (what those leave nil defaults as in the features).
// claim, when set, claims each schedule firing so that of several replicas
// one fires it (the scheduler's Options.Claim); nil for one bridge. The
// features that need more than the core's options — worktrees,
// transcription, the hand-off observer, replica ownership, the access
// decision — are the caller's to set in o.
func Core(o core.CoreOptions, claim func(ctx context.Context, firing string) (bool, error)) *core.Core {
	var counter spend.Counter
	var firings schedule.Counter
	if o.Metrics != nil { // a nil *core.Metrics in an interface would not be nil
		counter, firings = o.Metrics, o.Metrics
	}
	o.Spend = spend.New(o.Config, o.Store, counter)
	sched := schedule.NewFeature(schedule.Options{Config: o.Config, Store: o.Store, Logger: o.Logger, Metrics: firings,
		Clock: o.Clock, Claim: claim})
	o.Scheduler = sched.Scheduler()
	o.Commands = append(o.Commands, sched.Commands()...)
	o.Tools = agenttools.New(sched.Tools()...)
	return core.NewCore(o)
}
