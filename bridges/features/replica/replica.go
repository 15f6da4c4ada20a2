// Package replica lets several bridge processes on one PostgreSQL database
// form one bridge (config replicas). Each conversation is run by the
// replica holding its lease (coord.Coordinator.AcquireLease, "conversation:<id>"):
// it runs the agent, posts the replies and decides the cards. Work that
// another replica receives is recorded in the shared ledger there and
// handed over by a signal (coord.Coordinator.Notify); a poll finds what signals miss
// and the conversations of replicas that died (their leases expired).
//
// Writes carry the fencing token: Claim hands the core the tenure's lease,
// and the core writes the conversation through a store fenced by it
// (store.Store.Fenced), so a replica that lost the lease — paused past it,
// cut off from the database — cannot overwrite what the new holder wrote.
// Holding tells the core, before each post, whether the lease is still
// held by this process's clock.
//
// Replica implements ownership.Ownership; bridges/app wires it. The core does
// not import this package.
package replica

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/ownership"
	"github.com/agentbridge/agentbridge/store"
)

// Channel is the signal channel replicas tell each other about work on.
const Channel = "agentbridge_work"

// maxPoll bounds the poll interval: a dead replica's conversations are
// taken at most this long after their leases expire.
const maxPoll = time.Second

// Core is what a replica needs of the conversation core (*core.Core).
type Core interface {
	// Poke claims conversation id and hands it its pending work.
	Poke(ctx context.Context, id string)
	// HandleForwardedAction routes a click another replica received.
	HandleForwardedAction(ctx context.Context, a bridges.Action) error
	// LiveConversations lists the conversations with a worker here.
	LiveConversations() map[string]bool
	// Drop stops conversation id's worker and agent here at once.
	Drop(ctx context.Context, id string)
	// WakeWaiting posts now the replies of bot that wait here for its
	// platform: another replica saw it answer again (back.go).
	WakeWaiting(bot string)
}

// Options configure a Replica.
type Options struct {
	Store  *store.Store  // required, shared by every replica
	ID     string        // this process's owner id; default NewID()
	Lease  time.Duration // a conversation lease's time; required
	Logger *slog.Logger  // default discards
	// Pin, when set, names per bot a lease that a replica must hold to
	// take that bot's conversations, "" for none: a WhatsApp bot's
	// device (connlease.Resource("whatsapp", bot)). While another
	// replica holds it, Claim refuses (the work is forwarded), and a held
	// conversation is handed over at the next renewal (pin.go).
	Pin func(bot string) string
}

// Replica is this process's share of the bridge: the conversation leases
// it holds. Create it with New, start it with Run; its Ownership methods
// may be called before Run (they do not need it).
type Replica struct {
	st    *store.Store
	id    string
	lease time.Duration
	log   *slog.Logger
	pin   func(bot string) string

	ready    chan struct{} // closed once Run listens for signals
	stopping atomic.Bool   // a graceful stop began: take no new conversation (Stopping)

	replies  replies        // the Reply of clicks forwarded from here (replies.go)
	back     backState      // who waits for which platform (back.go)
	replying sync.WaitGroup // private answers being sent; Run waits for them

	mu   sync.Mutex
	held map[string]*held // by conversation id
}

// held is a lease this replica holds.
type held struct {
	lease   store.Lease
	claimed time.Time // last Claim: a worker is about to start, keep it
	pin     string    // the lease its bot's conversations follow (Options.Pin)
}

// New returns a replica; nothing runs until Run.
func New(opts Options) (*Replica, error) {
	if opts.Store == nil || opts.Lease <= 0 {
		return nil, errors.New("new replica: Store and Lease are required")
	}
	if opts.ID == "" {
		opts.ID = NewID()
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Replica{st: opts.Store, id: opts.ID, lease: opts.Lease, log: opts.Logger.With("replica", opts.ID), pin: opts.Pin,
		held: make(map[string]*held), ready: make(chan struct{})}, nil
}

// NewID returns an owner id unique to this process start: host, pid and a
// random part (a restarted replica must not inherit its predecessor's
// leases).
func NewID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "host"
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b))
}

// Ready is closed once Run listens for other replicas' signals.
func (r *Replica) Ready() <-chan struct{} { return r.ready }

// ID is this replica's owner id.
func (r *Replica) ID() string { return r.id }

// Held lists the conversations whose leases this replica holds, sorted.
func (r *Replica) Held() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	ids := make([]string, 0, len(r.held))
	for id := range r.held {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

func resource(id string) string { return "conversation:" + id }

// Stopping tells the replica that a graceful stop began: from now on it
// takes no conversation it does not hold (Claim refuses; the others take
// them), while it keeps and renews those it holds until Release.
func (r *Replica) Stopping() { r.stopping.Store(true) }

// Claim implements ownership.Ownership: it takes or continues conversation id's
// lease. Recover is true for a new tenure (not one this replica
// continues); Lease is the tenure's lease, which fences the core's writes.
// Once Stopping, it continues held leases only.
func (r *Replica) Claim(ctx context.Context, id string) (ownership.Tenure, error) {
	now := time.Now()
	r.mu.Lock()
	h := r.held[id]
	if h == nil && r.stopping.Load() {
		r.mu.Unlock()
		return ownership.Tenure{}, nil
	}
	if h != nil && now.Add(r.lease/3).Before(h.lease.ValidUntil) {
		h.claimed = now
		l := h.lease
		r.mu.Unlock()
		return ownership.Tenure{OK: true, Lease: &l}, nil
	}
	r.mu.Unlock()
	pin, err := r.pinFor(ctx, id)
	if err != nil {
		return ownership.Tenure{}, fmt.Errorf("claim: %w", err)
	}
	if ok, err := r.mayTake(ctx, pin); err != nil {
		return ownership.Tenure{}, fmt.Errorf("claim: %w", err)
	} else if !ok {
		return ownership.Tenure{}, nil // another replica holds the bot's device: it takes the conversation
	}
	l, err := r.st.AcquireLease(ctx, resource(id), r.id, r.lease)
	if errors.Is(err, store.ErrLeaseHeld) {
		return ownership.Tenure{}, nil
	}
	if err != nil {
		return ownership.Tenure{}, fmt.Errorf("claim: %w", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	prev := r.held[id]
	r.held[id] = &held{lease: l, claimed: now, pin: pin}
	recover := prev == nil || prev.lease.Token != l.Token
	if recover {
		r.log.Info("conversation taken", "conversation", id, "token", l.Token)
	}
	return ownership.Tenure{OK: true, Recover: recover, Lease: &l}, nil
}

// Holding implements ownership.Ownership: whether this replica holds
// conversation id's lease and, on its own clock, has not passed the time
// by which it must have renewed it (store.Lease.ValidUntil). It asks
// nothing of the database.
func (r *Replica) Holding(id string) bool {
	l, ok := r.leaseOf(id)
	return ok && time.Now().Before(l.ValidUntil)
}

// firingClaim is how long a schedule firing's claim lasts: far longer
// than a firing takes to be recorded, after which nobody fires it again.
const firingClaim = 24 * time.Hour

// ClaimFiring claims one firing of a schedule for this replica (see
// the Claim option of bridges/features/schedule): true for exactly one of the
// replicas asking.
func (r *Replica) ClaimFiring(ctx context.Context, firing string) (bool, error) {
	_, err := r.st.AcquireLease(ctx, firing, r.id, firingClaim)
	if errors.Is(err, store.ErrLeaseHeld) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("claim %s: %w", firing, err)
	}
	return true, nil
}

// leaseOf returns the lease held for conversation id, if any.
func (r *Replica) leaseOf(id string) (store.Lease, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if h := r.held[id]; h != nil {
		return h.lease, true
	}
	return store.Lease{}, false
}

// signal is a payload on Channel.
type signal struct {
	Conv     string                     `json:"c,omitempty"`  // work for this conversation's holder
	Action   *click                     `json:"a,omitempty"`  // a click
	Resume   *ownership.SessionRelease  `json:"rs,omitempty"` // a !resume asks Conv's holder for its session (resume.go)
	Resumed  *ownership.SessionReleased `json:"rd,omitempty"` // the answer, for Conv's holder
	Reply    *privateReply              `json:"p,omitempty"`  // a private answer to a forwarded click (replies.go)
	Released bool                       `json:"r,omitempty"`  // a replica handed its leases over: poll
	Wait     string                     `json:"w,omitempty"`  // replies of this bot wait on the sender (back.go)
	Back     string                     `json:"b,omitempty"`  // this bot's platform answered the sender (back.go)
	From     string                     `json:"f"`
}

// click is a bridges.Action in a signal. Its Reply (a private answer
// through the receiving replica's connection) stays there, named by a
// token (replies.go).
type click struct {
	Key      bridges.ConversationKey `json:"k"`
	CardID   string                  `json:"id"`
	Choice   string                  `json:"ch"`
	UserID   string                  `json:"u"`
	UserName string                  `json:"n,omitempty"`
	Reply    string                  `json:"rp,omitempty"` // the token of the kept Reply
}

// Forward implements ownership.Ownership: it signals the holder of id. A lost
// signal costs only time: the poll finds the work.
func (r *Replica) Forward(ctx context.Context, id string, a *bridges.Action) {
	s := signal{Conv: id}
	if a != nil {
		s.Action = &click{Key: a.Key, CardID: a.CardID, Choice: a.Choice, UserID: a.UserID, UserName: a.UserName}
		if a.Reply != nil {
			s.Action.Reply = r.replies.keep(a.Reply, time.Now())
		}
	}
	r.notify(ctx, s)
}

func (r *Replica) notify(ctx context.Context, s signal) {
	if err := r.send(ctx, s); err != nil {
		r.log.Warn("signal other replicas", "conversation", s.Conv, "err", err)
	}
}

// send signals s to the other replicas.
func (r *Replica) send(ctx context.Context, s signal) error {
	s.From = r.id
	b, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("encode a signal: %w", err)
	}
	return r.st.Notify(ctx, Channel, string(b))
}
