package core

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/agents"
	"github.com/agentbridge/agentbridge/bridges/core/connstate"
	"github.com/agentbridge/agentbridge/bridges/core/worker"
	"github.com/agentbridge/agentbridge/store"
)

// LiveAgents lists the live agent processes with their conversations
// (agents.LiveAgents). Pools that cannot list their processes give none.
func (c *Core) LiveAgents(ctx context.Context) ([]bridges.LiveAgent, error) {
	return agents.LiveAgents(ctx, c.pool, c.st)
}

// WarmSpares reports the warm spares of every profile a configured bot
// uses that keeps spares, by profile name; none when the pool keeps no
// spares (agents.WarmSpares).
func (c *Core) WarmSpares() []bridges.WarmSpareState { return agents.WarmSpares(c.pool, c.cfg()) }

// StopAgent stops the live agent process of a conversation, like an idle
// eviction: a running turn ends, and the conversation's next message
// resumes the session. by names the operator, for the log.
func (c *Core) StopAgent(ctx context.Context, conversationID, by string) error {
	c.log.Info("agent stopped by an operator", "conversation", conversationID, "user", by)
	if err := c.pool.Remove(ctx, conversationID); err != nil {
		return fmt.Errorf("stop agent of %s: %w", conversationID, err)
	}
	return nil
}

// DecideApproval answers the open permission request id (store.Approval
// ID) with choice (ChoiceAllow or ChoiceDeny) on behalf of the operator
// named by; the audit log records OperatorPrefix+by. It waits until the
// conversation applied it and returns ErrNotOpen when the request is no
// longer open.
func (c *Core) DecideApproval(ctx context.Context, id, choice, by string) error {
	if choice != bridges.ChoiceAllow && choice != bridges.ChoiceDeny {
		return fmt.Errorf("decide %s: choice %q: want %q or %q", id, choice, bridges.ChoiceAllow, bridges.ChoiceDeny)
	}
	ap, err := c.st.GetApproval(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("decide %s: %w", id, bridges.ErrNotOpen)
	}
	if err != nil {
		return fmt.Errorf("decide %s: %w", id, err)
	}
	if !ap.Open() {
		return fmt.Errorf("decide %s: %w", id, bridges.ErrNotOpen)
	}
	conv, err := c.st.ConversationByID(ctx, ap.ConversationID)
	if err != nil {
		return fmt.Errorf("decide %s: %w", id, err)
	}
	key := bridges.ConversationKey(conv.Key)
	done := make(chan string, 1)
	a := bridges.Action{Key: key, CardID: id, Choice: choice, UserID: bridges.OperatorPrefix + by, UserName: by + " (web console)"}
	c.mu.Lock()
	w, live := c.convs[key]
	if live {
		err = w.Push(worker.OperatorDecision(a, done))
	}
	c.mu.Unlock()
	switch {
	case !live || worker.Stopped(err):
		return fmt.Errorf("decide %s: %w", id, bridges.ErrNotOpen)
	case err != nil:
		return fmt.Errorf("decide %s: %w: %w", id, bridges.ErrBusy, err)
	}
	select {
	case problem := <-done:
		if problem != "" {
			return fmt.Errorf("decide %s: %w (%s)", id, bridges.ErrNotOpen, problem)
		}
		c.log.Info("approval decided by an operator", "request", id, "choice", choice, "user", by)
		return nil
	case <-ctx.Done():
		return fmt.Errorf("decide %s: %w", id, ctx.Err())
	}
}

// botHandler is the Handler a platform's Run gets: the core, plus the
// StateReporter of that one bot (an adapter cannot report for another).
type botHandler struct {
	*Core
	bot string
}

var _ bridges.StateReporter = botHandler{}

// ReportState implements StateReporter. A connection made (again) is a
// sign that the platform is back (platformBack).
func (h botHandler) ReportState(s bridges.BotState) {
	h.states.Set(h.bot, s)
	if s.State == bridges.ConnConnected {
		h.platformBack(h.bot)
	}
}

// HandleMessage implements bridges.Handler: an event from the platform is
// a sign that it is back (platformBack).
func (h botHandler) HandleMessage(ctx context.Context, m bridges.Inbound) error {
	h.platformBack(h.bot)
	return h.Core.HandleMessage(ctx, m)
}

// HandleAction implements bridges.Handler, like HandleMessage.
func (h botHandler) HandleAction(ctx context.Context, a bridges.Action) error {
	h.platformBack(h.bot)
	return h.Core.HandleAction(ctx, a)
}

// BotStates returns the state of every configured bot that the core runs,
// in configuration order. It is safe to call at any time (empty before
// Run).
func (c *Core) BotStates() []bridges.BotStatus { return c.states.Statuses(c.cfg().Bots) }

// runPlatform runs bot's adapter until ctx ends or it fails for good. A
// failure marks the bot failed and is returned; the other bots go on.
func (c *Core) runPlatform(ctx context.Context, name string, p bridges.Platform) error {
	initial := bridges.ConnRunning
	if p.Limits().ReportsState {
		initial = bridges.ConnStarting
	}
	c.states.Set(name, bridges.BotState{State: initial})
	err := p.Run(ctx, botHandler{c, name})
	if ctx.Err() != nil {
		return nil
	}
	c.states.Set(name, connstate.Failed(err))
	if err == nil {
		err = errors.New("the adapter stopped without an error")
	}
	return fmt.Errorf("platform of bot %s: %w", name, err)
}

var _ bridges.MessageCounter = botHandler{}

// CountMessage implements bridges.MessageCounter.
func (h botHandler) CountMessage(outcome string) { h.opts.Metrics.Message(h.bot, outcome) }
