package core

import "github.com/agentbridge/agentbridge/queue"

import "fmt"

import "github.com/agentbridge/agentbridge/store"

import "errors"

import "context"

import "github.com/agentbridge/agentbridge/agent"

import (
	"github.com/agentbridge/agentbridge/agent/pool"
	"github.com/agentbridge/agentbridge/bridges"
)

// livePool is implemented by pools that can list their processes
// (NewAgentPool's adapter does).
type livePool interface {
	Snapshot() []pool.LiveInfo
}

// Snapshot lists the live processes of the underlying pool.
func (a agentPool) Snapshot() []pool.LiveInfo { return a.p.Snapshot() }

// LiveAgents lists the live agent processes with their conversations.
// Pools that cannot list their processes give none.
func (c *Core) LiveAgents(ctx context.Context) ([]bridges.LiveAgent, error) {
	lp, ok := c.pool.(livePool)
	if !ok {
		return nil, nil
	}
	var out []bridges.LiveAgent
	for _, li := range lp.Snapshot() {
		conv, err := c.st.ConversationByID(ctx, li.Key)
		if err != nil {
			if errors.Is(err, store.ErrNotFound) {
				continue // not a conversation (e.g. a process started ahead of time)
			}
			return nil, fmt.Errorf("live agents: %w", err)
		}
		rss, _ := agent.TreeRSS(li.PID) // 0 when it just exited
		out = append(out, bridges.LiveAgent{
			Key: bridges.ConversationKey(conv.Key), ConversationID: li.Key, Profile: li.Profile, PID: li.PID,
			SessionID: li.SessionID, Started: li.Started, LastActive: li.LastActive, Busy: li.Busy, RSSBytes: rss,
			BackgroundTasks: li.BackgroundTasks,
		})
	}
	return out, nil
}

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

// inOperatorAction is a decision taken in the operator view: the bot's
// approver list does not apply (the operator is a bridge admin). done
// receives "" on success or the problem.
type inOperatorAction struct {
	a    bridges.Action
	done chan<- string
}

func (inOperatorAction) isInput() {}

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
	cv := c.convs[key]
	if cv != nil {
		err = cv.q.Push(inOperatorAction{a: a, done: done})
	}
	c.mu.Unlock()
	switch {
	case cv == nil || errors.Is(err, queue.ErrClosed):
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

// onOperatorAction applies an operator's decision; it runs on the worker.
func (cv *conversation) onOperatorAction(ctx context.Context, v inOperatorAction) {
	problem := ""
	cd := cv.cards[v.a.CardID]
	switch {
	case cd == nil:
		problem = "This request is no longer open."
	case cd.kind == cardQuestion:
		problem = "Questions are answered in the conversation."
	case cd.kind == cardSchedule:
		problem = cv.decideSchedule(ctx, cd, v.a.Choice, author{v.a.UserID, v.a.UserName})
	default:
		problem = cv.decide(ctx, cd, v.a.Choice, author{v.a.UserID, v.a.UserName})
	}
	v.done <- problem
}
