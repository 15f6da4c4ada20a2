package slackfake

import (
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// MaxStreamMarkdown is Slack's limit on the markdown_text of one
// chat.startStream / appendStream / stopStream call (and on the text of
// each markdown_text chunk).
const MaxStreamMarkdown = 12000

// streamLocked serves chat.startStream, chat.appendStream and
// chat.stopStream with Slack's documented arguments:
//
//   - startStream: channel (required); thread_ts (the message streamed
//     into a thread; a top-level stream is accepted in DMs only here);
//     recipient_user_id and recipient_team_id (required outside DMs);
//     task_display_mode (timeline or plan; optional); markdown_text
//     and/or chunks (optional).
//   - appendStream: channel, ts (a message still streaming), and
//     markdown_text or chunks.
//   - stopStream: channel, ts, and optionally markdown_text, chunks,
//     blocks (the final blocks, e.g. a context_actions block with
//     feedback_buttons: see parseStopBlocks) and metadata (as
//     chat.postMessage's; Slack documents it on stopStream only, so the
//     other two ignore it).
//
// markdown_text is at most MaxStreamMarkdown characters (msg_too_long);
// chunks is a JSON array of markdown_text ({type, text}), task_update
// ({type, id, title, status?, details?, output?}; status one of pending,
// in_progress, complete, error), plan_update ({type, title}) and blocks
// chunks; a chunk of another shape is refused with invalid_arguments, as
// are blocks outside stopStream and a bad task_display_mode. s.mu is held.
func (s *Server) streamLocked(method string, p url.Values) apiResult {
	ch := p.Get("channel")
	if ch == "" {
		return fail("channel_not_found")
	}
	text := p.Get("markdown_text")
	if utf8.RuneCountInString(text) > MaxStreamMarkdown {
		return fail("msg_too_long")
	}
	chunks, res := parseChunks(p)
	if res.body != nil {
		return res
	}
	var md *Metadata
	if method == "chat.stopStream" { // elsewhere not an argument Slack documents: ignored, not stored
		if md, res = parseMetadata(p.Get("metadata")); res.body != nil {
			return res
		}
	}
	var fb *Feedback
	if p.Has("blocks") {
		if method != "chat.stopStream" {
			return fail("invalid_arguments")
		}
		if fb, res = parseStopBlocks(p.Get("blocks")); res.body != nil {
			return res
		}
	}
	if method == "chat.startStream" {
		mode := p.Get("task_display_mode")
		if mode != "" && mode != "timeline" && mode != "plan" {
			return fail("invalid_arguments")
		}
		thread, dm := p.Get("thread_ts"), channelType(ch) == "im"
		if thread == "" && !dm {
			return fail("invalid_arguments") // streamed messages answer someone: a thread outside DMs
		}
		if !dm && (p.Get("recipient_user_id") == "" || p.Get("recipient_team_id") == "") {
			return fail("invalid_arguments")
		}
		m := &Message{Channel: ch, TS: s.nextTS(), ThreadTS: thread, At: time.Now(), Stream: Streaming,
			Recipient: p.Get("recipient_user_id"), TaskDisplayMode: mode}
		applyStream(m, text, chunks)
		s.messages[ch+"/"+m.TS] = m
		s.posts = append(s.posts, *m)
		return ok(map[string]any{"channel": ch, "ts": m.TS})
	}
	ts := p.Get("ts")
	m, found := s.messages[ch+"/"+ts]
	switch {
	case ts == "" || !found:
		return fail("message_not_found")
	case m.Stream != Streaming:
		return fail("message_not_in_streaming_state")
	case method == "chat.appendStream" && text == "" && len(chunks) == 0:
		return fail("invalid_arguments") // markdown_text is required without chunks
	}
	applyStream(m, text, chunks)
	m.At = time.Now()
	if method == "chat.stopStream" {
		m.Stream = StreamStopped
		if md != nil {
			m.Metadata = md
		}
		if fb != nil {
			m.Blocks, m.Feedback = json.RawMessage(p.Get("blocks")), fb
		}
	}
	s.updates = append(s.updates, *m)
	return ok(map[string]any{"channel": ch, "ts": ts})
}

// streamChunk is one element of the chunks argument.
type streamChunk struct {
	Type    string          `json:"type"`
	Text    *string         `json:"text"`
	ID      string          `json:"id"`
	Title   string          `json:"title"`
	Status  string          `json:"status"`
	Details string          `json:"details"`
	Output  string          `json:"output"`
	Blocks  json.RawMessage `json:"blocks"`
}

// parseChunks checks the chunks argument (absent is fine).
func parseChunks(p url.Values) ([]streamChunk, apiResult) {
	raw := p.Get("chunks")
	if raw == "" {
		return nil, apiResult{}
	}
	var chunks []streamChunk
	if err := json.Unmarshal([]byte(raw), &chunks); err != nil {
		return nil, fail("invalid_arguments")
	}
	for _, c := range chunks {
		switch c.Type {
		case "markdown_text":
			if c.Text == nil || utf8.RuneCountInString(*c.Text) > MaxStreamMarkdown {
				return nil, fail("invalid_arguments")
			}
		case "task_update":
			if c.ID == "" || c.Title == "" {
				return nil, fail("invalid_arguments")
			}
			switch c.Status {
			case "", "pending", "in_progress", "complete", "error":
			default:
				return nil, fail("invalid_arguments")
			}
		case "plan_update":
			if c.Title == "" {
				return nil, fail("invalid_arguments")
			}
		case "blocks":
			if len(c.Blocks) == 0 {
				return nil, fail("invalid_arguments")
			}
		default:
			return nil, fail("invalid_arguments")
		}
	}
	return chunks, apiResult{}
}

// applyStream appends markdown and chunks to a streamed message.
func applyStream(m *Message, text string, chunks []streamChunk) {
	var b strings.Builder
	b.WriteString(m.Text)
	b.WriteString(text)
	for _, c := range chunks {
		switch c.Type {
		case "markdown_text":
			b.WriteString(*c.Text)
		case "plan_update":
			m.Plan = c.Title
		case "task_update":
			i := slices.IndexFunc(m.Tasks, func(t Task) bool { return t.ID == c.ID })
			if i < 0 {
				m.Tasks = append(m.Tasks, Task{ID: c.ID})
				i = len(m.Tasks) - 1
			}
			t := &m.Tasks[i]
			t.Title = c.Title
			if c.Status != "" {
				t.Status = c.Status
			}
			if c.Output != "" {
				t.Output = c.Output
			}
		}
	}
	m.Text = b.String()
	m.Tasks = slices.Clone(m.Tasks)
}

// MaxContextActions is Slack's limit on the elements of a context_actions
// block.
const MaxContextActions = 5

// Feedback is the feedback_buttons element of a stopped stream's
// context_actions block.
type Feedback struct {
	BlockID  string
	ActionID string
	Positive string // value of the 👍 button
	Negative string // value of the 👎 button
}

// parseStopBlocks checks chat.stopStream's blocks the way Slack does: a
// JSON array of at most 50 blocks; a context_actions block has 1 to
// MaxContextActions elements, each a feedback_buttons element (a
// positive_button and a negative_button, each with plain_text text and a
// value of 1..2000 characters) or an icon_button; other blocks follow
// parseBlocks. It returns the feedback buttons, if any; a bad block is
// refused with invalid_arguments.
func parseStopBlocks(raw string) (*Feedback, apiResult) {
	type button struct {
		Text *struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"text"`
		Value string `json:"value"`
	}
	type block struct {
		Type     string `json:"type"`
		BlockID  string `json:"block_id"`
		Elements []struct {
			Type     string  `json:"type"`
			ActionID string  `json:"action_id"`
			Icon     string  `json:"icon"`
			Positive *button `json:"positive_button"`
			Negative *button `json:"negative_button"`
		} `json:"elements"`
	}
	var all []json.RawMessage
	if err := json.Unmarshal([]byte(raw), &all); err != nil || len(all) > 50 {
		return nil, fail("invalid_arguments")
	}
	okButton := func(b *button) bool {
		return b != nil && b.Text != nil && b.Text.Type == "plain_text" && b.Text.Text != "" &&
			b.Value != "" && utf8.RuneCountInString(b.Value) <= 2000
	}
	var (
		fb   *Feedback
		rest []json.RawMessage // blocks of other types
	)
	for _, r := range all {
		var b block
		if err := json.Unmarshal(r, &b); err != nil {
			return nil, fail("invalid_arguments")
		}
		if b.Type != "context_actions" {
			rest = append(rest, r)
			continue
		}
		if len(b.Elements) == 0 || len(b.Elements) > MaxContextActions {
			return nil, fail("invalid_arguments")
		}
		for _, e := range b.Elements {
			switch {
			case e.Type == "feedback_buttons" && okButton(e.Positive) && okButton(e.Negative) && len(e.ActionID) <= 255:
				fb = &Feedback{BlockID: b.BlockID, ActionID: e.ActionID, Positive: e.Positive.Value, Negative: e.Negative.Value}
			case e.Type == "icon_button" && e.Icon != "":
			default:
				return nil, fail("invalid_arguments")
			}
		}
	}
	if len(rest) > 0 {
		others, err := json.Marshal(rest)
		if err != nil {
			return nil, fail("invalid_arguments")
		}
		if _, err := parseBlocks(string(others)); err != nil {
			return nil, fail("invalid_arguments")
		}
	}
	return fb, apiResult{}
}
