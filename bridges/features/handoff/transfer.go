package handoff

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/access"
	"github.com/agentbridge/agentbridge/bridges/core/sessiondir"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/profile"
	"github.com/agentbridge/agentbridge/store"
)

// cliDir is session id's CLI config dir in the bridge's data:
// data_dir/sessions/<id>/claude (see agent.Options.StateDir).
func cliDir(dataDir, id string) string {
	return filepath.Join(dataDir, sessiondir.Dir, id, "claude")
}

// acpProfile returns the name of the agent profile conversation conv
// runs on (the one !agent moved it to, else the one it was created with,
// else its bot's) and whether it is of kind acp, or conv's session
// directory holds an ACP agent's record (sessiondir.IsACP: the profile
// was changed since). Hand-off moves Claude Code sessions only: an ACP
// agent's session is in its own format, in its home.
func acpProfile(cfg *config.Config, conv store.Conversation) (string, bool) {
	name := cmp.Or(conv.AgentOverride, conv.Agent)
	prof := cfg.Agents[name]
	if prof == nil {
		if bot := cfg.Bot(conv.Key.Bot); bot != nil {
			name, prof = bot.Agent, cfg.Agents[bot.Agent]
		}
	}
	acp := prof != nil && prof.Kind == profile.KindACP
	return name, acp || sessiondir.IsACP(filepath.Join(cfg.DataDir, sessiondir.Dir, conv.SessionID))
}

// export serves GET export?conversation=ID: the conversation's session
// transcript (JSON lines) as normalizeTranscript leaves it, its session
// id in header X-Handoff-Session. The terminal writes it where `claude
// --resume` finds it.
func (s *Server) export(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	p, err := s.authenticate(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	conv, p, err := s.conversation(ctx, p, r.URL.Query().Get("conversation"), access.Export)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if !validSessionID(conv.SessionID) {
		s.fail(w, r, refuse(http.StatusConflict, "conversation %s has no agent session yet: write a first message", conv.ID))
		return
	}
	if name, ok := acpProfile(p.cfg, conv); ok {
		s.fail(w, r, refuse(http.StatusConflict, "conversation %s runs agent profile %s of kind acp: `bridge export` hands over Claude Code sessions only "+
			"(an ACP agent keeps its session in its own store, which `claude --resume` cannot read); `bridge attach` follows it from a terminal", conv.ID, name))
		return
	}
	b, err := readTranscript(cliDir(p.cfg.DataDir, conv.SessionID), conv.SessionID)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		s.fail(w, r, refuse(http.StatusConflict, "session %s has no transcript yet (the agent has not answered in it)", conv.SessionID))
		return
	case err != nil:
		s.fail(w, r, fmt.Errorf("export %s: %w", conv.ID, err))
		return
	}
	b, norm := normalizeTranscript(b) // the agent wrote it: no session state reaches the person's CLI
	if norm.Changed() {
		s.log.Info("handoff export: agent-written session state left out", "conversation", conv.ID, "changes", norm.String())
	}
	if err := s.audit(ctx, store.HandoffExport); err != nil {
		s.fail(w, r, err)
		return
	}
	s.announce(bridges.ConversationKey(conv.Key), "📤 "+p.user.Name+" exported this conversation's session to a terminal (`bridge export`).")
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("X-Handoff-Session", conv.SessionID)
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	_, _ = w.Write(b)
}

// Imported is the answer of import: the new conversation.
type Imported struct {
	Conversation string `json:"conversation"`
	Session      string `json:"session"`
	Bot          string `json:"bot"`
	Channel      string `json:"channel"`
	Thread       string `json:"thread"`
	Messages     int    `json:"messages"`
}

// importSession serves POST import?bot=B&channel=C&session=ID with a
// session transcript as the body: it continues that session in a new
// conversation of bot B in channel C (a new thread where the platform
// has them), whose agent resumes it with its history at the first
// message. The person must be allowed to talk to B in C.
func (s *Server) importSession(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	p, err := s.authenticate(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	q := r.URL.Query()
	bot := p.cfg.Bot(q.Get("bot"))
	if bot == nil {
		s.fail(w, r, refuse(http.StatusNotFound, "no bot %q", q.Get("bot")))
		return
	}
	channel, id := q.Get("channel"), q.Get("session")
	if channel == "" {
		s.fail(w, r, refuse(http.StatusBadRequest, "name a channel (-channel)"))
		return
	}
	tr := trailOf(ctx)
	tr.ev.Key, tr.ev.UserID = store.ConversationKey{Bot: bot.Name, Channel: channel}, p.user.As[bot.Name]
	if p, err = p.onBot(bot, s.opts.Core.Allowed, channel); err != nil {
		s.fail(w, r, err)
		return
	}
	prof := p.cfg.Agents[bot.Agent]
	if prof == nil || prof.Worktree {
		s.fail(w, r, refuse(http.StatusBadRequest, "bot %s's agent profile gives each session its own git worktree: importing a session there is not supported", bot.Name))
		return
	}
	if prof.Kind == profile.KindACP {
		s.fail(w, r, refuse(http.StatusBadRequest, "bot %s's agent profile %s is of kind acp: an imported Claude Code session cannot continue there (import into a bot whose agent is Claude Code)", bot.Name, prof.Name))
		return
	}
	if !validSessionID(id) {
		s.fail(w, r, refuse(http.StatusBadRequest, "bad session id %q: the transcript's file name is <session id>.jsonl", id))
		return
	}
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxTranscript))
	if err != nil {
		s.fail(w, r, refuse(http.StatusRequestEntityTooLarge, "could not read the transcript (at most %d MiB): %v", MaxTranscript>>20, err))
		return
	}
	n, err := checkTranscript(b, id)
	if err != nil {
		s.fail(w, r, refuse(http.StatusBadRequest, "not a session transcript: %v", err))
		return
	}
	if used, err := s.opts.Store.SessionIDs(ctx); err != nil {
		s.fail(w, r, fmt.Errorf("import: %w", err))
		return
	} else if used[id] {
		s.fail(w, r, refuse(http.StatusConflict, "session %s is already a conversation of this bridge (bridge attach or !resume it there)", id))
		return
	}
	if err := writeTranscript(cliDir(p.cfg.DataDir, id), prof.Workdir, id, b); err != nil {
		if errors.Is(err, fs.ErrExist) {
			s.fail(w, r, refuse(http.StatusConflict, "%v", err))
		} else {
			s.fail(w, r, fmt.Errorf("import: %w", err))
		}
		return
	}
	conv, err := s.startImported(ctx, p, bot.Name, channel, id, n)
	if err != nil {
		if rerr := os.RemoveAll(filepath.Dir(cliDir(p.cfg.DataDir, id))); rerr != nil {
			s.log.Warn("import failed; its session state was not removed", "session", id, "err", rerr)
		}
		s.fail(w, r, err)
		return
	}
	onConversation(ctx, conv)
	s.auditAfter(ctx, store.HandoffImport)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(Imported{Conversation: conv.ID, Session: id, Bot: conv.Key.Bot, Channel: conv.Key.Channel,
		Thread: conv.Key.Thread, Messages: n})
}

// startImported starts the conversation that continues imported session
// id (n messages) in channel of bot: the notice that opens it, then the
// conversation with that session, owned by the importer.
func (s *Server) startImported(ctx context.Context, p principal, bot, channel, id string, n int) (store.Conversation, error) {
	text := fmt.Sprintf("📥 %s imported a Claude Code session from a terminal (%d messages, `bridge import`). Write here to continue it: the agent has its history.", p.user.Name, n)
	key, err := s.newConversation(ctx, bot, channel, text)
	if err != nil {
		return store.Conversation{}, err
	}
	conv, created, err := s.opts.Store.GetOrCreateConversation(ctx, store.ConversationKey(key), p.cfg.Bot(bot).Agent, p.userID)
	if err != nil {
		return conv, fmt.Errorf("import: create conversation: %w", err)
	}
	if !created {
		return conv, refuse(http.StatusConflict, "%s already has a conversation; import into a channel where a new one can start", key)
	}
	if err := s.opts.Store.SetSessionID(ctx, conv.ID, id); err != nil {
		return conv, fmt.Errorf("import: set session: %w", err)
	}
	conv.SessionID = id
	return conv, nil
}

// newConversation posts text at the top of channel and returns the key of
// the conversation it starts: a new thread on it where the platform has
// threads (bridges.ThreadStarter), else the channel itself, when it has no
// conversation yet.
func (s *Server) newConversation(ctx context.Context, bot, channel, text string) (bridges.ConversationKey, error) {
	top := bridges.ConversationKey{Bot: bot, Channel: channel}
	pl := s.opts.Core.Platform(bot)
	if pl == nil {
		return top, refuse(http.StatusServiceUnavailable, "bot %s is not running", bot)
	}
	if ts, ok := pl.(bridges.ThreadStarter); ok {
		key, _, err := ts.StartThread(ctx, top, bridges.Message{Text: text})
		if err != nil {
			return top, fmt.Errorf("import: start a thread in %s: %w", top, err)
		}
		return key, nil
	}
	if _, err := s.opts.Store.GetConversation(ctx, store.ConversationKey(top)); err == nil {
		return top, refuse(http.StatusConflict, "%s already has a conversation and bot %s cannot start threads", channel, bot)
	} else if !errors.Is(err, store.ErrNotFound) {
		return top, fmt.Errorf("import: %w", err)
	}
	if _, err := pl.Post(ctx, top, bridges.Message{Text: text}); err != nil {
		return top, fmt.Errorf("import: post in %s: %w", top, err)
	}
	return top, nil
}
