package bridgetest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/agentbridge/agentbridge/bridges"
)

// Streaming is a Platform that also streams (bridges.Streamer). A stream
// is a message of the platform (see Messages) whose Text grows with each
// call: text chunks are appended as they are, a task as a line
// "[status] title" (an update of a shown task appends "[status] title:
// output"). Its calls are recorded as "stream-start", "stream-append" and
// "stream-stop".
type Streaming struct {
	*Platform

	mu     sync.Mutex
	refuse func(bridges.ConversationKey) bool
	starts []StreamStart
}

// StreamStart records one StartStream call.
type StreamStart struct {
	Key     bridges.ConversationKey
	ReplyTo string
	User    string
}

var _ bridges.Streamer = (*Streaming)(nil)

// WithStreams returns p with the Streamer ability.
func WithStreams(p *Platform) *Streaming { return &Streaming{Platform: p} }

// Refuse makes StartStream refuse (bridges.ErrStreamRefused) where f says.
func (s *Streaming) Refuse(f func(bridges.ConversationKey) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuse = f
}

// Starts returns the StartStream calls that opened a stream.
func (s *Streaming) Starts() []StreamStart {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]StreamStart(nil), s.starts...)
}

// StartStream implements bridges.Streamer.
func (s *Streaming) StartStream(ctx context.Context, key bridges.ConversationKey, replyTo, user string, first []bridges.StreamChunk) (bridges.Stream, error) {
	s.mu.Lock()
	refuse := s.refuse
	s.mu.Unlock()
	if refuse != nil && refuse(key) {
		return nil, fmt.Errorf("bridgetest: %w in %s", bridges.ErrStreamRefused, key)
	}
	s.mu.Lock()
	s.starts = append(s.starts, StreamStart{Key: key, ReplyTo: replyTo, User: user})
	s.mu.Unlock()
	p := s.Platform
	p.mu.Lock()
	defer p.mu.Unlock()
	p.nextID++
	ref := bridges.MessageRef{Key: key, ID: "m" + strconv.Itoa(p.nextID)}
	text := renderChunks("", first)
	msg := &Msg{Ref: ref, Key: key, Text: text, ReplyTo: replyTo, History: []string{text}, Posted: p.clock()}
	p.msgs = append(p.msgs, msg)
	p.byID[ref.ID] = msg
	p.calls = append(p.calls, Call{Op: "stream-start", Key: key, At: p.clock()})
	p.notifyLocked()
	return &fakeStream{p: p, ref: ref}, nil
}

// renderChunks appends chunks to text as Streaming shows them: a task as
// a line "[status] title[: output]", a plan as a line "[plan] title"
// followed by its tasks' lines, feedback buttons as a line
// "[feedback CardID]".
func renderChunks(text string, chunks []bridges.StreamChunk) string {
	var b strings.Builder
	b.WriteString(text)
	line := func(s string) {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteString("\n")
		}
		b.WriteString(s + "\n")
	}
	task := func(t bridges.StreamTask) {
		s := fmt.Sprintf("[%s] %s", t.Status, t.Title)
		if t.Title == "" {
			s += t.ID
		}
		if t.Output != "" {
			s += ": " + t.Output
		}
		line(s)
	}
	for _, c := range chunks {
		switch {
		case c.Task != nil:
			task(*c.Task)
		case c.Plan != nil:
			line("[plan] " + c.Plan.Title)
			for _, t := range c.Plan.Tasks {
				task(t)
			}
		case c.Feedback != "":
			line("[feedback " + c.Feedback + "]")
		default:
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

// fakeStream is one open stream.
type fakeStream struct {
	p       *Platform
	ref     bridges.MessageRef
	stopped bool
}

func (f *fakeStream) Ref() bridges.MessageRef { return f.ref }

func (f *fakeStream) Append(ctx context.Context, chunks []bridges.StreamChunk) error {
	return f.add("stream-append", chunks)
}

func (f *fakeStream) Stop(ctx context.Context, last []bridges.StreamChunk) error {
	if err := f.add("stream-stop", last); err != nil {
		return err
	}
	f.stopped = true
	return nil
}

func (f *fakeStream) add(op string, chunks []bridges.StreamChunk) error {
	if f.stopped {
		return errors.New("bridgetest: stream already stopped")
	}
	p := f.p
	p.mu.Lock()
	defer p.mu.Unlock()
	msg := p.byID[f.ref.ID]
	msg.Text = renderChunks(msg.Text, chunks)
	msg.History = append(msg.History, msg.Text)
	p.calls = append(p.calls, Call{Op: op, Key: f.ref.Key, At: p.clock()})
	p.notifyLocked()
	return nil
}
