package bridgetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/agentbridge/agentbridge/agent"
	"github.com/agentbridge/agentbridge/agent/pool"
	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges/core/agents"
)

// Script plays the agent for one user message on a FakeSession. Messages are
// handed to the script one at a time, in order, on the session's own
// goroutine (like the CLI's turn queue); it emits events with s.Emit.
type Script func(s *FakeSession, m streamjson.UserMessage)

// Pong is the default script: it starts the message, streams
// "pong: <text>" and ends the turn with a result.
func Pong(s *FakeSession, m streamjson.UserMessage) {
	s.Reply(m, "pong: "+m.Text)
}

// Acquisition records one Acquire call.
type Acquisition struct {
	Key   string
	Limit pool.Limit
	Opts  agent.Options
}

// FakePool is a agents.Pool of FakeSessions. It is safe for
// concurrent use.
type FakePool struct {
	script Script

	mu       sync.Mutex
	live     map[string]*FakeSession
	all      []*FakeSession
	acquires []Acquisition
	fail     error
	evict    int // sessions to evict at their first Send
	changed  chan struct{}
	closed   bool // Close ran: no more sessions, as the real pool
}

var _ agents.Pool = (*FakePool)(nil)

// NewFakePool returns a pool whose sessions run script (Pong if nil).
func NewFakePool(script Script) *FakePool {
	if script == nil {
		script = Pong
	}
	return &FakePool{script: script, live: make(map[string]*FakeSession), changed: make(chan struct{})}
}

// FailAcquire makes Acquire fail with err (nil restores success).
func (p *FakePool) FailAcquire(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fail = err
}

// FailSends makes the next n new sessions behave like a session the pool
// evicted between Acquire and the first write: Send fails and the session
// exits with Exit{Expected: true, Reason: "evicted"}.
func (p *FakePool) FailSends(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.evict = n
}

// Acquire implements agents.Pool. Like agent.Start, it runs
// opts.Prepare before it "spawns" a session (not when key has a live one)
// and records the prepared options.
func (p *FakePool) Acquire(ctx context.Context, key string, limit pool.Limit, opts agent.Options) (agents.Session, error) {
	p.mu.Lock()
	live := p.live[key]
	p.mu.Unlock()
	var prepErr error
	if prepare := opts.Prepare; prepare != nil && (live == nil || live.Exited()) {
		opts.Prepare = nil
		if prepared, err := prepare(ctx, opts); err != nil {
			prepErr = fmt.Errorf("start agent %s: prepare: %w", opts.SessionID, err)
		} else {
			opts = prepared
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.acquires = append(p.acquires, Acquisition{Key: key, Limit: limit, Opts: opts})
	if prepErr != nil {
		return nil, prepErr
	}
	if p.fail != nil {
		return nil, p.fail
	}
	if p.closed {
		// A session made now would never be closed: whoever drains it
		// (a conversation that stopped meanwhile) would wait forever.
		return nil, fmt.Errorf("acquire agent for %s: %w", key, pool.ErrClosed)
	}
	if s := p.live[key]; s != nil && !s.Exited() {
		return s, nil
	}
	s := newFakeSession(key, opts, p.script, func(s *FakeSession) {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.live[key] == s {
			delete(p.live, key)
		}
	})
	if p.evict > 0 {
		p.evict--
		s.evictOnSend = true
	}
	p.live[key] = s
	p.all = append(p.all, s)
	close(p.changed)
	p.changed = make(chan struct{})
	return s, nil
}

// Remove implements agents.Pool: it closes key's session.
func (p *FakePool) Remove(ctx context.Context, key string) error {
	p.mu.Lock()
	s := p.live[key]
	delete(p.live, key)
	p.mu.Unlock()
	if s != nil {
		s.Close("closed")
	}
	return nil
}

// Close closes every live session; Acquire fails from now on
// (pool.ErrClosed), as the real pool's.
func (p *FakePool) Close() {
	p.mu.Lock()
	p.closed = true
	live := make([]*FakeSession, 0, len(p.live))
	for _, s := range p.live {
		live = append(live, s)
	}
	clear(p.live)
	p.mu.Unlock()
	for _, s := range live {
		s.Close("closed")
	}
}

// Acquisitions returns every Acquire call so far.
func (p *FakePool) Acquisitions() []Acquisition {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.acquires)
}

// Sessions returns every session created so far, oldest first.
func (p *FakePool) Sessions() []*FakeSession {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.all)
}

// WaitSession waits until at least n sessions were created and returns the
// n-th (1-based).
func (p *FakePool) WaitSession(ctx context.Context, n int) (*FakeSession, error) {
	for {
		p.mu.Lock()
		if len(p.all) >= n {
			s := p.all[n-1]
			p.mu.Unlock()
			return s, nil
		}
		ch := p.changed
		p.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, fmt.Errorf("bridgetest: waiting for session %d: %w", n, ctx.Err())
		}
	}
}

// WaitSessionFor waits until at least n sessions were created for key and
// returns the n-th (1-based) of them.
func (p *FakePool) WaitSessionFor(ctx context.Context, key string, n int) (*FakeSession, error) {
	for {
		p.mu.Lock()
		var mine []*FakeSession
		for _, s := range p.all {
			if s.Key == key {
				mine = append(mine, s)
			}
		}
		ch := p.changed
		p.mu.Unlock()
		if len(mine) >= n {
			return mine[n-1], nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, fmt.Errorf("bridgetest: waiting for session %d of %s: %w", n, key, ctx.Err())
		}
	}
}

// Decision is a recorded Respond call.
type Decision struct {
	RequestID string
	streamjson.Decision
}

// FakeSession is a scripted agents.Session.
type FakeSession struct {
	Key  string
	Opts agent.Options

	script      Script
	onExit      func(*FakeSession)
	inbox       chan streamjson.UserMessage
	done        chan struct{} // closed at exit
	emitMu      sync.Mutex    // serialises Emit with the final Exit
	events      chan streamjson.Event
	exited      bool
	mu          sync.Mutex
	evictOnSend bool
	sent        []streamjson.UserMessage
	decided     []Decision
	waiting     map[string]chan streamjson.Decision
	calls       []string // interrupt, set_model X, set_permission_mode X
	changed     chan struct{}
}

var _ agents.Session = (*FakeSession)(nil)

func newFakeSession(key string, opts agent.Options, script Script, onExit func(*FakeSession)) *FakeSession {
	s := &FakeSession{
		Key: key, Opts: opts, script: script, onExit: onExit,
		inbox:   make(chan streamjson.UserMessage, 1024),
		done:    make(chan struct{}),
		events:  make(chan streamjson.Event, 1024),
		waiting: make(map[string]chan streamjson.Decision),
		changed: make(chan struct{}),
	}
	go s.run()
	return s
}

// run hands messages to the script one at a time.
func (s *FakeSession) run() {
	for {
		select {
		case m := <-s.inbox:
			s.script(s, m)
		case <-s.done:
			return
		}
	}
}

// Send implements agents.Session.
func (s *FakeSession) Send(ctx context.Context, m streamjson.UserMessage) error {
	s.mu.Lock()
	if s.evictOnSend {
		s.mu.Unlock()
		s.Close("evicted")
		return errors.New("bridgetest: session closed")
	}
	if s.Exited() {
		s.mu.Unlock()
		return errors.New("bridgetest: session exited")
	}
	s.sent = append(s.sent, m)
	s.notifyLocked()
	s.mu.Unlock()
	s.inbox <- m
	return nil
}

// Respond implements agents.Session.
func (s *FakeSession) Respond(ctx context.Context, requestID string, d streamjson.Decision) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.decided = append(s.decided, Decision{RequestID: requestID, Decision: d})
	if ch, ok := s.waiting[requestID]; ok {
		ch <- d
		delete(s.waiting, requestID)
	}
	s.notifyLocked()
	return nil
}

// Interrupt implements agents.Session (recorded only; scripts may
// look at Calls).
func (s *FakeSession) Interrupt(ctx context.Context) error { return s.record("interrupt") }

// SetModel implements agents.Session.
func (s *FakeSession) SetModel(ctx context.Context, model string) error {
	return s.record("set_model " + model)
}

// SetPermissionMode implements agents.Session.
func (s *FakeSession) SetPermissionMode(ctx context.Context, mode string) error {
	return s.record("set_permission_mode " + mode)
}

func (s *FakeSession) record(call string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, call)
	s.notifyLocked()
	return nil
}

// Events implements agents.Session.
func (s *FakeSession) Events() <-chan streamjson.Event { return s.events }

// Emit sends an event to the core; it reports false after the exit.
func (s *FakeSession) Emit(ev streamjson.Event) bool {
	s.emitMu.Lock()
	defer s.emitMu.Unlock()
	if s.exited {
		return false
	}
	s.events <- ev
	return true
}

// Reply plays a whole turn for m as the CLI does: lifecycle started,
// init, the text as deltas and a block, a result, lifecycle completed.
func (s *FakeSession) Reply(m streamjson.UserMessage, text string) {
	s.Emit(streamjson.Lifecycle{UUID: m.UUID, State: streamjson.LifecycleStarted})
	s.Emit(streamjson.Init{SessionID: s.Opts.SessionID})
	s.Emit(streamjson.TextDelta{Text: text})
	s.Emit(streamjson.AssistantText{Text: text})
	s.Emit(streamjson.Result{Subtype: "success", Text: text, SessionID: s.Opts.SessionID, Duration: 20 * time.Millisecond, CostUSD: 0.001, NumTurns: 1})
	s.Emit(streamjson.Lifecycle{UUID: m.UUID, State: streamjson.LifecycleCompleted})
}

// Ask emits a permission request and waits for the core's answer. ok is
// false if the session exited first.
func (s *FakeSession) Ask(req streamjson.PermissionRequest) (d streamjson.Decision, ok bool) {
	ch := make(chan streamjson.Decision, 1)
	s.mu.Lock()
	s.waiting[req.RequestID] = ch
	s.mu.Unlock()
	if !s.Emit(req) {
		return streamjson.Decision{}, false
	}
	select {
	case d := <-ch:
		return d, true
	case <-s.done:
		return streamjson.Decision{}, false
	}
}

// Kill ends the session as a crash: Exit{Expected: false, Code: 137}.
func (s *FakeSession) Kill() { s.exit(streamjson.Exit{Code: 137, Expected: false, Reason: "killed"}) }

// End ends the session with e, e.g. an exit after a kill by the memory
// cap (Exit.Limit).
func (s *FakeSession) End(e streamjson.Exit) { s.exit(e) }

// Close ends the session as a requested stop.
func (s *FakeSession) Close(reason string) {
	s.exit(streamjson.Exit{Code: 0, Expected: true, Reason: reason})
}

func (s *FakeSession) exit(e streamjson.Exit) {
	s.emitMu.Lock()
	if s.exited {
		s.emitMu.Unlock()
		return
	}
	s.mu.Lock()
	s.exited = true
	s.mu.Unlock()
	close(s.done)
	s.events <- e
	close(s.events)
	s.emitMu.Unlock()
	s.onExit(s)
}

// Exited reports whether the session ended.
func (s *FakeSession) Exited() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// Sent returns the messages the core wrote, in order.
func (s *FakeSession) Sent() []streamjson.UserMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.sent)
}

// Decisions returns every Respond call, in order.
func (s *FakeSession) Decisions() []Decision {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.decided)
}

// Calls returns the control calls (interrupt, set_model X, ...), in order.
func (s *FakeSession) Calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// WaitSent waits until the core wrote at least n messages.
func (s *FakeSession) WaitSent(ctx context.Context, n int) ([]streamjson.UserMessage, error) {
	for {
		s.mu.Lock()
		if len(s.sent) >= n {
			out := slices.Clone(s.sent)
			s.mu.Unlock()
			return out, nil
		}
		ch := s.changed
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, fmt.Errorf("bridgetest: waiting for %d sent messages: %w", n, ctx.Err())
		}
	}
}

func (s *FakeSession) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}
