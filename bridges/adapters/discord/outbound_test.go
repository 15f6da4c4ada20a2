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
	"github.com/agentbridge/agentbridge/bridges/adapters/discord/discordfake"
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
	if n := utf8.RuneCountInString(toDiscord(table)); n <= maxV2Text {
		t.Fatalf("test table drawn is %d runes; want more than one message holds", n)
	}
	tests := []struct {
		name  string
		text  string
		parts int
	}{
		{"short", "**done** — 3 files changed", 1},
		{"at the core's limit", strings.Repeat("é", maxMessageRunes), 1},
		{"table grows past 4000", table, 0}, // 0: more than one
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
				if n := utf8.RuneCountInString(m.Text); n > maxV2Text || m.V2 != (n > maxContentRunes) {
					t.Errorf("message of %d characters, Components V2 %v", n, m.V2)
				}
				if strings.Count(m.Text, "```")%2 != 0 {
					t.Errorf("unbalanced code fence in part:\n%s", m.Text)
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
		if err := b.Edit(t.Context(), ref, bridges.Message{Text: "```\n" + strings.Repeat("line\n", 1000) + "```"}); err != nil {
			t.Fatalf("Edit: %v", err)
		}
		m, _ := f.Message(ref.ID)
		if n := utf8.RuneCountInString(m.Text); !m.V2 || n > maxV2Text || !strings.HasSuffix(m.Text, "```\n…") {
			t.Errorf("edited text: V2 %v, %d characters, ends %q", m.V2, n, m.Text[len(m.Text)-10:])
		}
	})
}

// TestLongTextAsComponentsV2: a text longer than an ordinary message's
// 2,000 characters goes out as one Components V2 message (a container with
// a text display, no content) instead of two ordinary ones; longer than
// 4,000 it is split into several. A streamed message that grows past
// 2,000 characters becomes V2 by an edit that clears its content, and
// every later edit keeps the flag, also when the text shrinks again.
func TestLongTextAsComponentsV2(t *testing.T) {
	t.Parallel()
	f := discordfake.New(t)
	b := newTestBridge(t, testBot(f))
	key := bridges.ConversationKey{Bot: botName, Channel: "100", Thread: "200"}
	f.AddChannel("200", guild, "100", discordfake.ChannelPublicThread, "t")
	para := func(c string, n int) string { return strings.Repeat(c, n) }

	t.Run("one V2 message up to 4000", func(t *testing.T) {
		before := len(f.Messages("200"))
		text := para("a", 1500) + "\n\n" + para("b", 1500)
		ref, err := b.Post(t.Context(), key, bridges.Message{Text: text})
		if err != nil {
			t.Fatalf("Post: %v", err)
		}
		msgs := f.Messages("200")[before:]
		if len(msgs) != 1 || msgs[0].ID != ref.ID {
			t.Fatalf("posted %d messages, want one", len(msgs))
		}
		m := msgs[0]
		if !m.V2 || m.Content != "" || m.Text != text || len(m.Rows) != 0 {
			t.Errorf("message: V2 %v, content %.20q, text of %d characters, rows %v", m.V2, m.Content, len(m.Text), m.Rows)
		}
		if m.AllowedMentions == nil || len(*m.AllowedMentions) != 0 {
			t.Errorf("allowed_mentions.parse = %v, want [] (no pings)", m.AllowedMentions)
		}
	})
	t.Run("short stays ordinary", func(t *testing.T) {
		ref, err := b.Post(t.Context(), key, bridges.Message{Text: para("s", 1990)})
		if err != nil {
			t.Fatal(err)
		}
		if m, _ := f.Message(ref.ID); m.V2 || m.Content != para("s", 1990) {
			t.Errorf("short message: V2 %v, content of %d characters", m.V2, len(m.Content))
		}
	})
	t.Run("longer split into several", func(t *testing.T) {
		before := len(f.Messages("200"))
		text := para("a", 3500) + "\n\n" + para("b", 3500) + "\n\n" + para("c", 1000)
		if _, err := b.Post(t.Context(), key, bridges.Message{Text: text}); err != nil {
			t.Fatal(err)
		}
		msgs := f.Messages("200")[before:]
		if len(msgs) != 3 || !msgs[0].V2 || !msgs[1].V2 || msgs[2].V2 ||
			msgs[0].Text != para("a", 3500) || msgs[1].Text != para("b", 3500) || msgs[2].Content != para("c", 1000) {
			for _, m := range msgs {
				t.Logf("message: V2 %v, %d characters of text, %d of content", m.V2, len(m.Text), len(m.Content))
			}
			t.Errorf("%d messages, want a and b as V2, c ordinary", len(msgs))
		}
	})
	t.Run("streamed past 2000", func(t *testing.T) {
		ref, err := b.Post(t.Context(), key, bridges.Message{Text: "Working …"})
		if err != nil {
			t.Fatal(err)
		}
		steps := []struct {
			text string
			v2   bool
		}{
			{para("x", 1800) + " …", false},
			{para("x", 2600) + " …", true},
			{para("x", 3700), true},
			{"Done.", true}, // the flag stays for life
		}
		edits := len(f.Edits())
		for i, st := range steps {
			if err := b.Edit(t.Context(), ref, bridges.Message{Text: st.text}); err != nil {
				t.Fatalf("edit %d: %v", i, err)
			}
			m, _ := f.Message(ref.ID)
			if m.V2 != st.v2 || m.Text != st.text || (m.V2 && m.Content != "") {
				t.Errorf("after edit %d: V2 %v (want %v), text of %d characters, content %.20q", i, m.V2, st.v2, len(m.Text), m.Content)
			}
		}
		for i, e := range f.Edits()[edits:] {
			if want := steps[i].v2; (e.Flags&discordfake.FlagComponentsV2 != 0) != want || e.V2 != want {
				t.Errorf("edit %d: flags %d, V2 %v; want the flag %v", i, e.Flags, e.V2, want)
			}
		}
		// A new adapter (a restart) does not know the message is V2: its
		// edit is refused for want of the flag and made again as V2.
		b2 := newTestBridge(t, testBot(f))
		if err := b2.Edit(t.Context(), ref, bridges.Message{Text: "Done again."}); err != nil {
			t.Fatalf("edit after a restart: %v", err)
		}
		if m, _ := f.Message(ref.ID); !m.V2 || m.Text != "Done again." {
			t.Errorf("after a restart: %+v", m)
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
