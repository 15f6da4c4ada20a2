// Package bridgetest provides test doubles for the conversation core: an
// in-memory Platform that records posts, edits and cards and can click
// buttons as any user, a scripted fake agent pool, and a manual clock.
package bridgetest

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
)

// Msg is a message as the platform shows it now, with its history.
type Msg struct {
	Ref     bridges.MessageRef
	Key     bridges.ConversationKey
	Text    string
	CardID  string
	Buttons []bridges.Button
	ReplyTo string   // Message.ReplyTo it was posted with
	Edits   int      // times it was edited
	History []string // every text it showed, oldest first
	Posted  time.Time
	File    *bridges.Upload // the attachment of an UploadFile; nil for text
}

// HasButton reports whether the message shows a button with id.
func (m Msg) HasButton(id string) bool {
	return slices.ContainsFunc(m.Buttons, func(b bridges.Button) bool { return b.ID == id })
}

// Call is one Post or Edit the platform received.
type Call struct {
	Op  string // "post", "edit", "typing-on" or "typing-off"
	Key bridges.ConversationKey
	At  time.Time
}

// Private is a message shown to one user only (bridges.Ephemeral).
type Private struct {
	Key  bridges.ConversationKey
	User string
	Text string
	At   time.Time
}

// Platform is an in-memory bridges.Platform. It is safe for concurrent use.
type Platform struct {
	limits bridges.Limits
	clock  func() time.Time

	mu       sync.Mutex
	handler  bridges.Handler
	ready    chan struct{} // closed once Run has a handler
	msgs     []*Msg
	byID     map[string]*Msg
	calls    []Call
	typing   map[bridges.ConversationKey]bool
	changed  chan struct{}
	failPost func(bridges.ConversationKey, bridges.Message) error
	failEdit func(bridges.MessageRef, bridges.Message) error
	observe  func(Call, Msg)
	files    map[string][]byte
	privates []Private
	nextID   int
	idem     map[idemKey]*Msg // the message posted under each Message.Idem
	lookups  int              // Posts with Retry that found their Idem
}

// idemKey is a Message.Idem within its conversation.
type idemKey struct {
	key  bridges.ConversationKey
	idem string
}

var (
	_ bridges.Platform    = (*Platform)(nil)
	_ bridges.Editor      = (*Platform)(nil)
	_ bridges.Typer       = (*Platform)(nil)
	_ bridges.FileFetcher = (*Platform)(nil)
	_ bridges.Ephemeral   = (*Platform)(nil)
)

// New returns a platform with the given limits.
func New(limits bridges.Limits) *Platform {
	return &Platform{
		limits:  limits,
		clock:   time.Now,
		ready:   make(chan struct{}),
		byID:    make(map[string]*Msg),
		typing:  make(map[bridges.ConversationKey]bool),
		changed: make(chan struct{}),
		idem:    make(map[idemKey]*Msg),
	}
}

// SetClock makes the platform time-stamp calls with now (e.g. a FakeClock).
func (p *Platform) SetClock(now func() time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clock = now
}

// Limits implements bridges.Platform.
func (p *Platform) Limits() bridges.Limits { return p.limits }

// Run implements bridges.Platform: it delivers to h until ctx ends. A
// platform may be run again (by a restarted core); the latest h wins.
func (p *Platform) Run(ctx context.Context, h bridges.Handler) error {
	p.mu.Lock()
	if p.handler == nil {
		close(p.ready)
	}
	p.handler = h
	p.mu.Unlock()
	<-ctx.Done()
	return nil
}

// Post implements bridges.Platform. Like a real adapter it keeps a
// repeated post from showing twice: a Message with Idem and Retry whose
// Idem was posted before in the conversation returns that message as it
// is now, posting nothing (see Lookups).
func (p *Platform) Post(ctx context.Context, key bridges.ConversationKey, m bridges.Message) (bridges.MessageRef, error) {
	p.mu.Lock()
	fail := p.failPost
	p.mu.Unlock()
	if fail != nil { // called unlocked: it may block to simulate a slow platform
		if err := fail(key, m); err != nil {
			return bridges.MessageRef{}, err
		}
	}
	if !bridges.WriteAllowed(ctx) { // asked last, as a real adapter's transport does
		return bridges.MessageRef{}, bridges.ErrWriteGuarded
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if m.Idem != "" && m.Retry {
		if msg := p.idem[idemKey{key, m.Idem}]; msg != nil {
			p.lookups++
			return msg.Ref, nil
		}
	}
	p.nextID++
	ref := bridges.MessageRef{Key: key, ID: "m" + strconv.Itoa(p.nextID)}
	msg := &Msg{Ref: ref, Key: key, Text: m.Text, CardID: m.CardID, Buttons: slices.Clone(m.Buttons), ReplyTo: m.ReplyTo,
		History: []string{m.Text}, Posted: p.clock()}
	p.msgs = append(p.msgs, msg)
	p.byID[ref.ID] = msg
	if m.Idem != "" {
		p.idem[idemKey{key, m.Idem}] = msg
	}
	p.calls = append(p.calls, Call{Op: "post", Key: key, At: p.clock()})
	p.notifyLocked()
	if p.observe != nil {
		p.observe(p.calls[len(p.calls)-1], *msg)
	}
	return ref, nil
}

// Edit implements bridges.Editor.
func (p *Platform) Edit(ctx context.Context, ref bridges.MessageRef, m bridges.Message) error {
	p.mu.Lock()
	fail := p.failEdit
	p.mu.Unlock()
	if fail != nil {
		if err := fail(ref, m); err != nil {
			return err
		}
	}
	if !bridges.WriteAllowed(ctx) { // asked last, as a real adapter's transport does
		return bridges.ErrWriteGuarded
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	msg := p.byID[ref.ID]
	if msg == nil {
		return fmt.Errorf("bridgetest: edit of unknown message %s", ref.ID)
	}
	msg.Text, msg.CardID, msg.Buttons = m.Text, m.CardID, slices.Clone(m.Buttons)
	msg.Edits++
	msg.History = append(msg.History, m.Text)
	p.calls = append(p.calls, Call{Op: "edit", Key: ref.Key, At: p.clock()})
	p.notifyLocked()
	if p.observe != nil {
		p.observe(p.calls[len(p.calls)-1], *msg)
	}
	return nil
}

// SetTyping implements bridges.Typer. Each call is a platform call (see
// Calls), as on every real platform.
func (p *Platform) SetTyping(ctx context.Context, key bridges.ConversationKey, on bool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.typing[key] = on
	op := "typing-off"
	if on {
		op = "typing-on"
	}
	p.calls = append(p.calls, Call{Op: op, Key: key, At: p.clock()})
	p.notifyLocked()
	return nil
}

// PostEphemeral implements bridges.Ephemeral: it records the message (see
// Privates); it is not one of Messages.
func (p *Platform) PostEphemeral(ctx context.Context, key bridges.ConversationKey, user, text string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.privates = append(p.privates, Private{Key: key, User: user, Text: text, At: p.clock()})
	p.notifyLocked()
	return nil
}

// Privates returns the messages shown to one user (PostEphemeral) so far.
func (p *Platform) Privates() []Private {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.privates)
}

// AddFile makes FetchFile return data for the file with id.
func (p *Platform) AddFile(id string, data []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.files == nil {
		p.files = make(map[string][]byte)
	}
	p.files[id] = data
}

// FetchFile implements bridges.FileFetcher for files added with AddFile.
func (p *Platform) FetchFile(ctx context.Context, f bridges.File, max int64) ([]byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	data, ok := p.files[f.ID]
	if !ok {
		return nil, fmt.Errorf("bridgetest: no file %s", f.ID)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("bridgetest: file %s has %d bytes > %d", f.ID, len(data), max)
	}
	return slices.Clone(data), nil
}

// Typing reports the typing indicator of key.
func (p *Platform) Typing(key bridges.ConversationKey) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.typing[key]
}

// Observe calls f after every successful Post and Edit with the call and
// the message as it now is. f runs with the platform locked: it must not
// call the platform.
func (p *Platform) Observe(f func(Call, Msg)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.observe = f
}

// FailPosts makes Post return f's error when f returns one (nil clears it).
// f is called without the platform's lock and may block.
func (p *Platform) FailPosts(f func(bridges.ConversationKey, bridges.Message) error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failPost = f
}

// FailEdits makes Edit return f's error when f returns one (nil clears it).
func (p *Platform) FailEdits(f func(bridges.MessageRef, bridges.Message) error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failEdit = f
}

func (p *Platform) notifyLocked() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// Handler waits until Run has been called and returns its handler.
func (p *Platform) Handler(ctx context.Context) (bridges.Handler, error) {
	select {
	case <-p.ready:
	case <-ctx.Done():
		return nil, fmt.Errorf("bridgetest: platform not running: %w", ctx.Err())
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.handler, nil
}

// Send delivers an inbound message to the core, as the adapter would.
func (p *Platform) Send(ctx context.Context, m bridges.Inbound) error {
	h, err := p.Handler(ctx)
	if err != nil {
		return err
	}
	if m.At.IsZero() {
		m.At = time.Now()
	}
	return h.HandleMessage(ctx, m)
}

// Clicked is a click handed to the core. The core answers the clicker
// privately (if at all) from the conversation's worker, so after
// HandleAction returned.
type Clicked struct {
	mu      sync.Mutex
	replies []string
	changed chan struct{}
}

// Replies returns the private replies so far.
func (c *Clicked) Replies() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.replies)
}

// WaitReply waits for the first private reply and returns it; it fails the
// test after timeout.
func (c *Clicked) WaitReply(tb testing.TB, timeout time.Duration) string {
	tb.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		if len(c.replies) > 0 {
			r := c.replies[0]
			c.mu.Unlock()
			return r
		}
		ch := c.changed
		c.mu.Unlock()
		select {
		case <-ch:
		case <-deadline.C:
			tb.Fatalf("bridgetest: no private reply to the click within %s", timeout)
			return ""
		}
	}
}

// Click presses button choice of card cardID in conversation key as the
// given user. HandleAction's error is returned; private replies arrive on
// the returned Clicked.
func (p *Platform) Click(ctx context.Context, key bridges.ConversationKey, cardID, choice, userID, userName string) (*Clicked, error) {
	h, err := p.Handler(ctx)
	if err != nil {
		return nil, err
	}
	c := &Clicked{changed: make(chan struct{})}
	err = h.HandleAction(ctx, bridges.Action{
		Key: key, CardID: cardID, Choice: choice, UserID: userID, UserName: userName,
		Reply: func(ctx context.Context, text string) error {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.replies = append(c.replies, text)
			close(c.changed)
			c.changed = make(chan struct{})
			return nil
		},
	})
	return c, err
}

// Messages returns copies of the messages of key (all keys when key is the
// zero value), in post order.
func (p *Platform) Messages(key bridges.ConversationKey) []Msg {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []Msg
	for _, m := range p.msgs {
		if key == (bridges.ConversationKey{}) || m.Key == key {
			c := *m
			c.Buttons = slices.Clone(m.Buttons)
			c.History = slices.Clone(m.History)
			out = append(out, c)
		}
	}
	return out
}

// Lookups is how many Posts with Retry found their Idem posted before
// and returned that message instead of posting again.
func (p *Platform) Lookups() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lookups
}

// Calls returns every Post, Edit and SetTyping so far, in order.
func (p *Platform) Calls() []Call {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.calls)
}

// Count returns how many posts and edits were made.
func (p *Platform) Count() (posts, edits int) {
	for _, c := range p.Calls() {
		switch c.Op {
		case "post":
			posts++
		case "edit":
			edits++
		}
	}
	return posts, edits
}

// CallsOf returns the calls made for key, in order.
func (p *Platform) CallsOf(key bridges.ConversationKey) []Call {
	var out []Call
	for _, c := range p.Calls() {
		if c.Key == key {
			out = append(out, c)
		}
	}
	return out
}

// WaitFor waits until some message of key (any key for the zero value)
// satisfies pred, and returns it; it fails the test after timeout.
func (p *Platform) WaitFor(tb testing.TB, key bridges.ConversationKey, timeout time.Duration, what string, pred func(Msg) bool) Msg {
	tb.Helper()
	var found Msg
	p.WaitUntil(tb, timeout, what, func(ms []Msg) bool {
		for _, m := range ms {
			if (key == (bridges.ConversationKey{}) || m.Key == key) && pred(m) {
				found = m
				return true
			}
		}
		return false
	})
	return found
}

// WaitUntil waits until cond holds for the platform's messages (all keys);
// it fails the test after timeout, listing what the platform shows.
func (p *Platform) WaitUntil(tb testing.TB, timeout time.Duration, what string, cond func([]Msg) bool) {
	tb.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		p.mu.Lock()
		changed := p.changed
		p.mu.Unlock()
		if cond(p.Messages(bridges.ConversationKey{})) {
			return
		}
		select {
		case <-changed:
		case <-deadline.C:
			tb.Fatalf("bridgetest: timed out after %s waiting for %s; messages:\n%s", timeout, what, p.Dump())
			return
		}
	}
}

// Dump renders every message for failure output.
func (p *Platform) Dump() string {
	var s string
	for _, m := range p.Messages(bridges.ConversationKey{}) {
		s += fmt.Sprintf("[%s %s card=%q edits=%d buttons=%d] %q\n", m.Ref.ID, m.Key, m.CardID, m.Edits, len(m.Buttons), m.Text)
	}
	return s
}

// WithoutEdit returns p as a platform that cannot edit (not a
// bridges.Editor), keeping its other abilities (Typer, FileFetcher,
// Ephemeral): the core must post new messages instead of editing.
func WithoutEdit(p *Platform) bridges.Platform { return postOnly{p} }

// postOnly hides Platform.Edit.
type postOnly struct{ p *Platform }

var (
	_ bridges.Typer       = postOnly{}
	_ bridges.FileFetcher = postOnly{}
	_ bridges.Ephemeral   = postOnly{}
)

func (o postOnly) Limits() bridges.Limits { return o.p.Limits() }

func (o postOnly) Run(ctx context.Context, h bridges.Handler) error { return o.p.Run(ctx, h) }

func (o postOnly) Post(ctx context.Context, key bridges.ConversationKey, m bridges.Message) (bridges.MessageRef, error) {
	return o.p.Post(ctx, key, m)
}

func (o postOnly) SetTyping(ctx context.Context, key bridges.ConversationKey, on bool) error {
	return o.p.SetTyping(ctx, key, on)
}

func (o postOnly) FetchFile(ctx context.Context, f bridges.File, max int64) ([]byte, error) {
	return o.p.FetchFile(ctx, f, max)
}

func (o postOnly) PostEphemeral(ctx context.Context, key bridges.ConversationKey, user, text string) error {
	return o.p.PostEphemeral(ctx, key, user, text)
}
