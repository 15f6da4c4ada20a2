package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/internal/textcut"
)

// Live updates across replicas. With several replicas (config replicas) a
// person's page may be served by one replica while another runs the
// conversation (it holds the conversation's lease) and posts, edits,
// shows the turn as running and sends private notices there. Fanout
// carries each change the hub publishes to the consoles of the other
// replicas as a signal on FanoutChannel (PostgreSQL NOTIFY); each relays
// it to its own open pages. A signal stays small: a message is named by
// its id and read from the shared store by a replica with a page open on
// its conversation; a notice's text travels (cut to fit a signal).
//
// Signals are hints: one missed (the listening connection was lost) is
// replaced by a Resync, on which every open page is dropped — it
// reconnects at once and catches up from the store by version, as after
// any reconnect. Without Fanout (one bridge) nothing leaves the process.

// FanoutChannel is the signal channel of the consoles' live updates.
const FanoutChannel = "agentbridge_web"

// maxSignal is the largest payload a signal may carry (coord: PostgreSQL's
// NOTIFY takes fewer than 8000 bytes).
const maxSignal = 7999

// Signals is what Fanout needs of the store (store.Store's Notify and
// Listen, see store/coord).
type Signals interface {
	Notify(ctx context.Context, channel, payload string) error
	Listen(ctx context.Context, channel string) (<-chan string, error)
}

// fanout is the sending side of Fanout while it runs.
type fanout struct {
	sig Signals
	id  string // this replica: its own signals are not relayed back
}

// wireEvent is an event on FanoutChannel.
type wireEvent struct {
	From    string    `json:"f"`
	Topic   string    `json:"t"`
	Kind    eventKind `json:"k"`
	Bot     string    `json:"b,omitempty"` // evTyping: the conversation's key
	Channel string    `json:"c,omitempty"`
	Thread  string    `json:"th,omitempty"`
	User    string    `json:"u,omitempty"` // evNotice
	Msg     string    `json:"m,omitempty"` // evMessage: the message's id, read from the store
	On      bool      `json:"on,omitempty"`
	Start   bool      `json:"s,omitempty"` // evTyping: the agent starts
	Text    string    `json:"x,omitempty"` // evNotice
}

// Fanout shares this console's live updates with the consoles of the
// other replicas on the same database and relays theirs to its pages,
// until ctx ends (run it while the core runs, so that the answers of a
// graceful stop still reach every page). replica is this process's
// replica id. It returns an error when it cannot listen, else nil once
// ctx ended.
func (c *Console) Fanout(ctx context.Context, sig Signals, replica string) error {
	if sig == nil || replica == "" {
		return errors.New("web fan-out: signals and a replica id are required")
	}
	ch, err := sig.Listen(ctx, FanoutChannel)
	if err != nil {
		return fmt.Errorf("web fan-out: %w", err)
	}
	c.fan.Store(&fanout{sig: sig, id: replica})
	defer c.fan.Store(nil)
	// Pages opened before Listen may have missed a change: they catch up.
	c.hub.dropAll()
	for p := range ch { // closed once ctx ended and the listener stopped
		if p == "" { // Resync: signals were missed
			c.hub.dropAll()
			continue
		}
		var w wireEvent
		if err := json.Unmarshal([]byte(p), &w); err != nil {
			c.log.Warn("web fan-out: unreadable signal", "err", err)
			continue
		}
		if w.From != replica {
			c.relay(ctx, w)
		}
	}
	return nil
}

// publish hands ev to this console's pages of topic and, with Fanout
// running, to the other replicas' pages. A signal that cannot be sent
// costs those pages the live change only: they show it after their next
// reconnect or reload.
func (c *Console) publish(ctx context.Context, topic string, ev event) {
	c.hub.publish(topic, ev)
	f := c.fan.Load()
	if f == nil {
		return
	}
	w := wireEvent{From: f.id, Topic: topic, Kind: ev.kind, Thread: ev.thread, User: ev.user, On: ev.on, Start: ev.starting,
		Bot: ev.key.Bot, Channel: ev.key.Channel}
	if ev.kind == evMessage {
		w.Msg = ev.msg.ID
	}
	p, err := fitSignal(w, ev.text)
	if err == nil {
		err = f.sig.Notify(ctx, FanoutChannel, p)
	}
	if err != nil {
		c.log.Warn("web fan-out: tell the other replicas' pages", "topic", topic, "err", err)
	}
}

// fitSignal encodes w with text, cut (marked with "…") until the payload
// fits a signal.
func fitSignal(w wireEvent, text string) (string, error) {
	n := utf8.RuneCountInString(text)
	for {
		w.Text = textcut.Truncate(text, n)
		b, err := json.Marshal(w)
		if err != nil {
			return "", fmt.Errorf("encode a web signal: %w", err)
		}
		if len(b) <= maxSignal {
			return string(b), nil
		}
		if n == 0 {
			return "", fmt.Errorf("web signal of %d bytes without text: too long", len(b))
		}
		n = n * 3 / 4
	}
}

// relay publishes another replica's change to this console's pages. A
// message is read from the store only when a page of its conversation is
// open here; it is read as it is now (a later version than signalled is
// fine: the pages skip versions they have).
func (c *Console) relay(ctx context.Context, w wireEvent) {
	ev := event{kind: w.Kind, thread: w.Thread, user: w.User, on: w.On, starting: w.Start, text: w.Text}
	switch w.Kind {
	case evMessage:
		if !c.hub.has(w.Topic) {
			return
		}
		m, err := c.st.WebMessage(ctx, w.Msg)
		if err != nil {
			c.log.Warn("web fan-out: read a message another replica changed", "msg_id", w.Msg, "err", err)
			return
		}
		ev.msg = m
	case evTyping:
		var since time.Time
		if w.Start {
			since = c.now()
		}
		c.setTurn(bridges.ConversationKey{Bot: w.Bot, Channel: w.Channel, Thread: w.Thread}, w.On, since)
	case evNotice, evList:
	default:
		return
	}
	c.hub.publish(w.Topic, ev)
}
