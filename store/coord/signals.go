package coord

import (
	"context"
	"fmt"
	"sync"

	"github.com/agentbridge/agentbridge/store/sqldb"
)

// Signals wake a replica when another one has work for it — a message for
// a conversation whose lease it holds, a lease handed over — so that it
// need not wait for its next poll. They are hints, not a queue: a signal
// can be missed (see Resync), and the work it stands for is always in the
// database, where the reader's poll finds it. Polling stays the safety net.
//
// On PostgreSQL they are LISTEN/NOTIFY: Notify reaches every replica
// listening on the database. On SQLite they stay in the process: Notify
// reaches the Listen calls on the same Coordinator (one bridge owns a data_dir).

// Limits of a signal, PostgreSQL's (kept on SQLite too, so that what works
// on one works on the other).
const (
	maxChannelLen = 63   // bytes of a channel name: NAMEDATALEN - 1
	maxPayloadLen = 7999 // bytes of a payload: "shorter than 8000 bytes"
)

// listenBuffer is how many payloads wait for a slow reader before they are
// replaced by one Resync (signalQueue).
const listenBuffer = 256

// signaler is one database's implementation of Notify and Listen.
type signaler interface {
	notify(ctx context.Context, channel, payload string) error
	listen(ctx context.Context, channel string) (<-chan string, error)
}

// Notify sends payload to every current Listen on channel. It returns once
// the signal is sent (on PostgreSQL, committed); it does not wait for the
// listeners. channel is 1 to 63 bytes, payload 1 to 7999 bytes; an empty
// payload is refused (it would read as Resync).
func (s *Coordinator) Notify(ctx context.Context, channel, payload string) error {
	if err := checkChannel(channel); err != nil {
		return fmt.Errorf("notify %s: %w", channel, err)
	}
	if payload == "" || len(payload) > maxPayloadLen {
		return fmt.Errorf("notify %s: payload of %d bytes, want 1 to %d: %w", channel, len(payload), maxPayloadLen, sqldb.ErrInvalidArgument)
	}
	if err := s.sig.notify(ctx, channel, payload); err != nil {
		return fmt.Errorf("notify %s: %w", channel, err)
	}
	return nil
}

// Listen returns a channel that receives the payload of every Notify on
// channel made after Listen returned, in the order they were sent (on
// PostgreSQL: committed), until ctx ends. Then the channel is closed, once
// everything Listen started has stopped (on PostgreSQL: its connection is
// closed).
//
// The channel receives Resync ("") in place of signals that may have been
// missed: on PostgreSQL after the listening connection was lost (Listen
// reconnects by itself, with backoff, and sends Resync once it listens
// again: a NOTIFY sent while it was away is not delivered), and on either
// database when the reader falls more than 256 payloads behind. On Resync,
// poll the database for the work. Poll once after Listen returns, too: a
// signal sent before it is not delivered.
//
// On PostgreSQL each Listen holds a connection of its own, outside the
// store's pools: listen on a few channels (one per replica), not one per
// conversation. Cancel ctx before closing the store.
func (s *Coordinator) Listen(ctx context.Context, channel string) (<-chan string, error) {
	if err := checkChannel(channel); err != nil {
		return nil, fmt.Errorf("listen on %s: %w", channel, err)
	}
	ch, err := s.sig.listen(ctx, channel)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", channel, err)
	}
	return ch, nil
}

func checkChannel(channel string) error {
	if channel == "" || len(channel) > maxChannelLen {
		return fmt.Errorf("channel name of %d bytes, want 1 to %d: %w", len(channel), maxChannelLen, sqldb.ErrInvalidArgument)
	}
	return nil
}

// localSignals is the in-process signaler (SQLite). It is safe for
// concurrent use.
type localSignals struct {
	mu   sync.Mutex
	subs map[string]map[*signalQueue]struct{} // by channel
}

func newLocalSignals() *localSignals {
	return &localSignals{subs: map[string]map[*signalQueue]struct{}{}}
}

func (l *localSignals) notify(_ context.Context, channel, payload string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for q := range l.subs[channel] {
		q.push(payload) // never blocks
	}
	return nil
}

func (l *localSignals) listen(ctx context.Context, channel string) (<-chan string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	q := newSignalQueue(listenBuffer)
	l.mu.Lock()
	if l.subs[channel] == nil {
		l.subs[channel] = map[*signalQueue]struct{}{}
	}
	l.subs[channel][q] = struct{}{}
	l.mu.Unlock()
	out := make(chan string)
	go func() {
		defer close(out)
		q.deliver(ctx, out)
		l.mu.Lock()
		delete(l.subs[channel], q)
		if len(l.subs[channel]) == 0 {
			delete(l.subs, channel)
		}
		l.mu.Unlock()
	}()
	return out, nil
}
