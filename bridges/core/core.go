// Package core is the platform-neutral conversation core: it routes
// conversations. Core implements bridges.Handler for every adapter,
// records each message in the ledger (Submit, the one entry point for
// people, schedules and the agent's tools), and runs one worker per
// active conversation (bridges/core/worker: one conversation's life, its
// agent process, turns, replies, cards and commands), started when work
// comes for it and retired when idle; it recovers what a previous run
// left, shares the conversations among replicas, and lets a reload swap
// the bots it runs.
//
// Its files stand in layers, each using the ones below it: seams.go (what
// features fill, shared types) and state.go (the core's state) at the
// bottom; host.go (the core as its workers reach it); the core's parts
// (agents.go, outbox.go, ownership.go, recovery.go, resume.go,
// warmresume.go, operator.go, features.go: what the features above it
// change while it runs) and submit.go; run.go (Run, the Handler entry
// points, handing an input to a worker) on top.
package core

import (
	"context"
	"errors"
	"fmt"

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

func storeKey(k bridges.ConversationKey) store.ConversationKey { return store.ConversationKey(k) }
