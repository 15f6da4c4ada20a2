package worker

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/agents"
	"github.com/agentbridge/agentbridge/bridges/core/sessiondir"
	"github.com/agentbridge/agentbridge/config"
)

// This file is the Worker's face to the features that change what runs
// (bridges/features/reload: Worker.Do), and how a feature keeps a part of
// its own in every conversation's worker (the agent replaced after a
// reload): its ConvFeature, registered in CoreOptions.ConvFeatures,
// attaches a ConvHook to each new worker (New), which acts on the
// conversation through Conv's methods below.

// Bot is the name of the conversation's bot.
func (w Worker) Bot() string { return w.cv.key.Bot }

// Do runs f on the worker, after the input queued before it; it waits for
// room in the queue and reports false when the worker has stopped (or ctx
// ended) and f will not run.
func (w Worker) Do(ctx context.Context, f func(ctx context.Context, c Conv)) bool {
	return w.cv.q.PushWait(ctx, inCall{func(ctx context.Context, cv *conversation) { f(ctx, Conv{cv}) }}) == nil
}

// Hooks are the hooks the features attached to this conversation, in
// CoreOptions.ConvFeatures' order (a feature finds its own by type).
func (c Conv) Hooks() []ConvHook { return c.cv.hooks }

// Log is the conversation's logger.
func (c Conv) Log() *slog.Logger { return c.cv.log }

// Now reads the core's clock.
func (c Conv) Now() time.Time { return c.cv.opts.Clock.Now() }

// Key is the conversation's key.
func (c Conv) Key() bridges.ConversationKey { return c.cv.key }

// ConfigGeneration is the generation of the config in force
// (Core.ConfigGeneration).
func (c Conv) ConfigGeneration() config.Generation { return c.cv.host.ConfigGeneration() }

// Spawned reports whether the conversation has an agent process or is
// starting one; Live whether it has one.
func (c Conv) Spawned() bool { return c.cv.sess != nil || c.cv.acquiring }

// Live reports whether the conversation has an agent process.
func (c Conv) Live() bool { return c.cv.sess != nil }

// InTurn reports whether the agent is in a turn: a turn running, a
// message in flight, an open card, or starting.
func (c Conv) InTurn() bool { return c.cv.busyWithTurn() }

// AgentBusy reports whether the live agent runs a turn it started itself
// (on a background task's result).
func (c Conv) AgentBusy() bool { return agents.Busy(c.cv.sess) }

// Notice posts text into the conversation.
func (c Conv) Notice(ctx context.Context, text string) { c.cv.notice(ctx, text) }

// Restart stops the idle agent process: the next message spawns one with
// the profile's settings, resuming the same session.
func (c Conv) Restart(ctx context.Context) { c.cv.restartProcess(ctx) }

// Stop stops the agent process for good, closing its open cards with
// expired as their status (a removed bot).
func (c Conv) Stop(ctx context.Context, expired string) { c.cv.closeSession(ctx, expired) }

// After runs f on the worker after d, unless the core stopped.
func (c Conv) After(d time.Duration, f func(ctx context.Context, c Conv)) {
	q, ctx := c.cv.q, c.cv.host.RunCtx()
	c.cv.opts.Clock.AfterFunc(d, func() {
		_ = q.PushWait(ctx, inCall{func(ctx context.Context, cv *conversation) { f(ctx, Conv{cv}) }})
	})
}

// Refresh takes cfg's entry of the conversation's bot and profile (rules,
// access lists, timeouts apply from the next decision) and the bot's
// current adapter. A bot or profile cfg lacks keeps its last (a removed
// bot keeps its entry while it drains).
func (c Conv) Refresh(cfg *config.Config) {
	cv := c.cv
	if b := cfg.Bot(cv.key.Bot); b != nil {
		cv.bot = b
	}
	if p := cv.host.Platform(cv.key.Bot); p != nil && p != cv.platform {
		cv.platform = p
		cv.screen.SetPlatform(p)
	}
	if p := cfg.Agents[cv.profile.Name]; p != nil {
		cv.profile = p
	}
	if o := cv.row.AgentOverride; o != "" && !slices.Contains(agents.ProfileChoices(cfg, cv.bot, cv.row), o) {
		cv.agentGone = o // back to the default at the next message (revertAgent)
	}
}

// Platform is the adapter of the conversation's bot.
func (c Conv) Platform() bridges.Platform { return c.cv.platform }

// UploadsDir is where the conversation's session keeps the files people
// send (an absolute path), "" when the bridge keeps no session state (no
// data_dir) or there is no session yet.
func (c Conv) UploadsDir() string {
	return sessiondir.UploadsDir(c.cv.host.Config().DataDir, c.cv.row.SessionID)
}
