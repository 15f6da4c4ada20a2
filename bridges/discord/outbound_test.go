package discord

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/discord/discordfake"
	"github.com/bwmarrin/discordgo"
)

// wideTable is a GFM table that grows past 2,000 characters once drawn in
// a code block: one long name pads every row.
func wideTable(rows int) string {
	var b strings.Builder
	b.WriteString("| name | state |\n|---|---|\n")
	fmt.Fprintf(&b, "| %s | long |\n", strings.Repeat("n", 70))
	for i := range rows {
		fmt.Fprintf(&b, "| f%03d | ok |\n", i)
	}
	return b.String()
}

func TestPostLimits(t *testing.T) {
	t.Parallel()
	f := discordfake.New(t)
	b := newTestBridge(t, testBot(f)) // REST only: no Run needed
	key := bridges.ConversationKey{Bot: botName, Channel: "100", Thread: "200"}
	f.AddChannel("200", guild, "100", discordfake.ChannelPublicThread, "t")

	table := wideTable(60)
	if n := utf8.RuneCountInString(table); n > maxMessageRunes {
		t.Fatalf("test table is %d runes; the core would have split it", n)
	}
	tests := []struct {
		name  string
		text  string
		parts int
	}{
		{"short", "**done** — 3 files changed", 1},
		{"at the core's limit", strings.Repeat("é", maxMessageRunes), 1},
		{"table grows past 2000", table, 0}, // 0: more than one
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := len(f.Messages("200"))
			ref, err := b.Post(t.Context(), key, bridges.Message{Text: tc.text})
			if err != nil {
				t.Fatalf("Post: %v", err)
			}
			msgs := f.Messages("200")[before:]
			if tc.parts == 0 && len(msgs) < 2 || tc.parts > 0 && len(msgs) != tc.parts {
				t.Fatalf("posted %d messages, want %d", len(msgs), tc.parts)
			}
			if ref.ID != msgs[len(msgs)-1].ID || ref.Key != key {
				t.Errorf("ref = %+v, want the last message %s", ref, msgs[len(msgs)-1].ID)
			}
			for _, m := range msgs {
				if n := utf8.RuneCountInString(m.Content); n > maxContentRunes {
					t.Errorf("message of %d characters", n)
				}
				if strings.Count(m.Content, "```")%2 != 0 {
					t.Errorf("unbalanced code fence in part:\n%s", m.Content)
				}
				if m.AllowedMentions == nil || len(*m.AllowedMentions) != 0 {
					t.Errorf("allowed_mentions.parse = %v, want [] (no pings)", m.AllowedMentions)
				}
			}
		})
	}

	t.Run("empty", func(t *testing.T) {
		if _, err := b.Post(t.Context(), key, bridges.Message{Text: "  "}); !errors.Is(err, ErrBadMessage) {
			t.Errorf("err = %v, want ErrBadMessage", err)
		}
	})
	t.Run("edit truncates", func(t *testing.T) {
		ref, err := b.Post(t.Context(), key, bridges.Message{Text: "streaming…"})
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Edit(t.Context(), ref, bridges.Message{Text: "```\n" + strings.Repeat("line\n", 600) + "```"}); err != nil {
			t.Fatalf("Edit: %v", err)
		}
		m, _ := f.Message(ref.ID)
		if n := utf8.RuneCountInString(m.Content); n > maxContentRunes || !strings.HasSuffix(m.Content, "```\n…") {
			t.Errorf("edited content: %d characters, ends %q", n, m.Content[len(m.Content)-10:])
		}
	})
}

func TestComponents(t *testing.T) {
	t.Parallel()
	buttons := func(n int) []bridges.Button {
		var out []bridges.Button
		for i := range n {
			out = append(out, bridges.Button{ID: fmt.Sprintf("o%d", i), Label: strings.Repeat("L", 90)})
		}
		return out
	}
	tests := []struct {
		name    string
		msg     bridges.Message
		rows    []int // buttons per row
		wantErr bool
	}{
		{"none", bridges.Message{Text: "x"}, nil, false},
		{"seven", bridges.Message{CardID: "q1", Buttons: buttons(7)}, []int{5, 2}, false},
		{"twenty-five", bridges.Message{CardID: "q1", Buttons: buttons(25)}, []int{5, 5, 5, 5, 5}, false},
		{"twenty-six", bridges.Message{CardID: "q1", Buttons: buttons(26)}, nil, true},
		{"no card id", bridges.Message{Buttons: buttons(1)}, nil, true},
		{"colon in id", bridges.Message{CardID: "q1", Buttons: []bridges.Button{{ID: "a:b"}}}, nil, true},
		{"duplicate ids", bridges.Message{CardID: "q1", Buttons: []bridges.Button{{ID: "a"}, {ID: "a"}}}, nil, true},
		{"custom_id too long", bridges.Message{CardID: strings.Repeat("c", 95), Buttons: []bridges.Button{{ID: "allow"}}}, nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			comps, err := components(tc.msg)
			if tc.wantErr {
				if !errors.Is(err, ErrBadMessage) {
					t.Fatalf("err = %v, want ErrBadMessage", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if comps == nil {
				t.Fatal("components = nil; edits could not remove buttons")
			}
			var rows []int
			for _, c := range comps {
				row, ok := c.(discordgo.ActionsRow)
				if !ok {
					t.Fatalf("top-level component %T, want an action row", c)
				}
				rows = append(rows, len(row.Components))
				for _, bc := range row.Components {
					btn := bc.(discordgo.Button)
					if n := utf8.RuneCountInString(btn.Label); n > maxLabelRunes {
						t.Errorf("label of %d characters", n)
					}
				}
			}
			if !slices.Equal(rows, tc.rows) {
				t.Errorf("rows = %v, want %v", rows, tc.rows)
			}
		})
	}
}

func TestRateLimitedPostArrives(t *testing.T) {
	t.Parallel()
	f := discordfake.NewWithOptions(t, discordfake.Options{RetryAfter: 400 * time.Millisecond})
	b := newTestBridge(t, testBot(f))
	f.SendMessage("dm1", "", "u1", "hi", false) // creates the DM channel

	f.Inject429(discordfake.RouteCreateMessage, 1)
	start := time.Now()
	ref, err := b.Post(t.Context(), bridges.ConversationKey{Bot: botName, Channel: "dm1"}, bridges.Message{Text: "the answer"})
	took := time.Since(start)
	if err != nil {
		t.Fatalf("Post after 429: %v", err)
	}
	if took < 350*time.Millisecond {
		t.Errorf("Post took %v; the 429's retry_after (400ms) was not honoured", took)
	}
	if m, ok := f.Message(ref.ID); !ok || m.Content != "the answer" {
		t.Errorf("message = %+v, %v", m, ok)
	}
	if n := f.RequestCount(discordfake.RouteCreateMessage); n != 2 {
		t.Errorf("create-message requests = %d, want 2 (429 + retry)", n)
	}
	if n := len(f.Messages("dm1")); n != 2 {
		t.Errorf("dm has %d messages, want 2 (no duplicate post)", n)
	}
}

// TestStartThread: the message is posted in the channel and a thread is
// started on it; the key names the thread.
func TestStartThread(t *testing.T) {
	t.Parallel()
	f := discordfake.New(t)
	b := newTestBridge(t, testBot(f))
	f.AddChannel("100", guild, "", discordfake.ChannelGuildText, "general")
	key, ref, err := b.StartThread(t.Context(), bridges.ConversationKey{Bot: botName, Channel: "100"}, bridges.Message{Text: "⏰ scheduled: standup\n> summarise"})
	if err != nil {
		t.Fatal(err)
	}
	threads := f.Threads()
	if len(threads) != 1 || threads[0].MessageID != ref.ID || threads[0].ParentID != "100" || threads[0].Name != "⏰ scheduled: standup summarise" {
		t.Fatalf("threads = %+v, ref %+v", threads, ref)
	}
	if key != (bridges.ConversationKey{Bot: botName, Channel: "100", Thread: threads[0].ID}) {
		t.Errorf("key = %+v", key)
	}
}
