package slack

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/adapters/slack/slackfake"
)

func threadKey(thread string) bridges.ConversationKey {
	return bridges.ConversationKey{Bot: "team", Channel: "C1", Thread: thread}
}

func TestPostInThreadAsMrkdwn(t *testing.T) {
	fake := newFake(t)
	b, _ := newBridge(t, fake, slackfake.BotToken)
	ref, err := b.Post(t.Context(), threadKey("100.000001"), bridges.Message{Text: "**Done**: see [PR](https://example.com/pr/1) & `a<b`"})
	if err != nil {
		t.Fatal(err)
	}
	posts := fake.Posts()
	if len(posts) != 1 {
		t.Fatalf("%d posts, want 1", len(posts))
	}
	p := posts[0]
	if p.Channel != "C1" || p.ThreadTS != "100.000001" || p.TS != ref.ID || ref.Key != threadKey("100.000001") {
		t.Errorf("post %+v, ref %+v", p, ref)
	}
	if want := "*Done*: see <https://example.com/pr/1|PR> &amp; `a&lt;b`"; p.Text != want {
		t.Errorf("text = %q, want %q", p.Text, want)
	}
	if p.Blocks != nil {
		t.Errorf("plain message has blocks: %s", p.Blocks)
	}
}

func TestPostTopLevelDM(t *testing.T) {
	fake := newFake(t)
	b, _ := newBridge(t, fake, slackfake.BotToken)
	if _, err := b.Post(t.Context(), bridges.ConversationKey{Bot: "team", Channel: "D1"}, bridges.Message{Text: "hi"}); err != nil {
		t.Fatal(err)
	}
	if p := fake.Posts()[0]; p.Channel != "D1" || p.ThreadTS != "" {
		t.Errorf("DM post %+v, want top level in D1", p)
	}
}

// Conversion can grow text past Slack's 4,000 characters (each & becomes
// &amp;): Post splits it again and returns the last message.
func TestPostSplitsLongConvertedText(t *testing.T) {
	fake := newFake(t)
	b, _ := newBridge(t, fake, slackfake.BotToken)
	text := strings.Repeat("a & b < c. ", maxMessageRunes/11) // ~3,500 runes → ~5,700 after escaping
	ref, err := b.Post(t.Context(), threadKey("1.1"), bridges.Message{Text: text})
	if err != nil {
		t.Fatal(err)
	}
	posts := fake.Posts()
	if len(posts) < 2 {
		t.Fatalf("%d posts, want the text split", len(posts))
	}
	var joined strings.Builder
	for _, p := range posts {
		if n := utf8.RuneCountInString(p.Text); n > maxTextRunes {
			t.Errorf("post of %d chars > %d", n, maxTextRunes)
		}
		if p.ThreadTS != "1.1" {
			t.Errorf("part outside the thread: %+v", p)
		}
		joined.WriteString(p.Text + " ")
	}
	if ref.ID != posts[len(posts)-1].TS {
		t.Errorf("ref %s, want the last part %s", ref.ID, posts[len(posts)-1].TS)
	}
	if got, want := strings.Count(joined.String(), "&amp;"), strings.Count(text, "&"); got != want {
		t.Errorf("%d escaped ampersands across parts, want %d", got, want)
	}
}

func TestPostRetriesAfter429(t *testing.T) {
	fake := newFake(t)
	b, logs := newBridge(t, fake, slackfake.BotToken)
	fake.Inject429("chat.postMessage", 1)
	start := time.Now()
	ref, err := b.Post(t.Context(), threadKey("1.1"), bridges.Message{Text: "final answer"})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < time.Second {
		t.Errorf("Post returned after %v, want it to wait Retry-After (1s)", d)
	}
	if n := fake.CallCount("chat.postMessage"); n != 2 {
		t.Errorf("%d chat.postMessage calls, want 2 (429 + retry)", n)
	}
	if p, ok := fake.Current("C1", ref.ID); !ok || p.Text != "final answer" {
		t.Errorf("posted message = %+v, %v", p, ok)
	}
	if !strings.Contains(logs.String(), "rate limited") {
		t.Error("rate limit not logged")
	}
}

func TestPostRateLimitBoundedByContext(t *testing.T) {
	fake := newFake(t)
	b, _ := newBridge(t, fake, slackfake.BotToken)
	fake.Inject429("chat.postMessage", 100)
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	_, err := b.Post(ctx, threadKey("1.1"), bridges.Message{Text: "x"})
	if err == nil || ctx.Err() == nil {
		t.Fatalf("Post = %v, want an error once ctx ended", err)
	}
}

func TestEditReplacesText(t *testing.T) {
	fake := newFake(t)
	b, _ := newBridge(t, fake, slackfake.BotToken)
	ref, err := b.Post(t.Context(), threadKey("1.1"), bridges.Message{Text: "thinking"})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Edit(t.Context(), ref, bridges.Message{Text: "**answer**"}); err != nil {
		t.Fatal(err)
	}
	if cur, _ := fake.Current("C1", ref.ID); cur.Text != "*answer*" {
		t.Errorf("after edit text = %q", cur.Text)
	}
}

// A rate-limited Edit gives way to a newer Edit of the same message: the
// newer text wins and the older one is not sent again.
func TestEditSupersededWhileRateLimited(t *testing.T) {
	fake := newFake(t)
	b, _ := newBridge(t, fake, slackfake.BotToken)
	ref, err := b.Post(t.Context(), threadKey("1.1"), bridges.Message{Text: "v0"})
	if err != nil {
		t.Fatal(err)
	}
	fake.Inject429("chat.update", 1)
	var wg sync.WaitGroup
	var oldErr error
	wg.Go(func() { oldErr = b.Edit(t.Context(), ref, bridges.Message{Text: "v1"}) })
	if err := fake.WaitFor(func() bool { return fake.CallCount("chat.update") == 1 }, waitLong); err != nil {
		t.Fatal(err)
	}
	if err := b.Edit(t.Context(), ref, bridges.Message{Text: "v2"}); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if oldErr != nil {
		t.Errorf("superseded Edit returned %v, want nil", oldErr)
	}
	if n := fake.CallCount("chat.update"); n != 2 {
		t.Errorf("%d chat.update calls, want 2 (the 429 and v2)", n)
	}
	if cur, _ := fake.Current("C1", ref.ID); cur.Text != "v2" {
		t.Errorf("text = %q, want v2", cur.Text)
	}
}

// A big card stays within Block Kit's limits (the fake rejects anything
// over them with invalid_blocks, as Slack does).
func TestCardWithinBlockKitLimits(t *testing.T) {
	fake := newFake(t)
	b, _ := newBridge(t, fake, slackfake.BotToken)
	var buttons []bridges.Button
	for i := range 30 {
		buttons = append(buttons, bridges.Button{ID: fmt.Sprintf("opt%d", i), Label: strings.Repeat("L", 100)})
	}
	long := strings.Repeat("line of text\n\n", 1500) // ~21,000 chars
	if _, err := b.Post(t.Context(), threadKey("1.1"), bridges.Message{Text: long, CardID: "card-1", Buttons: buttons}); err != nil {
		t.Fatal(err)
	}
	p := fake.Posts()[0]
	if len(p.Buttons) != 30 {
		t.Errorf("%d buttons, want 30", len(p.Buttons))
	}
	total := 0
	for _, s := range p.Sections {
		total += utf8.RuneCountInString(s)
	}
	if total > maxCardRunes+50 || !strings.Contains(p.Sections[len(p.Sections)-1], "truncated") {
		t.Errorf("card text of %d chars in %d sections; want it capped and marked truncated", total, len(p.Sections))
	}
	if n := utf8.RuneCountInString(p.Text); n == 0 || n > maxSectionRunes {
		t.Errorf("notification text of %d chars", n)
	}
	if p.Buttons[0].BlockID != "card:card-1" || p.Buttons[29].BlockID != "card:card-1:1" {
		t.Errorf("block ids %q / %q", p.Buttons[0].BlockID, p.Buttons[29].BlockID)
	}
}

// Editing a card with buttons keeps it a card (e.g. a countdown).
func TestEditKeepsButtons(t *testing.T) {
	fake := newFake(t)
	b, _ := newBridge(t, fake, slackfake.BotToken)
	msg := bridges.Message{Text: "approve?", CardID: "c", Buttons: []bridges.Button{{ID: "yes", Label: "Yes"}}}
	ref, err := b.Post(t.Context(), threadKey("1.1"), msg)
	if err != nil {
		t.Fatal(err)
	}
	msg.Text = "approve? (5 min left)"
	if err := b.Edit(t.Context(), ref, msg); err != nil {
		t.Fatal(err)
	}
	cur, _ := fake.Current("C1", ref.ID)
	if len(cur.Buttons) != 1 || cur.Sections[0] != "approve? (5 min left)" {
		t.Errorf("after edit: %+v", cur)
	}
}

// TestStartThread: the message is posted at the top of the channel and
// its ts is the new conversation's thread.
func TestStartThread(t *testing.T) {
	fake := newFake(t)
	b, _ := newBridge(t, fake, slackfake.BotToken)
	key, ref, err := b.StartThread(t.Context(), bridges.ConversationKey{Bot: "team", Channel: "C0001", Thread: "ignored"}, bridges.Message{Text: "⏰ scheduled: standup"})
	if err != nil {
		t.Fatal(err)
	}
	posts := fake.Posts()
	if len(posts) != 1 || posts[0].ThreadTS != "" || posts[0].Channel != "C0001" {
		t.Fatalf("posts = %+v", posts)
	}
	if key != (bridges.ConversationKey{Bot: "team", Channel: "C0001", Thread: posts[0].TS}) || ref.ID != posts[0].TS {
		t.Errorf("key = %+v, ref = %+v", key, ref)
	}
}
