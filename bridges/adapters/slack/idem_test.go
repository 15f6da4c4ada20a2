package slack

import (
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/adapters/slack/slackfake"
)

// postsOf returns the fake's posts that carry the reply key idem.
func postsOf(fake *slackfake.Server, idem string) []slackfake.Message {
	var out []slackfake.Message
	for _, p := range fake.Posts() {
		if p.Metadata != nil && p.Metadata.EventType == replyEventType && p.Metadata.EventPayload["idem"] == idem {
			out = append(out, p)
		}
	}
	return out
}

// A reply whose chat.postMessage reached Slack but whose answer was lost
// (connection closed, or a 502 from a proxy) is posted again by the core
// with the same Idem and Retry set: it shows once, and the ref is the
// message Slack kept.
func TestPostRetryAfterLostResponseShowsOnce(t *testing.T) {
	for _, tc := range []struct {
		name   string
		key    bridges.ConversationKey
		status int
	}{
		{"thread, connection closed", threadKey("100.000001"), 0},
		{"thread, 502", threadKey("100.000001"), 502},
		{"channel, connection closed", bridges.ConversationKey{Bot: "team", Channel: "D1"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := newFake(t)
			b, _ := newBridge(t, fake, slackfake.BotToken)
			b.setIdentity(identity{userID: slackfake.BotUserID, botID: slackfake.BotID})
			const idem = "6f1c1f9e-2f4b-4d7e-9d8a-2b1e1c0a9f11"
			fake.LoseResponses("chat.postMessage", 1, tc.status)
			_, err := b.Post(t.Context(), tc.key, bridges.Message{Text: "the answer", Idem: idem})
			if err == nil {
				t.Fatal("first Post succeeded; its answer should have been lost")
			}
			if bridges.IsPermanent(err) {
				t.Fatalf("a lost answer is permanent: %v", err)
			}
			ref, err := b.Post(t.Context(), tc.key, bridges.Message{Text: "the answer", Idem: idem, Retry: true})
			if err != nil {
				t.Fatal(err)
			}
			got := postsOf(fake, idem)
			if len(got) != 1 || len(fake.Posts()) != 1 {
				t.Fatalf("the reply shows %d times (%d posts in all), want once", len(got), len(fake.Posts()))
			}
			if ref.ID != got[0].TS || got[0].Text != "the answer" {
				t.Errorf("ref %+v, post %+v", ref, got[0])
			}
		})
	}
}

// A reply split into three parts whose first part's answer was lost: the
// retry posts only the two missing parts, in order.
func TestPostRetrySkipsPartsAlreadyPosted(t *testing.T) {
	fake := newFake(t)
	b, _ := newBridge(t, fake, slackfake.BotToken)
	b.setIdentity(identity{userID: slackfake.BotUserID, botID: slackfake.BotID})
	const idem = "0b7d2c53-5f5e-4a51-8f43-9a0f8b0e6d21"
	var sb strings.Builder
	for i := range 3 {
		sb.WriteString(strings.Repeat(string(rune('a'+i)), maxTextRunes-10) + "\n\n")
	}
	m := bridges.Message{Text: sb.String(), Idem: idem}
	fake.LoseResponses("chat.postMessage", 1, 0)
	if _, err := b.Post(t.Context(), threadKey("1.1"), m); err == nil || bridges.IsPermanent(err) {
		t.Fatalf("first Post: %v, want a transient error", err)
	}
	m.Retry = true
	ref, err := b.Post(t.Context(), threadKey("1.1"), m)
	if err != nil {
		t.Fatal(err)
	}
	got := postsOf(fake, idem)
	if len(got) != 3 {
		t.Fatalf("%d posts, want 3 (one per part)", len(got))
	}
	for i, p := range got {
		if part := p.Metadata.EventPayload["part"]; part != float64(i) || !strings.HasPrefix(p.Text, string(rune('a'+i))) {
			t.Errorf("post %d is part %v (%.10q…)", i, part, p.Text)
		}
	}
	if ref.ID != got[2].TS {
		t.Errorf("ref %s, want the last part %s", ref.ID, got[2].TS)
	}
}

// Another reply in the thread (another Idem), or a retry before anything
// reached Slack, is posted normally.
func TestPostRetryPostsWhatIsMissing(t *testing.T) {
	fake := newFake(t)
	b, _ := newBridge(t, fake, slackfake.BotToken)
	b.setIdentity(identity{userID: slackfake.BotUserID, botID: slackfake.BotID})
	if _, err := b.Post(t.Context(), threadKey("1.1"), bridges.Message{Text: "first", Idem: "idem-1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Post(t.Context(), threadKey("1.1"), bridges.Message{Text: "second", Idem: "idem-2", Retry: true}); err != nil {
		t.Fatal(err)
	}
	if n1, n2 := len(postsOf(fake, "idem-1")), len(postsOf(fake, "idem-2")); n1 != 1 || n2 != 1 {
		t.Errorf("posts: idem-1 %d, idem-2 %d; want 1 each", n1, n2)
	}
	if fake.CallCount("conversations.replies") != 1 {
		t.Errorf("%d conversations.replies calls, want 1 (only the retry looks)", fake.CallCount("conversations.replies"))
	}
}
