// Package screen puts one conversation's running turn on its platform:
// the live message posted and edited as the turn grows, or the platform's
// native stream (bridges.Streamer); the working indicator (bridges.Typer);
// progress lines where nothing is streamed; the bridge's notices; and the
// store's record of a live message a holder's death could leave open, so
// that the next holder closes it (openstream.go).
//
// A Screen belongs to the conversation's worker (bridges/core) and is
// called only from it: it is not safe for concurrent use and starts no
// goroutine. It never arms a timer: where it has to wait (an edit
// interval, the channel's budget) it returns the wait and the worker
// calls it again then. What a turn shows is live.Turn's state; the Screen
// decides when and how it reaches the platform.
package screen

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/delivery"
	"github.com/agentbridge/agentbridge/bridges/core/render"
	"github.com/agentbridge/agentbridge/store"
)

// ErrTenureOver is a post refused because the worker's tenure is over
// (Worker.MayPost).
var ErrTenureOver = errors.New("this replica no longer holds the conversation")

// Worker is what a Screen asks of its conversation's worker.
type Worker interface {
	// MayPost reports whether the worker may still post or edit (with
	// replicas: it still holds the conversation). Asked before every
	// platform call that shows something.
	MayPost() bool
	// PlatformBack is told that a platform call succeeded (outboxes that
	// wait for the platform may try again).
	PlatformBack()
	// Fenced reports whether err is a store write refused because the
	// worker's tenure is over (and ends it then).
	Fenced(err error) bool
}

// Screen is one conversation's view on its platform.
type Screen struct {
	w        Worker
	platform bridges.Platform
	key      bridges.ConversationKey
	id       string // the conversation's store id
	limits   bridges.Limits
	budget   *delivery.Budget
	st       *store.Store // the worker's store (fenced by its tenure with replicas)
	now      func() time.Time
	log      *slog.Logger

	streamRec   string // the message of this worker's stream recorded in the store; "" when none
	statusShown bool   // the working indicator is on
}

// Config is what a Screen is made of.
type Config struct {
	Worker   Worker
	Platform bridges.Platform
	Key      bridges.ConversationKey
	ID       string // the conversation's store id
	// Limits are the platform's; EditInterval must be positive.
	Limits bridges.Limits
	Budget *delivery.Budget // the channel's budget of posts and edits
	Store  *store.Store
	Now    func() time.Time
	Log    *slog.Logger
}

// New returns the screen of a conversation.
func New(c Config) *Screen {
	return &Screen{w: c.Worker, platform: c.Platform, key: c.Key, id: c.ID, limits: c.Limits,
		budget: c.Budget, st: c.Store, now: c.Now, log: c.Log}
}

// SetPlatform makes the screen show on p from now on (a reload replaced
// the bot's adapter).
func (s *Screen) SetPlatform(p bridges.Platform) { s.platform = p }

// Streams reports whether the screen shows a turn while it runs: the
// platform can edit (Editor) and wants no whole answers, and the bot is
// not quiet.
func (s *Screen) Streams(quiet bool) bool {
	_, edits := s.platform.(bridges.Editor)
	return edits && !s.limits.WholeAnswers && !quiet
}

// MaxRunes is the platform's message limit.
func (s *Screen) MaxRunes() int {
	if s.limits.MaxMessageRunes > 0 {
		return s.limits.MaxMessageRunes
	}
	return render.DefaultMaxRunes
}

// Take spends one post or edit of the channel's budget now (urgent: ahead
// of streaming edits) and returns how long a non-urgent one must wait.
func (s *Screen) Take(urgent bool) time.Duration {
	return s.budget.Take(s.now(), s.limits.EditInterval, urgent)
}

// Post posts m into the conversation and stamps the ref with the clock
// (for Limits.EditMaxAge).
func (s *Screen) Post(ctx context.Context, m bridges.Message) (bridges.MessageRef, error) {
	if !s.w.MayPost() {
		return bridges.MessageRef{}, ErrTenureOver
	}
	ref, err := s.platform.Post(ctx, s.key, m)
	if err != nil {
		return ref, err
	}
	s.w.PlatformBack()
	ref.At = s.now()
	return ref, nil
}

// EditOrPost is delivery.EditOrPost on the conversation's platform.
func (s *Screen) EditOrPost(ctx context.Context, ref bridges.MessageRef, m, instead bridges.Message) (bridges.MessageRef, error) {
	if !s.w.MayPost() {
		return bridges.MessageRef{}, ErrTenureOver
	}
	ref, err := delivery.EditOrPost(ctx, s.platform, s.limits, s.now(), ref, m, instead)
	if err == nil {
		s.w.PlatformBack()
	}
	return ref, err
}

// PostNotice posts a short message from the bridge itself, urgent in the
// channel's budget (notices are informational: not retried).
func (s *Screen) PostNotice(ctx context.Context, text string) error {
	if !s.w.MayPost() {
		return ErrTenureOver
	}
	s.Take(true)
	_, err := s.platform.Post(ctx, s.key, bridges.Message{Text: text})
	if err == nil {
		s.w.PlatformBack()
	}
	return err
}
