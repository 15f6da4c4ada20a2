package discordfake

import (
	"fmt"
	"slices"
	"time"
)

// Messages returns the messages of a channel (a thread is a channel) in
// creation order, as they are now (after edits). Ephemeral follow-ups are
// not channel messages: see Followups.
func (f *Fake) Messages(channelID string) []Message {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Message
	for _, id := range f.order {
		if m := f.messages[id]; m.wire.ChannelID == channelID {
			out = append(out, f.publicMessage(m))
		}
	}
	return out
}

// Message returns one message by id.
func (f *Fake) Message(id string) (Message, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	m, ok := f.messages[id]
	if !ok {
		return Message{}, false
	}
	return f.publicMessage(m), true
}

// BotMessages returns the messages the bot posted in any channel, in order.
func (f *Fake) BotMessages() []Message {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Message
	for _, id := range f.order {
		if m := f.messages[id]; m.wire.Author.ID == f.opts.BotID {
			out = append(out, f.publicMessage(m))
		}
	}
	return out
}

// WaitForMessage waits until a stored message (any channel, any author,
// current content) satisfies pred and returns the first such message in
// creation order.
func (f *Fake) WaitForMessage(pred func(Message) bool, timeout time.Duration) (Message, error) {
	var got Message
	err := f.Wait(timeout, func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, id := range f.order {
			if m := f.publicMessage(f.messages[id]); pred(m) {
				got = m
				return true
			}
		}
		return false
	})
	if err != nil {
		return Message{}, fmt.Errorf("wait for message: %w", err)
	}
	return got, nil
}

// Edits returns every accepted message edit in arrival order.
func (f *Fake) Edits() []Edit {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.edits)
}

// Threads returns the threads the bot started, in order.
func (f *Fake) Threads() []Thread {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.threads)
}

// InteractionResponses returns the initial interaction responses (callbacks)
// in arrival order, with the click and arrival times.
func (f *Fake) InteractionResponses() []InteractionResponse {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.responses)
}

// Followups returns the interaction follow-up messages in arrival order.
func (f *Fake) Followups() []Followup {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.followups)
}

// Typing returns the typing indicators the bot sent, in order.
func (f *Fake) Typing() []Typing {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.typing)
}

// Requests returns every REST request the fake received, in order.
func (f *Fake) Requests() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.requests)
}

// RequestCount counts the received requests on route (e.g. RouteCreateMessage),
// including the ones answered with an injected 429.
func (f *Fake) RequestCount(route string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, r := range f.requests {
		if r.Route == route {
			n++
		}
	}
	return n
}
