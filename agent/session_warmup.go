package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/agentbridge/agentbridge/agent/streamjson"
)

// A warm-up turn makes a warm spare answer its first real message about
// as fast as a follow-up. Most of what a fresh CLI process spends on its
// first turn is JavaScript running for the first time (the same code
// takes a third of the time on the next turn), not work tied to the
// session. So a spare runs one throwaway turn against warmModel, a local
// stand-in for the Messages API inside the bridge, and then rewinds its
// conversation to before that turn (rewind_conversation): the session id
// stays the spare's, the first real message starts a conversation with
// nothing before it, and a later --resume restores only the real turns.
//
// The CLI is pointed at warmModel for that one turn by setting
// ANTHROPIC_BASE_URL through its flag settings (apply_flag_settings env),
// and pointed back at once. A profile whose requests would not follow
// ANTHROPIC_BASE_URL (a third-party provider, a unix-socket tunnel, or a
// settings file that sets these) gets no warm-up turn, and a warm-up
// request that did not arrive at warmModel turns the warm-up off for the
// profile: it must never reach a real model.

// warmUpText is the user message of a warm-up turn.
const warmUpText = "Reply with OK."

// warmUpTurns is how many throwaway turns a warm-up runs: the first real
// turn after one still took the CLI ≈ 45 ms to its model request, after
// two ≈ 36 ms, a follow-up's ≈ 15 ms (BENCHMARKS.md, issue #42).
const warmUpTurns = 2

// warmUpResultGrace is how long a warm-up turn waits, after its result,
// for the CLI's receipt that the message is completed.
const warmUpResultGrace = 2 * time.Second

// WarmUp runs warmUpTurns throwaway turns against the local model at modelURL (an
// ANTHROPIC_BASE_URL) and rewinds the conversation to before it; the
// CLI's ANTHROPIC_BASE_URL is then restoreURL ("" = unset: the CLI's
// default). It must be called before the first message, by the only
// reader of Events: it consumes the turn's events. On error the session
// must be discarded: it may still point at the local model, or hold the
// throwaway turns.
func (s *Session) WarmUp(ctx context.Context, modelURL, restoreURL string) error {
	if s.acp != nil {
		return acpUnsupported("warm-up turn")
	}
	setURL := func(url string) error {
		_, err := s.control(ctx, "apply_flag_settings", func(id string) ([]byte, error) {
			return streamjson.EncodeSetEnv(id, map[string]string{"ANTHROPIC_BASE_URL": url})
		})
		return err
	}
	if err := setURL(modelURL); err != nil {
		return fmt.Errorf("warm-up: point the CLI at the local model: %w", err)
	}
	var ids []string
	var err error
	for range warmUpTurns {
		id := uuid.NewString()
		ids = append(ids, id)
		if err = s.Send(ctx, streamjson.UserMessage{UUID: id, Text: warmUpText}); err == nil {
			err = s.awaitWarmUpTurn(ctx, id)
		}
		if err != nil {
			break
		}
	}
	// Pointed back before anything else: no real turn may reach the local model.
	if rerr := setURL(restoreURL); rerr != nil {
		return errors.Join(err, fmt.Errorf("warm-up: point the CLI back at its model: %w", rerr))
	}
	if err != nil {
		return fmt.Errorf("warm-up turn: %w", err)
	}
	// One rewind per turn, the last first: the CLI rewinds only its latest
	// turn (rewinding to the first of two left both in the conversation).
	for _, id := range slices.Backward(ids) {
		if _, err := s.control(ctx, "rewind_conversation", func(rid string) ([]byte, error) { return streamjson.EncodeRewind(rid, id) }); err != nil {
			return fmt.Errorf("warm-up: rewind the conversation: %w", err)
		}
	}
	s.mu.Lock()
	s.st.everSent = false // the session's first real message is still to come
	for _, id := range ids {
		delete(s.st.msgs, id)
	}
	s.mu.Unlock()
	s.changed()
	return nil
}

// awaitWarmUpTurn reads events until the warm-up turn's result and the
// receipt that message id is completed (or warmUpResultGrace after the
// result). A result that is an error fails the warm-up.
func (s *Session) awaitWarmUpTurn(ctx context.Context, id string) error {
	var (
		answered bool // the turn's result arrived
		grace    <-chan time.Time
	)
	for {
		select {
		case ev, ok := <-s.Events():
			if !ok {
				return ErrClosed
			}
			switch e := ev.(type) {
			case streamjson.Result:
				if e.IsError {
					return fmt.Errorf("the local model's turn failed: %s %s", e.Subtype, strings.Join(append([]string{e.Text}, e.Errors...), " "))
				}
				answered = true
				grace = time.After(warmUpResultGrace)
			case streamjson.Lifecycle:
				if e.UUID == id && (e.State == streamjson.LifecycleCompleted || e.State == streamjson.LifecycleCancelled) && answered {
					return nil
				}
			case streamjson.Exit:
				return fmt.Errorf("%w (%s, code %d): %s", ErrClosed, e.Reason, e.Code, LastLine(e.StderrTail))
			}
		case <-grace:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
