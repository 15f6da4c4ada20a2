package slack

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"unicode/utf8"

	slackapi "github.com/slack-go/slack"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/internal/textcut"
)

// maxStreamMarkdown is Slack's limit on the markdown of one
// chat.startStream / appendStream / stopStream call.
const maxStreamMarkdown = 12000

// maxTaskTitleRunes bounds a task card's title.
const maxTaskTitleRunes = 200

// streamState remembers where Slack refused chat.startStream, like
// typingState does for the thread status.
type streamState struct {
	mu    sync.Mutex
	off   bool            // refused for the whole app (scope, feature)
	offIn map[string]bool // channels where it was refused
}

func newStreamState() streamState { return streamState{offIn: map[string]bool{}} }

var _ bridges.Streamer = (*Bridge)(nil)

// StartStream implements bridges.Streamer with chat.startStream: a
// message in the conversation's thread (or a DM) that appendStream grows
// and stopStream ends. Text goes as markdown_text chunks (CommonMark,
// which Slack renders), tasks as task_update chunks; outside DMs the
// stream is addressed to user (recipient_user_id, recipient_team_id) as
// Slack requires. Top-level conversations outside DMs are not streamed.
// Where Slack refuses (any Slack error; app-wide on scope or feature
// errors), the refusal is remembered and later calls there return
// bridges.ErrStreamRefused at once; the core then posts and edits.
func (b *Bridge) StartStream(ctx context.Context, key bridges.ConversationKey, replyTo, user string, first []bridges.StreamChunk) (bridges.Stream, error) {
	dm := strings.HasPrefix(key.Channel, "D")
	if (key.Thread == "" && !dm) || !b.streamUsable(key.Channel) {
		return nil, fmt.Errorf("slack stream in %s: %w", key, bridges.ErrStreamRefused)
	}
	calls := streamCalls(first)
	opts := []slackapi.MsgOption{}
	if key.Thread != "" {
		opts = append(opts, slackapi.MsgOptionTS(key.Thread))
	}
	if !dm {
		opts = append(opts, slackapi.MsgOptionRecipientUserID(user), slackapi.MsgOptionRecipientTeamID(b.identity().teamID))
	}
	opts = append(opts, slackapi.MsgOptionTaskDisplayMode(displayMode(first)))
	if len(calls) > 0 {
		opts = append(opts, slackapi.MsgOptionChunks(calls[0]...))
	}
	var ts string
	err := b.retry(ctx, "chat.startStream", nil, func() error {
		var err error
		_, ts, err = b.api.StartStreamContext(ctx, key.Channel, opts...)
		return err
	})
	if se, refused := errors.AsType[slackapi.SlackErrorResponse](err); refused {
		b.disableStream(key.Channel, se.Err)
		return nil, fmt.Errorf("slack stream in %s: %s: %w", key, se.Err, bridges.ErrStreamRefused)
	}
	if err != nil {
		return nil, fmt.Errorf("slack stream in %s: %w", key, err)
	}
	b.repliedIn(key) // a reply clears the thread status
	s := &stream{b: b, ref: bridges.MessageRef{Key: key, ID: ts}}
	for _, c := range calls[min(1, len(calls)):] {
		if err := s.call(ctx, "chat.appendStream", c); err != nil {
			return s, err
		}
	}
	return s, nil
}

func (b *Bridge) streamUsable(channel string) bool {
	b.streams.mu.Lock()
	defer b.streams.mu.Unlock()
	return !b.streams.off && !b.streams.offIn[channel]
}

func (b *Bridge) disableStream(channel, code string) {
	b.streams.mu.Lock()
	defer b.streams.mu.Unlock()
	appWide := appWideStatusError(code)
	if appWide {
		b.streams.off = true
	} else {
		if len(b.streams.offIn) > 10000 {
			clear(b.streams.offIn)
		}
		b.streams.offIn[channel] = true
	}
	b.log.Info("slack streaming refused; posting and editing instead",
		slog.String("channel", channel), slog.String("err", code), slog.Bool("app_wide", appWide))
}

// stream is one open chat.startStream message.
type stream struct {
	b   *Bridge
	ref bridges.MessageRef
}

func (s *stream) Ref() bridges.MessageRef { return s.ref }

// Append implements bridges.Stream with chat.appendStream (several calls
// when the chunks hold more than Slack takes in one).
func (s *stream) Append(ctx context.Context, chunks []bridges.StreamChunk) error {
	for _, c := range streamCalls(chunks) {
		if err := s.call(ctx, "chat.appendStream", c); err != nil {
			return err
		}
	}
	return nil
}

// Stop implements bridges.Stream: the last chunks are appended by the
// chat.stopStream call itself where they fit in one; a Feedback chunk
// becomes the final blocks (feedbackBlock).
func (s *stream) Stop(ctx context.Context, last []bridges.StreamChunk) error {
	return s.stop(ctx, last, "")
}

var _ bridges.ReplyStopper = (*stream)(nil)

// StopReply implements bridges.ReplyStopper: Stop whose chat.stopStream
// also sets the message's metadata to part 0 of the reply idem (Slack
// takes metadata on chat.stopStream, not on chat.startStream), as Post
// marks a reply; a retried Post of the reply then finds the message
// (postedParts). A stream Slack no longer streams
// (message_not_in_streaming_state: an earlier stop whose answer was lost
// went through) is a permanent error: the reply is then posted as a
// retry, which looks for it first.
func (s *stream) StopReply(ctx context.Context, last []bridges.StreamChunk, idem string) error {
	err := s.stop(ctx, last, idem)
	if se, ok := errors.AsType[slackapi.SlackErrorResponse](err); ok && se.Err == "message_not_in_streaming_state" {
		return bridges.Permanent(err)
	}
	return err
}

var _ bridges.StreamCloser = (*Bridge)(nil)

// CloseStream implements bridges.StreamCloser with chat.stopStream on the
// message at ref, note as its last markdown_text. Slack's
// message_not_in_streaming_state (ended already) and message_not_found
// (deleted) mean there is nothing to close.
func (b *Bridge) CloseStream(ctx context.Context, ref bridges.MessageRef, note string) error {
	s := &stream{b: b, ref: ref}
	err := s.call(ctx, "chat.stopStream", []slackapi.StreamChunk{slackapi.NewMarkdownTextChunk(truncateToRunes(note, maxStreamMarkdown))})
	if se, ok := errors.AsType[slackapi.SlackErrorResponse](err); ok && (se.Err == "message_not_in_streaming_state" || se.Err == "message_not_found") {
		return nil
	}
	return classify(err, err)
}

func (s *stream) stop(ctx context.Context, last []bridges.StreamChunk, idem string) error {
	calls := streamCalls(last)
	for len(calls) > 1 {
		if err := s.call(ctx, "chat.appendStream", calls[0]); err != nil {
			return err
		}
		calls = calls[1:]
	}
	var final []slackapi.StreamChunk
	if len(calls) == 1 {
		final = calls[0]
	}
	var extra []slackapi.MsgOption
	for _, c := range last {
		if c.Feedback != "" {
			extra = append(extra, slackapi.MsgOptionBlocks(feedbackBlock(c.Feedback)))
			break
		}
	}
	if idem != "" {
		extra = append(extra, replyMetadata(idem, 0))
	}
	return s.call(ctx, "chat.stopStream", final, extra...)
}

// call runs one stream method with chunks (429s retried).
func (s *stream) call(ctx context.Context, method string, chunks []slackapi.StreamChunk, extra ...slackapi.MsgOption) error {
	var opts []slackapi.MsgOption
	if len(chunks) > 0 {
		opts = append(opts, slackapi.MsgOptionChunks(chunks...))
	}
	opts = append(opts, extra...)
	ch, ts := s.ref.Key.Channel, s.ref.ID
	err := s.b.retry(ctx, method, nil, func() error {
		var err error
		switch method {
		case "chat.stopStream":
			_, _, err = s.b.api.StopStreamContext(ctx, ch, ts, opts...)
		default:
			_, _, err = s.b.api.AppendStreamContext(ctx, ch, ts, opts...)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("slack %s %s in %s: %w", method, ts, s.ref.Key, err)
	}
	return nil
}

// streamCalls turns core chunks into the chunks of successive calls:
// adjacent text merged into markdown_text chunks, tasks as task_update
// chunks, a plan as a plan_update chunk (its title) followed by a
// task_update chunk per task, each call with at most maxStreamMarkdown
// characters of text. Feedback chunks are left to Stop.
func streamCalls(chunks []bridges.StreamChunk) [][]slackapi.StreamChunk {
	var (
		calls [][]slackapi.StreamChunk
		cur   []slackapi.StreamChunk
		text  strings.Builder
		size  int // runes of text in cur
	)
	flushText := func() {
		if text.Len() > 0 {
			cur = append(cur, slackapi.NewMarkdownTextChunk(text.String()))
			text.Reset()
		}
	}
	next := func() {
		flushText()
		if len(cur) > 0 {
			calls = append(calls, cur)
		}
		cur, size = nil, 0
	}
	for _, c := range chunks {
		if c.Task != nil {
			flushText()
			cur = append(cur, taskChunk(*c.Task))
			continue
		}
		if c.Plan != nil {
			flushText()
			cur = append(cur, slackapi.NewPlanUpdateChunk(textcut.Truncate(cmp.Or(c.Plan.Title, "Plan"), maxTaskTitleRunes)))
			for _, t := range c.Plan.Tasks {
				cur = append(cur, taskChunk(t))
			}
			continue
		}
		rest := c.Text
		for rest != "" {
			room := maxStreamMarkdown - size
			if room <= 0 {
				next()
				continue
			}
			part := rest
			if utf8.RuneCountInString(part) > room {
				part = truncateToRunes(part, room)
			}
			text.WriteString(part)
			size += utf8.RuneCountInString(part)
			rest = rest[len(part):]
		}
	}
	next()
	return calls
}

// taskChunk is the task_update chunk of a task.
func taskChunk(t bridges.StreamTask) slackapi.TaskUpdateChunk {
	c := slackapi.NewTaskUpdateChunk(t.ID, textcut.Truncate(cmp.Or(t.Title, t.ID), maxTaskTitleRunes))
	c.Status = slackapi.TaskCardStatus(t.Status)
	c.Output = t.Output
	return c
}

// displayMode is a stream's task_display_mode: plan when its first
// chunks hold a plan (the agent's to-do list, shown grouped), timeline
// otherwise (tool calls one after another). Slack takes it on
// chat.startStream only; a plan that comes later still shows.
func displayMode(first []bridges.StreamChunk) slackapi.TaskDisplayMode {
	for _, c := range first {
		if c.Plan != nil {
			return slackapi.TaskDisplayModePlan
		}
	}
	return slackapi.TaskDisplayModeTimeline
}

// Feedback buttons under a streamed answer: the context_actions block's
// block_id is feedbackBlockPrefix + the core's CardID; the buttons' values
// are the choices.
const (
	feedbackBlockPrefix = "feedback:"
	feedbackActionID    = "feedback"
)

// feedbackBlock is the context_actions block with 👍/👎 feedback buttons
// for the card cardID (a click: feedbackAction).
func feedbackBlock(cardID string) slackapi.Block {
	button := func(text, value, label string) *slackapi.FeedbackButton {
		return slackapi.NewFeedbackButton(slackapi.NewTextBlockObject(slackapi.PlainTextType, text, true, false), value).WithAccessibilityLabel(label)
	}
	return slackapi.NewContextActionsBlock(feedbackBlockPrefix+cardID, slackapi.NewFeedbackButtonsBlockElement(feedbackActionID,
		button("👍", bridges.ChoiceGood, "Good answer"), button("👎", bridges.ChoiceBad, "Bad answer")))
}

// truncateToRunes returns the longest prefix of s with at most n runes.
func truncateToRunes(s string, n int) string {
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}
