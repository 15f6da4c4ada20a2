package feed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/internal/textcut"
	"github.com/agentbridge/agentbridge/store"
)

// Live updates across replicas. With several replicas (config replicas) a
// person's page may be served by one replica while another runs the
// conversation (it holds the conversation's lease) and posts, edits,
// shows the turn as running and sends private notices there. Fanout
// carries each change the hub publishes to the hubs of the other
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

// Relay is what Fanout needs of the console to relay another replica's
// change to the pages here.
type Relay struct {
	// Message reads a message as the store holds it now (a later version
	// than signalled is fine: the pages skip versions they have).
	Message func(ctx context.Context, id string) (store.WebMessage, error)
	// Turn notes another replica's turn state of key's conversation, for
	// the pages that connect here later.
	Turn func(key bridges.ConversationKey, on, starting bool)
}

// fanout is the sending side of Fanout while it runs.
type fanout struct {
	sig Signals
	id  string // this replica: its own signals are not relayed back
}

// wireEvent is an Event on FanoutChannel.
type wireEvent struct {
	From    string `json:"f"`
	Topic   string `json:"t"`
	Kind    Kind   `json:"k"`
	Bot     string `json:"b,omitempty"` // Typing: the conversation's key
	Channel string `json:"c,omitempty"`
	Thread  string `json:"th,omitempty"`
	User    string `json:"u,omitempty"` // Notice
	Msg     string `json:"m,omitempty"` // Message: the message's id, read from the store
	On      bool   `json:"on,omitempty"`
	Start   bool   `json:"s,omitempty"` // Typing: the agent starts
	Text    string `json:"x,omitempty"` // Notice
}

// Fanout shares the hub's events with the hubs of the other replicas on
// the same database and relays theirs to the pages here, until ctx ends
// (run it while the core runs, so that the answers of a graceful stop
// still reach every page). replica is this process's replica id; relay's
// funcs are required. It returns an error when it cannot listen, else nil
// once ctx ended.
func (h *Hub) Fanout(ctx context.Context, sig Signals, replica string, relay Relay) error {
	if sig == nil || replica == "" || relay.Message == nil || relay.Turn == nil {
		return errors.New("web fan-out: signals, a replica id and the relay are required")
	}
	ch, err := sig.Listen(ctx, FanoutChannel)
	if err != nil {
		return fmt.Errorf("web fan-out: %w", err)
	}
	h.fan.Store(&fanout{sig: sig, id: replica})
	defer h.fan.Store(nil)
	// Pages opened before Listen may have missed a change: they catch up.
	h.dropAll()
	for p := range ch { // closed once ctx ended and the listener stopped
		if p == "" { // Resync: signals were missed
			h.dropAll()
			continue
		}
		var w wireEvent
		if err := json.Unmarshal([]byte(p), &w); err != nil {
			h.log.Warn("web fan-out: unreadable signal", "err", err)
			continue
		}
		if w.From != replica {
			h.relay(ctx, w, relay)
		}
	}
	return nil
}

// Relaying reports whether Fanout runs (listens and sends).
func (h *Hub) Relaying() bool { return h.fan.Load() != nil }

// Publish hands ev to the pages of topic here and, with Fanout running,
// to the other replicas' pages. A signal that cannot be sent costs those
// pages the live change only: they show it after their next reconnect or
// reload.
func (h *Hub) Publish(ctx context.Context, topic string, ev Event) {
	h.local(topic, ev)
	f := h.fan.Load()
	if f == nil {
		return
	}
	w := wireEvent{From: f.id, Topic: topic, Kind: ev.Kind, Thread: ev.Thread, User: ev.User, On: ev.On, Start: ev.Starting,
		Bot: ev.Key.Bot, Channel: ev.Key.Channel}
	if ev.Kind == Message {
		w.Msg = ev.Msg.ID
	}
	p, err := fitSignal(w, ev.Text)
	if err == nil {
		err = f.sig.Notify(ctx, FanoutChannel, p)
	}
	if err != nil {
		h.log.Warn("web fan-out: tell the other replicas' pages", "topic", topic, "err", err)
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

// relay publishes another replica's change to the pages here. A message
// is read from the store only when a page of its conversation is open
// here.
func (h *Hub) relay(ctx context.Context, w wireEvent, r Relay) {
	ev := Event{Kind: w.Kind, Thread: w.Thread, User: w.User, On: w.On, Starting: w.Start, Text: w.Text}
	switch w.Kind {
	case Message:
		if !h.has(w.Topic) {
			return
		}
		m, err := r.Message(ctx, w.Msg)
		if err != nil {
			h.log.Warn("web fan-out: read a message another replica changed", "msg_id", w.Msg, "err", err)
			return
		}
		ev.Msg = m
	case Typing:
		r.Turn(bridges.ConversationKey{Bot: w.Bot, Channel: w.Channel, Thread: w.Thread}, w.On, w.Start)
	case Notice, List:
	default:
		return
	}
	h.local(w.Topic, ev)
}
