// Package core is the platform-neutral conversation core: Core implements
// bridges.Handler for every adapter, records each message in the ledger
// (Submit, the one entry point for people, schedules and the agent's
// tools), and runs one worker per active conversation that drives its
// agent process: turns, delivery through the outbox, recovery after
// crashes, approvals and questions, and chat commands.
//
// Its files stand in layers, each using the ones below it: seams.go (what
// features fill, shared types) and state.go (the core's and the workers'
// state, the Conv handle) at the bottom; conversation.go (the worker's
// primitives); the worker's parts (turn.go: the running turn and its
// screen; agents.go, deliver.go, agentevents.go, recovery.go,
// ownership.go, resume.go, limits.go, …) and the Conv methods features
// call (features.go, commands.go, cards.go, attachments.go); worker.go
// (a worker's dispatch) and run.go (Run, the Handler entry points) on
// top. The worker's own parts with a face of their own live in the
// subfolders (agents, screen, delivery, live, render, …).
package core

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/store"
)

var _ bridges.Handler = (*Core)(nil)

// WaitSessionReaders waits until the core's readers of agent sessions'
// events have returned. A reader forwards a live session's events to its
// conversation, or drains them once nobody else will (the conversation
// stopped; agent processes outlive Run: the pool's owner closes them), so
// readers end when their sessions' event channels close. Call it after
// Run has returned and the pool is closed; no reader starts afterwards.
func (c *Core) WaitSessionReaders() { c.readers.Close() }

// Owns implements Handler: whether the bot has a conversation at key.
func (c *Core) Owns(ctx context.Context, key bridges.ConversationKey) (bool, error) {
	c.mu.Lock()
	_, live := c.convs[key]
	c.mu.Unlock()
	if live {
		return true, nil
	}
	_, err := c.st.GetConversation(ctx, storeKey(key))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, store.ErrNotFound):
		return false, nil
	default:
		return false, fmt.Errorf("owns %s: %w", key, err)
	}
}

// ActiveConversations returns how many conversation workers are running.
func (c *Core) ActiveConversations() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.convs)
}

// replyPrivately answers a clicker through Action.Reply, if the platform
// offers it.
func replyPrivately(ctx context.Context, log *slog.Logger, a bridges.Action, text string) {
	if a.Reply == nil {
		return
	}
	if err := a.Reply(ctx, text); err != nil {
		log.Warn("private reply to a click failed", "key", a.Key, "user", a.UserID, "err", err)
	}
}

func storeKey(k bridges.ConversationKey) store.ConversationKey { return store.ConversationKey(k) }
