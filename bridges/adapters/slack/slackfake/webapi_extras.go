package slackfake

// The Web API methods beside posting and editing: ephemeral messages,
// reactions, assistant statuses, and what users and channels are.

import (
	"net/url"
	"strings"
	"time"
)

// ephemeralLocked posts an ephemeral message (chat.postEphemeral).
func (s *Server) ephemeralLocked(p url.Values) apiResult {
	if p.Get("channel") == "" || p.Get("user") == "" {
		return fail("channel_not_found")
	}
	blocks, res := checkContent(p)
	if res.body != nil {
		return res
	}
	s.ephemerals = append(s.ephemerals, Ephemeral{
		Channel: p.Get("channel"), User: p.Get("user"), ThreadTS: p.Get("thread_ts"),
		Text: p.Get("text"), Blocks: blocks.raw, At: time.Now(),
	})
	return ok(map[string]any{"message_ts": s.nextTS()})
}

// reactionLocked adds or removes a reaction (reactions.add, reactions.remove):
// adding one twice or removing one not there fails as Slack does.
func (s *Server) reactionLocked(method string, p url.Values) apiResult {
	ch, ts, name := p.Get("channel"), p.Get("timestamp"), p.Get("name")
	if ch == "" || ts == "" || name == "" {
		return fail("invalid_arguments")
	}
	key := ch + "/" + ts + "/" + name
	added := method == "reactions.add"
	if added && s.reactionSet[key] {
		return fail("already_reacted")
	}
	if !added && !s.reactionSet[key] {
		return fail("no_reaction")
	}
	s.reactionSet[key] = added
	s.reactions = append(s.reactions, Reaction{Channel: ch, TS: ts, Name: name, Added: added, At: time.Now()})
	return ok(nil)
}

// setStatusLocked records an assistant thread's status
// (assistant.threads.setStatus).
func (s *Server) setStatusLocked(p url.Values) apiResult {
	if p.Get("channel_id") == "" || p.Get("thread_ts") == "" {
		return fail("invalid_arguments")
	}
	s.statuses = append(s.statuses, Status{Channel: p.Get("channel_id"), ThreadTS: p.Get("thread_ts"), Status: p.Get("status"), At: time.Now()})
	return ok(nil)
}

// userInfoLocked describes a user (users.info); one not added with
// AddUser gets a name made from its id.
func (s *Server) userInfoLocked(p url.Values) apiResult {
	id := p.Get("user")
	if id == "" {
		return fail("user_not_found")
	}
	u, known := s.users[id]
	if !known {
		u = User{ID: id, Name: strings.ToLower(id), RealName: "User " + id}
	}
	return ok(map[string]any{"user": map[string]any{
		"id": u.ID, "name": u.Name, "real_name": u.RealName, "team_id": TeamID,
		"profile": map[string]any{"real_name": u.RealName, "display_name": u.DisplayName},
	}})
}

// conversationInfoLocked describes a channel (conversations.info), its
// type from its id.
func (s *Server) conversationInfoLocked(p url.Values) apiResult {
	ch := p.Get("channel")
	if ch == "" {
		return fail("channel_not_found")
	}
	t := channelType(ch)
	return ok(map[string]any{"channel": map[string]any{
		"id": ch, "name": strings.ToLower(ch), "is_im": t == "im", "is_mpim": t == "mpim",
		"is_channel": t == "channel", "is_member": true,
	}})
}
