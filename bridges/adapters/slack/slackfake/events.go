package slackfake

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// Msg describes a user message to deliver as events.
type Msg struct {
	Channel     string
	User        string
	Text        string // Slack wire text: escaped, mentions as <@U…>
	ThreadTS    string // "" for a top-level message
	ChannelType string // default: from the channel id (D… im, G… mpim, else channel)
	BotID       string // set for a message from a bot
	Subtype     string // e.g. "message_changed", "bot_message"; "file_share" is set for Files
	Files       []File
	// Shared is a message this one shares (forwards), sent as an
	// attachment with is_share (or is_msg_unfurl for a pasted link).
	Shared *Shared
	// MentionFirst sends the app_mention event before the message event
	// (Slack does not promise an order).
	MentionFirst bool
}

// Shared is a shared or unfurled message inside a Msg.
type Shared struct {
	AuthorID   string
	AuthorName string
	Text       string // Slack wire text
	Files      []File
	Unfurl     bool // a message link unfurl (is_msg_unfurl) instead of a share
}

func (sh *Shared) event(channel, ts string) map[string]any {
	a := map[string]any{
		"author_id": sh.AuthorID, "author_name": sh.AuthorName, "text": sh.Text, "fallback": "[no preview available]",
		"ts": ts, "channel_id": channel, "from_url": "https://example.slack.com/archives/" + channel + "/p" + strings.ReplaceAll(ts, ".", ""),
		"mrkdwn_in": []string{"text"}, "color": "D0D0D0",
	}
	if sh.Unfurl {
		a["is_msg_unfurl"] = true
	} else {
		a["is_share"] = true
	}
	if len(sh.Files) > 0 {
		var files []map[string]any
		for _, f := range sh.Files {
			files = append(files, f.event())
		}
		a["files"] = files
	}
	return a
}

// Sent describes what Send delivered.
type Sent struct {
	TS        string   // the new message's ts
	Envelopes []string // envelope ids, in sending order
}

// SendMessage delivers a user message (escape &, < and > in the text as
// Slack does). A text that mentions the bot outside a DM is also sent as
// an app_mention event. It returns the message's ts.
func (s *Server) SendMessage(channel, user, text, threadTS string) string {
	return s.Send(Msg{Channel: channel, User: user, Text: text, ThreadTS: threadTS}).TS
}

// Mention delivers "<@BOT> text" from user (see SendMessage).
func (s *Server) Mention(channel, user, text, threadTS string) string {
	return s.SendMessage(channel, user, "<@"+BotUserID+"> "+text, threadTS)
}

// Send delivers a message as Slack would: a "message" event, plus an
// "app_mention" event with the same ts when the text mentions the bot
// outside a DM.
func (s *Server) Send(m Msg) Sent {
	s.mu.Lock()
	defer s.mu.Unlock()
	ts := s.nextTS()
	ctype := m.ChannelType
	if ctype == "" {
		ctype = channelType(m.Channel)
	}
	base := map[string]any{
		"user":    m.User,
		"text":    m.Text,
		"ts":      ts,
		"channel": m.Channel,
		"team":    TeamID,
	}
	if m.ThreadTS != "" {
		base["thread_ts"] = m.ThreadTS
	}
	if m.BotID != "" {
		base["bot_id"] = m.BotID
	}
	if len(m.Files) > 0 {
		var files []map[string]any
		for _, f := range m.Files {
			files = append(files, f.event())
		}
		base["files"] = files
		base["upload"] = true
	}
	if m.Shared != nil {
		base["attachments"] = []map[string]any{m.Shared.event(m.Channel, s.nextTS())}
	}
	subtype := m.Subtype
	if subtype == "" && len(m.Files) > 0 {
		subtype = "file_share"
	}
	if m.User != "" && m.BotID == "" && (subtype == "" || subtype == "file_share" || subtype == "thread_broadcast") {
		stored := clone(base)
		stored["type"] = "message"
		s.userMsgs = append(s.userMsgs, userMsg{channel: m.Channel, ts: ts, threadTS: m.ThreadTS, wire: stored})
	}
	msg := clone(base)
	msg["type"] = "message"
	msg["channel_type"] = ctype
	msg["event_ts"] = ts
	if subtype != "" {
		msg["subtype"] = subtype
	}
	if m.User != "" && m.BotID == "" {
		msg["client_msg_id"] = s.nextID("cm-")
	}
	var events []map[string]any
	events = append(events, msg)
	if ctype != "im" && strings.Contains(m.Text, "<@"+BotUserID) && subtype != "message_changed" && subtype != "message_deleted" {
		mention := clone(base)
		mention["type"] = "app_mention"
		mention["event_ts"] = ts
		if m.MentionFirst {
			events = append([]map[string]any{mention}, events...)
		} else {
			events = append(events, mention)
		}
	}
	sent := Sent{TS: ts}
	for _, ev := range events {
		sent.Envelopes = append(sent.Envelopes, s.eventLocked(ev, ts))
	}
	return sent
}

// SendEvent delivers any Events API inner event (e.g. a reaction_added)
// and returns the envelope id. ts is recorded as the envelope's TS.
func (s *Server) SendEvent(event map[string]any, ts string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.eventLocked(event, ts)
}

// eventLocked wraps an inner event in an event_callback and queues it.
func (s *Server) eventLocked(event map[string]any, ts string) string {
	payload, _ := json.Marshal(map[string]any{
		"token":      "slackfake-verification-token",
		"team_id":    TeamID,
		"api_app_id": AppID,
		"event":      event,
		"type":       "event_callback",
		"event_id":   s.nextID("Ev"),
		"event_time": time.Now().Unix(),
		"authorizations": []map[string]any{{
			"team_id": TeamID, "user_id": BotUserID, "is_bot": true,
		}},
	})
	return s.queueLocked("events_api", payload, ts, 0, "")
}

// Resend sends an envelope's payload again as a Slack retry (new
// envelope id, retry_attempt+1), as Slack does for events that were not
// acknowledged in time. It returns the new envelope id, or "" if id is
// unknown.
func (s *Server) Resend(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.byEnvelope[id]
	if !ok {
		return ""
	}
	return s.queueLocked(e.Type, e.Payload, e.TS, e.Retry+1, e.ID)
}

// Click sends a block_actions interaction: user pressed the button
// actionID on the bot's message ts in channel. value "" uses the value of
// that button as posted. It returns the envelope id.
func (s *Server) Click(channel, messageTS, user, actionID, value string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	blockID, label := "unknown-block", actionID
	message := map[string]any{"type": "message", "ts": messageTS, "user": BotUserID, "bot_id": BotID}
	threadTS := ""
	if m, ok := s.messages[channel+"/"+messageTS]; ok {
		threadTS = m.ThreadTS
		message["text"] = m.Text
		if m.ThreadTS != "" {
			message["thread_ts"] = m.ThreadTS
		}
		if m.Blocks != nil {
			message["blocks"] = m.Blocks
		}
		for _, b := range m.Buttons {
			if b.ActionID == actionID {
				blockID, label = b.BlockID, b.Text
				if value == "" {
					value = b.Value
				}
				break
			}
		}
	}
	container := map[string]any{
		"type": "message", "message_ts": messageTS, "channel_id": channel, "is_ephemeral": false,
	}
	if threadTS != "" {
		container["thread_ts"] = threadTS
	}
	actionTS := s.nextTS()
	payload, _ := json.Marshal(map[string]any{
		"type":         "block_actions",
		"token":        "slackfake-verification-token",
		"api_app_id":   AppID,
		"trigger_id":   s.nextID("trig-"),
		"team":         map[string]any{"id": TeamID, "domain": "slackfake"},
		"user":         map[string]any{"id": user, "username": strings.ToLower(user), "name": strings.ToLower(user), "team_id": TeamID},
		"channel":      map[string]any{"id": channel, "name": strings.ToLower(channel)},
		"container":    container,
		"message":      message,
		"response_url": s.http.URL + "/response/" + strconv.Itoa(s.seq),
		"actions": []map[string]any{{
			"type":      "button",
			"action_id": actionID,
			"block_id":  blockID,
			"value":     value,
			"text":      map[string]any{"type": "plain_text", "text": label, "emoji": true},
			"action_ts": actionTS,
		}},
	})
	return s.queueLocked("interactive", payload, "", 0, "")
}

func clone(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+4)
	for k, v := range m {
		out[k] = v
	}
	return out
}

// ClickFeedback sends the block_actions interaction of user pressing the
// 👍 (positive) or 👎 button of the feedback buttons a stopped stream
// carries (Message.Feedback). It returns the envelope id, or "" when the
// message has no feedback buttons.
func (s *Server) ClickFeedback(channel, messageTS, user string, positive bool) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.messages[channel+"/"+messageTS]
	if !ok || m.Feedback == nil {
		return ""
	}
	fb := m.Feedback
	value := fb.Negative
	if positive {
		value = fb.Positive
	}
	message := map[string]any{"type": "message", "ts": messageTS, "user": BotUserID, "bot_id": BotID, "text": m.Text, "blocks": m.Blocks}
	container := map[string]any{"type": "message", "message_ts": messageTS, "channel_id": channel, "is_ephemeral": false}
	if m.ThreadTS != "" {
		message["thread_ts"], container["thread_ts"] = m.ThreadTS, m.ThreadTS
	}
	payload, _ := json.Marshal(map[string]any{
		"type":         "block_actions",
		"token":        "slackfake-verification-token",
		"api_app_id":   AppID,
		"trigger_id":   s.nextID("trig-"),
		"team":         map[string]any{"id": TeamID, "domain": "slackfake"},
		"user":         map[string]any{"id": user, "username": strings.ToLower(user), "name": strings.ToLower(user), "team_id": TeamID},
		"channel":      map[string]any{"id": channel, "name": strings.ToLower(channel)},
		"container":    container,
		"message":      message,
		"response_url": s.http.URL + "/response/" + strconv.Itoa(s.seq),
		"actions": []map[string]any{{
			"type":      "feedback_buttons",
			"action_id": fb.ActionID,
			"block_id":  fb.BlockID,
			"value":     value,
			"action_ts": s.nextTS(),
		}},
	})
	return s.queueLocked("interactive", payload, "", 0, "")
}
