package slackfake

import (
	"testing"

	slackapi "github.com/slack-go/slack"
)

// Message metadata is stored with a post and returned by
// conversations.replies and conversations.history only with
// include_all_metadata, as Slack does; a thread's replies come oldest
// first, a channel's history newest first and without thread replies.
func TestConversationsMetadata(t *testing.T) {
	s := New(t)
	api := client(s, BotToken)
	md := slackapi.SlackMetadata{EventType: "agentbridge_reply", EventPayload: map[string]any{"idem": "k1", "part": 0}}
	_, parent, err := api.PostMessage("C1", slackapi.MsgOptionText("top", false))
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"r1", "r2"} {
		if _, _, err := api.PostMessage("C1", slackapi.MsgOptionText(text, false), slackapi.MsgOptionTS(parent), slackapi.MsgOptionMetadata(md)); err != nil {
			t.Fatal(err)
		}
	}
	msgs, _, _, err := api.GetConversationReplies(&slackapi.GetConversationRepliesParameters{ChannelID: "C1", Timestamp: parent, IncludeAllMetadata: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 3 || msgs[0].Text != "top" || msgs[2].Text != "r2" || msgs[1].Metadata.EventPayload["idem"] != "k1" || msgs[0].Metadata.EventType != "" {
		t.Errorf("replies with metadata: %+v", msgs)
	}
	msgs, _, _, err = api.GetConversationReplies(&slackapi.GetConversationRepliesParameters{ChannelID: "C1", Timestamp: parent})
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 3 || msgs[1].Metadata.EventType != "" {
		t.Errorf("replies without include_all_metadata carry metadata: %+v", msgs)
	}
	hist, err := api.GetConversationHistory(&slackapi.GetConversationHistoryParameters{ChannelID: "C1", IncludeAllMetadata: true, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(hist.Messages) != 1 || hist.Messages[0].Text != "top" || hist.HasMore {
		t.Errorf("history: %+v", hist)
	}
}
