package slackfake

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Message is a message the bot posted (chat.postMessage), or one version
// of it after chat.update.
type Message struct {
	Channel  string
	TS       string
	ThreadTS string // "" for a top-level message
	Text     string
	Blocks   json.RawMessage // as sent; nil when the message has no blocks
	Sections []string        // mrkdwn texts of the section blocks, in order
	Buttons  []Button        // buttons of the actions blocks, in order
	Files    []string        // names of the files it shares (files.completeUploadExternal)
	Metadata *Metadata       // chat.postMessage "metadata"; nil when none
	At       time.Time       // when the call arrived

	// A streamed message (chat.startStream): Text is its markdown so far,
	// Tasks its task cards by id in the order they first came, Plan the
	// title of its latest plan_update, Feedback the feedback buttons its
	// chat.stopStream added.
	Stream          StreamState
	Tasks           []Task
	Plan            string
	TaskDisplayMode string // task_display_mode it was started with ("" = Slack's default)
	Feedback        *Feedback
	Recipient       string // recipient_user_id it was started with
}

// StreamState is where a streamed message is: "" for a posted message,
// "streaming" until chat.stopStream, then "stopped".
type StreamState string

// Stream states.
const (
	Streaming     StreamState = "streaming"
	StreamStopped StreamState = "stopped"
)

// Task is a task card of a streamed message (task_update chunks), as its
// latest update left it.
type Task struct {
	ID     string
	Title  string
	Status string
	Output string
}

// Button is one button of an actions block.
type Button struct {
	BlockID  string
	ActionID string
	Value    string
	Text     string
	Style    string // "", "primary" or "danger"
}

// Ephemeral is a chat.postEphemeral call.
type Ephemeral struct {
	Channel  string
	User     string
	ThreadTS string
	Text     string
	Blocks   json.RawMessage
	At       time.Time
}

// Reaction is a reactions.add (Added) or reactions.remove call that
// succeeded.
type Reaction struct {
	Channel string
	TS      string
	Name    string
	Added   bool
	At      time.Time
}

// Status is an assistant.threads.setStatus call that succeeded.
type Status struct {
	Channel  string
	ThreadTS string
	Status   string
	At       time.Time
}

// Call is any Web API call, including failed and rate-limited ones.
type Call struct {
	Method string
	Params url.Values // without the token
	Status int        // HTTP status of the answer
	Error  string     // Slack error code when ok was false
	At     time.Time
}

// Envelope is a Socket Mode envelope the fake sent (or queued).
type Envelope struct {
	ID      string
	Type    string // events_api, interactive, disconnect
	Payload json.RawMessage
	TS      string // ts of the message the event is about ("" otherwise)
	Retry   int    // retry_attempt
	RetryOf string // envelope id this one re-sends
	Conn    int    // socket connection number it went to (0: not yet)
	Queued  time.Time
	Sent    time.Time // taken by the socket writer (zero: not yet)
	Acked   bool
	AckedAt time.Time
}

// Ack is an acknowledgement received on a socket.
type Ack struct {
	EnvelopeID string
	Payload    json.RawMessage
	Conn       int
	At         time.Time
}

// Posts returns every chat.postMessage that succeeded, in order.
func (s *Server) Posts() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.posts)
}

// Updates returns every chat.update that succeeded, in order (the
// message as it was after each update).
func (s *Server) Updates() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.updates)
}

// Current returns a posted message as it is now (after updates).
func (s *Server) Current(channel, ts string) (Message, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.messages[channel+"/"+ts]
	if !ok {
		return Message{}, false
	}
	return *m, true
}

// Ephemerals returns every chat.postEphemeral that succeeded, in order.
func (s *Server) Ephemerals() []Ephemeral {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.ephemerals)
}

// Reactions returns every reaction added or removed, in order.
func (s *Server) Reactions() []Reaction {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reactions)
}

// HasReaction reports whether the reaction is on the message now.
func (s *Server) HasReaction(channel, ts, name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reactionSet[channel+"/"+ts+"/"+name]
}

// Statuses returns every assistant thread status set, in order.
func (s *Server) Statuses() []Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.statuses)
}

// Calls returns every Web API call, in order.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// CallCount counts the calls of one Web API method (all outcomes).
func (s *Server) CallCount(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.calls {
		if c.Method == method {
			n++
		}
	}
	return n
}

// Acks returns every ack received, in order.
func (s *Server) Acks() []Ack {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.acks)
}

// Envelopes returns every envelope sent or queued, in order.
func (s *Server) Envelopes() []Envelope {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Envelope, len(s.envelopes))
	for i, e := range s.envelopes {
		out[i] = e.Envelope
	}
	return out
}

// Envelope returns one envelope by id.
func (s *Server) Envelope(id string) (Envelope, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.byEnvelope[id]
	if !ok {
		return Envelope{}, false
	}
	return e.Envelope, true
}

// EnvelopesFor returns the events_api envelopes about the message ts
// (its message and app_mention events and their retries), in order.
func (s *Server) EnvelopesFor(ts string) []Envelope {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Envelope
	for _, e := range s.envelopes {
		if e.TS == ts && e.Type == "events_api" {
			out = append(out, e.Envelope)
		}
	}
	return out
}

// Connections counts the websocket connections accepted so far.
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.connCount
}

// Connected reports whether a socket is connected and receiving envelopes.
func (s *Server) Connected() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pickable()
}

// WaitForConnections waits until n connections were accepted in total and
// one of them is receiving envelopes.
func (s *Server) WaitForConnections(n int, timeout time.Duration) error {
	err := s.WaitFor(func() bool { return s.Connections() >= n && s.Connected() }, timeout)
	if err != nil {
		return fmt.Errorf("slackfake: want %d connections, have %d (connected %v): %w", n, s.Connections(), s.Connected(), err)
	}
	return nil
}

// WaitForPost waits for a chat.postMessage matching pred (nil: any) and
// returns the first match.
func (s *Server) WaitForPost(pred func(Message) bool, timeout time.Duration) (Message, error) {
	m, err := waitMatch(s, s.Posts, pred, timeout)
	if err != nil {
		return m, fmt.Errorf("no matching post; posts so far: %s: %w", describe(s.Posts()), err)
	}
	return m, nil
}

// WaitForUpdate waits for a chat.update matching pred (nil: any) and
// returns the first match.
func (s *Server) WaitForUpdate(pred func(Message) bool, timeout time.Duration) (Message, error) {
	m, err := waitMatch(s, s.Updates, pred, timeout)
	if err != nil {
		return m, fmt.Errorf("no matching update; updates so far: %s: %w", describe(s.Updates()), err)
	}
	return m, nil
}

// WaitForEphemeral waits for a chat.postEphemeral matching pred (nil: any).
func (s *Server) WaitForEphemeral(pred func(Ephemeral) bool, timeout time.Duration) (Ephemeral, error) {
	m, err := waitMatch(s, s.Ephemerals, pred, timeout)
	if err != nil {
		return m, fmt.Errorf("no matching ephemeral message (%d so far): %w", len(s.Ephemerals()), err)
	}
	return m, nil
}

// waitMatch waits until list returns an element matching pred (nil: any)
// and returns the first match.
func waitMatch[T any](s *Server, list func() []T, pred func(T) bool, timeout time.Duration) (T, error) {
	var found T
	err := s.WaitFor(func() bool {
		for _, m := range list() {
			if pred == nil || pred(m) {
				found = m
				return true
			}
		}
		return false
	}, timeout)
	return found, err
}

// WaitForAck waits for the ack of an envelope.
func (s *Server) WaitForAck(envelopeID string, timeout time.Duration) (Ack, error) {
	var found Ack
	err := s.WaitFor(func() bool {
		for _, a := range s.Acks() {
			if a.EnvelopeID == envelopeID {
				found = a
				return true
			}
		}
		return false
	}, timeout)
	if err != nil {
		return Ack{}, fmt.Errorf("envelope %s not acked: %w", envelopeID, err)
	}
	return found, nil
}

func describe(ms []Message) string {
	if len(ms) == 0 {
		return "none"
	}
	var b strings.Builder
	for i, m := range ms {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "[%s/%s thread=%s %q buttons=%d]", m.Channel, m.TS, m.ThreadTS, m.Text, len(m.Buttons))
	}
	return b.String()
}
