// Package assemble makes the conversation core with the features every
// bridge has: spending limits (bridges/features/spend), scheduling (bridges/features/schedule:
// its scheduler, its !schedule command and its agent tools), the agents'
// bridge tools (bridges/features/agenttools, with the features' tools registered),
// the cards with their grants (bridges/features/cards), the chat commands
// (bridges/features/commands, with the features' commands),
// config reloads' part of each conversation (bridges/features/reload), the notice
// to people who may not talk to a bot (bridges/features/strangers) and people's
// files for the agent (bridges/features/uploads).
// The running bridge (bridges/app) and the adapters' test kit
// (bridges/kits/bridgetest) both assemble their core here, so that a feature is
// wired in one place. It sits below bridges/app because the adapters'
// own tests reach it through bridgetest, and app imports the adapters.
package assemble

import (
	"cmp"
	"context"
	"log/slog"
	"slices"
	"time"

	"github.com/agentbridge/agentbridge/bridges/core"
	"github.com/agentbridge/agentbridge/bridges/features/agenttools"
	"github.com/agentbridge/agentbridge/bridges/features/cards"
	"github.com/agentbridge/agentbridge/bridges/features/commands"
	"github.com/agentbridge/agentbridge/bridges/features/reload"
	"github.com/agentbridge/agentbridge/bridges/features/schedule"
	"github.com/agentbridge/agentbridge/bridges/features/spend"
	"github.com/agentbridge/agentbridge/bridges/features/strangers"
	"github.com/agentbridge/agentbridge/bridges/features/uploads"
)

// Core is core.NewCore(o) with o's Spend, Scheduler, Cards, Commands and
// Tools set to the bridge's features (Cards: bridges/features/cards; Commands: the chat commands, the built-in
// ones, then extra, then scheduling's !schedule), Strangers set, Files set unless o sets
// them (with its transcriber) and reload.New() added to its ConvFeatures,
// made from o's Config, Store, Logger, Metrics and Clock (what those leave
// nil defaults as in the features). claim, when set, claims each schedule
// firing so that of several replicas one fires it (the scheduler's
// Options.Claim); nil for one bridge. The features that need more than the
// core's options — worktrees, the hand-off observer, replica ownership,
// the access decision — are the caller's to set in o.
func Core(o core.CoreOptions, claim func(ctx context.Context, firing string) (bool, error), extra ...commands.Command) *core.Core {
	var counter spend.Counter
	var firings schedule.Counter
	if o.Metrics != nil { // a nil *metrics.Metrics in an interface would not be nil
		counter, firings = o.Metrics, o.Metrics
	}
	o.Spend = spend.New(o.Config, o.Store, counter)
	sched := schedule.NewFeature(schedule.Options{Config: o.Config, Store: o.Store, Logger: o.Logger, Metrics: firings,
		Clock: o.Clock, Claim: claim})
	o.Scheduler = sched.Scheduler()
	o.Cards = cards.Feature{}
	o.Commands = commands.NewTable(slices.Concat(extra, sched.Commands())...)
	o.Tools = agenttools.New(sched.Tools()...)
	o.ConvFeatures = append(o.ConvFeatures, reload.New())
	if o.Files == nil {
		o.Files = uploads.New(nil) // no transcription: voice notes are answered so
	}
	now := time.Now
	if o.Clock != nil {
		now = o.Clock.Now
	}
	o.Strangers = strangers.New(cmp.Or(o.Logger, slog.New(slog.DiscardHandler)), now, o.Metrics)
	return core.NewCore(o)
}
