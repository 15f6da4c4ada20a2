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
		{"task without title", append([]slackapi.MsgOption{slackapi.MsgOptionTS("1.1"), slackapi.MsgOptionChunks(slackapi.NewTaskUpdateChunk("t1", ""))}, recipient...), "C1", "invalid_arguments"},
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

// The fake checks plan chunks, task_display_mode and the final feedback
// blocks as Slack does (invalid_arguments), records them, and a click on
// a feedback button arrives as a block_actions interaction.
func TestStreamPlanAndFeedback(t *testing.T) {
	s := New(t)
	c := client(s, BotToken)
	ctx := t.Context()
	code := func(err error) string {
		if se, ok := errors.AsType[slackapi.SlackErrorResponse](err); ok {
			return se.Err
		}
		if err != nil {
			return err.Error()
		}
		return ""
	}
	in := []slackapi.MsgOption{slackapi.MsgOptionTS("1.1"), slackapi.MsgOptionRecipientUserID("U1"), slackapi.MsgOptionRecipientTeamID(TeamID)}
	if _, _, err := c.StartStreamContext(ctx, "C1", append(in, slackapi.MsgOptionTaskDisplayMode("board"))...); code(err) != "invalid_arguments" {
		t.Errorf("bad task_display_mode: %v", err)
	}
	if _, _, err := c.StartStreamContext(ctx, "C1", append(in, slackapi.MsgOptionChunks(slackapi.NewPlanUpdateChunk("")))...); code(err) != "invalid_arguments" {
		t.Errorf("plan without title: %v", err)
	}
	task := slackapi.NewTaskUpdateChunk("t1", "Bash: ls")
	task.Status = "running"
	if _, _, err := c.StartStreamContext(ctx, "C1", append(in, slackapi.MsgOptionChunks(task))...); code(err) != "invalid_arguments" {
		t.Errorf("bad task status: %v", err)
	}
	_, ts, err := c.StartStreamContext(ctx, "C1", append(in, slackapi.MsgOptionTaskDisplayMode(slackapi.TaskDisplayModePlan),
		slackapi.MsgOptionChunks(slackapi.NewPlanUpdateChunk("Plan"), slackapi.NewTaskUpdateChunk("p1", "Write tests")))...)
	if err != nil {
		t.Fatal(err)
	}
	fb := func() *slackapi.FeedbackButtonsBlockElement {
		return slackapi.NewFeedbackButtonsBlockElement("feedback",
			slackapi.NewFeedbackButton(slackapi.NewTextBlockObject("plain_text", "Good", false, false), "good"),
			slackapi.NewFeedbackButton(slackapi.NewTextBlockObject("plain_text", "Bad", false, false), "bad"))
	}
	six := make([]slackapi.BlockElement, 6)
	for i := range six {
		six[i] = fb()
	}
	if _, _, err := c.AppendStreamContext(ctx, "C1", ts, slackapi.MsgOptionBlocks(slackapi.NewContextActionsBlock("fb", fb()))); code(err) != "invalid_arguments" {
		t.Errorf("blocks on append: %v", err)
	}
	if _, _, err := c.StopStreamContext(ctx, "C1", ts, slackapi.MsgOptionBlocks(slackapi.NewContextActionsBlock("fb", six...))); code(err) != "invalid_arguments" {
		t.Errorf("six feedback elements: %v", err)
	}
	noValue := fb()
	noValue.NegativeButton.Value = ""
	if _, _, err := c.StopStreamContext(ctx, "C1", ts, slackapi.MsgOptionBlocks(slackapi.NewContextActionsBlock("fb", noValue))); code(err) != "invalid_arguments" {
		t.Errorf("feedback button without value: %v", err)
	}
	if _, _, err := c.StopStreamContext(ctx, "C1", ts, slackapi.MsgOptionBlocks(slackapi.NewContextActionsBlock("fb", fb()))); err != nil {
		t.Fatal(err)
	}
	m, _ := s.Current("C1", ts)
	if m.Plan != "Plan" || m.TaskDisplayMode != "plan" || len(m.Tasks) != 1 || m.Feedback == nil || m.Feedback.Positive != "good" {
		t.Fatalf("message = %+v", m)
	}
	id := s.ClickFeedback("C1", ts, "U1", true)
	env, ok := s.Envelope(id)
	if !ok || !strings.Contains(string(env.Payload), `"type":"feedback_buttons"`) || !strings.Contains(string(env.Payload), `"value":"good"`) {
		t.Errorf("click envelope = %+v", env)
	}
}
