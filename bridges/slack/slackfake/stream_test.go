package slackfake

import (
	"errors"
	"strings"
	"testing"

	slackapi "github.com/slack-go/slack"
)

// The fake enforces Slack's documented arguments and limits of the three
// streaming methods.
func TestStreamMethodsLimits(t *testing.T) {
	s := New(t)
	c := client(s, BotToken)
	ctx := t.Context()
	code := func(err error) string {
		var se slackapi.SlackErrorResponse
		if errors.As(err, &se) {
			return se.Err
		}
		if err != nil {
			return err.Error()
		}
		return ""
	}
	recipient := []slackapi.MsgOption{slackapi.MsgOptionRecipientUserID("U1"), slackapi.MsgOptionRecipientTeamID(TeamID)}
	tests := []struct {
		name string
		opts []slackapi.MsgOption
		ch   string
		want string
	}{
		{"channel without a thread", recipient, "C1", "invalid_arguments"},
		{"channel thread without recipient", []slackapi.MsgOption{slackapi.MsgOptionTS("1.1")}, "C1", "invalid_arguments"},
		{"markdown over 12,000", append([]slackapi.MsgOption{slackapi.MsgOptionTS("1.1"), slackapi.MsgOptionMarkdownText(strings.Repeat("x", 12001))}, recipient...), "C1", "msg_too_long"},
		{"task without title", append([]slackapi.MsgOption{slackapi.MsgOptionTS("1.1"), slackapi.MsgOptionChunks(slackapi.NewTaskUpdateChunk("t1", ""))}, recipient...), "C1", "invalid_chunks"},
		{"thread in a channel", append([]slackapi.MsgOption{slackapi.MsgOptionTS("1.1"), slackapi.MsgOptionMarkdownText(strings.Repeat("x", 12000))}, recipient...), "C1", ""},
		{"top-level DM", nil, "D1", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := c.StartStreamContext(ctx, tt.ch, tt.opts...)
			if got := code(err); got != tt.want {
				t.Errorf("startStream error %q, want %q", got, tt.want)
			}
		})
	}

	_, ts, err := c.StartStreamContext(ctx, "D1", slackapi.MsgOptionMarkdownText("a"))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.AppendStreamContext(ctx, "D1", ts); code(err) != "invalid_arguments" {
		t.Errorf("empty append: %v, want invalid_arguments", err)
	}
	if _, _, err := c.AppendStreamContext(ctx, "D1", ts, slackapi.MsgOptionMarkdownText("b")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.StopStreamContext(ctx, "D1", ts, slackapi.MsgOptionMarkdownText("c")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.AppendStreamContext(ctx, "D1", ts, slackapi.MsgOptionMarkdownText("d")); code(err) != "message_not_in_streaming_state" {
		t.Errorf("append after stop: %v", err)
	}
	if m, _ := s.Current("D1", ts); m.Text != "abc" || m.Stream != StreamStopped {
		t.Errorf("message = %+v", m)
	}
}
