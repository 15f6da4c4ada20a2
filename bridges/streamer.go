package bridges

import (
	"context"
	"errors"
)

// ErrStreamRefused is returned (wrapped) by Streamer.StartStream when the
// platform will not stream a message in that conversation (a channel type
// or an app without the feature). The core then shows the turn by posting
// and editing, as on a platform without Streamer; the adapter remembers
// where it was refused and refuses there again without asking.
var ErrStreamRefused = errors.New("native streaming refused")

// Streamer is an optional ability: the platform grows one message as the
// agent writes it (Slack chat.startStream / appendStream / stopStream),
// which costs fewer calls than posting a message and editing it. The core
// starts a stream for a turn that is still writing after one
// Limits.EditInterval (a quicker turn is one post, as elsewhere), appends
// what is new at most once per EditInterval (the channel's shared budget),
// and stops it when the turn ends. Text is CommonMark; tool calls are
// tasks. A stream holds at most Limits.MaxMessageRunes runes of text: past
// that the core stops appending text and posts the answer as usual.
type Streamer interface {
	// StartStream opens a stream in key's conversation with first (which
	// may be empty) as its content. replyTo is the Inbound.MsgID the turn
	// answers and user the person who asked (platforms that stream to one
	// recipient need them). An error wrapping ErrStreamRefused means "not
	// here": nothing was shown.
	StartStream(ctx context.Context, key ConversationKey, replyTo, user string, first []StreamChunk) (Stream, error)
}

// Stream is an open streamed message. Its methods are called by one
// goroutine at a time (the conversation's worker).
type Stream interface {
	// Ref is the streamed message (for quoting; it is not edited).
	Ref() MessageRef
	// Append adds chunks to the message.
	Append(ctx context.Context, chunks []StreamChunk) error
	// Stop adds the last chunks (may be empty) and ends the stream; the
	// message stays as shown. Stop is called once; Append not after it.
	Stop(ctx context.Context, last []StreamChunk) error
}

// ReplyStopper is an optional ability of a Stream: StopReply is Stop for
// a stream whose end shows the reply idem (Message.Idem). The ended
// message carries that key the way a posted reply does, so that a Post of
// the same reply with Retry set finds it and does not post it again when
// Stop's answer was lost. When the stream is no longer open (its earlier
// Stop went through although its answer was lost, or it was ended by
// something else) StopReply returns a permanent error (IsPermanent): the
// caller then posts the reply as a retry, which looks for it first.
type ReplyStopper interface {
	StopReply(ctx context.Context, last []StreamChunk, idem string) error
}

// StreamCloser is an optional ability of a platform that shows a running
// turn in one growing message — a Streamer's stream, or the live message
// the core posts and edits (Discord): CloseStream ends the message at ref
// that a turn cut off left open (its bridge killed, or its replica dead),
// adding note (Markdown) to what it shows, so that no message stays
// half-written and open. A message already ended (finished or closed), or
// gone, is not an error: there is nothing left to close.
type StreamCloser interface {
	CloseStream(ctx context.Context, ref MessageRef, note string) error
}

// StreamChunk is one piece of a stream: Text appended to the message;
// or, when Task is set, a task shown (or updated, by Task.ID) in it; or,
// when Plan is set, the turn's plan shown (or replaced) in it; or, when
// Feedback is set, feedback buttons asked for under the message (only in
// Stop's chunks). One of the four is set.
type StreamChunk struct {
	Text string
	Task *StreamTask
	Plan *StreamPlan
	// Feedback is the CardID of the message's 👍/👎 buttons: a click comes
	// back as an Action with this CardID and Choice ChoiceGood or
	// ChoiceBad. A stream that cannot show them leaves them out.
	Feedback string
}

// Task states of a StreamTask.
const (
	TaskPending  = "pending"
	TaskRunning  = "in_progress"
	TaskComplete = "complete"
	TaskFailed   = "error"
)

// StreamTask is a tool call shown in a stream: Title is a plain one-line
// description ("Bash: git status"), Status one of the Task* states, Output
// an optional short result.
type StreamTask struct {
	ID     string
	Title  string
	Status string
	Output string
}

// StreamPlan is the agent's to-do list shown in a stream (TodoWrite): a
// plain one-line Title and its Tasks in order, each with a Task* state.
// A later plan replaces the earlier one; its tasks keep their IDs by
// position, so that a platform updates them in place.
type StreamPlan struct {
	Title string
	Tasks []StreamTask
}
