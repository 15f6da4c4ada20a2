package core

import (
	"context"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/agents"
	"github.com/agentbridge/agentbridge/bridges/core/worker"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/store"
)

// warmResumeTimeout bounds one warm resume at start-up.
const warmResumeTimeout = time.Minute

// warmResumeRecent resumes, ahead of their return, the conversations
// that were active within their profile's idle_timeout before the bridge
// started, most recently active first, one at a time: their agents would
// still be live had the bridge not restarted, so their next message is
// answered like a follow-up instead of waiting for a cold resume. Only
// into free slots (max_live, less the warm spares the profile wants) and
// the spares' memory budget: a profile stops at its first refusal. A
// profile without idle_timeout never stops its agents: it uses 30 minutes.
// With replicas (Ownership) the agent starts from the session files in the
// store, not the older ones this replica's data_dir may keep, and carries
// their stamp: a replica that rejoins while another runs the conversation
// never answers from a stale history — when it takes the conversation
// later and the stored files changed meanwhile, the pool discards the
// early agent and resumes afresh (ownership.Restore, agents.Resumer).
// Deleted web conversations are skipped.
func (c *Core) warmResumeRecent(ctx context.Context, platforms map[string]bridges.Platform) {
	r, ok := c.pool.(agents.Resumer)
	if !ok {
		return
	}
	rows, err := c.st.ListConversations(ctx)
	if err != nil {
		c.log.Warn("warm resume: list conversations", "err", err)
		return
	}
	full := map[string]bool{}
	now := time.Now()
	for _, row := range rows {
		if ctx.Err() != nil {
			return
		}
		cfg := c.cfg()
		bot := resumeCandidate(cfg, row, platforms, now)
		if bot == nil || full[bot.Agent] || c.webThreadGone(ctx, row, bot) {
			continue
		}
		p := cfg.Agents[bot.Agent]
		log := c.log.With("key", row.Key, "conversation", row.ID)
		limit := agents.Limit(p, nil)
		rctx, cancel := context.WithTimeout(ctx, warmResumeTimeout)
		// With replicas another replica may run the conversation now:
		// the agent starts from the stored files, stamped, and is taken
		// only by a tenure whose stored files are still those.
		opts, err := worker.WarmResumeOptions(rctx, c.host, row, bot, p, platforms[row.Key.Bot])
		if err == nil {
			err = r.WarmResume(rctx, row.ID, limit, opts, true)
		}
		cancel()
		switch {
		case agents.NoRoom(err):
			full[p.Name] = true
			c.log.Debug("warm resume: no room left", "profile", p.Name, "err", err)
		case err != nil:
			log.Debug("warm resume not done", "err", err)
		}
	}
}

// warmResumeWindow is how recent a conversation's activity must be for a
// warm resume in a profile without idle_timeout.
const warmResumeWindow = 30 * time.Minute

// resumeCandidate returns the bot of row, whose profile (cfg.Agents of
// bot.Agent) its spawn options are built from, or nil when row is not to
// be resumed ahead: no session, a bot that does not run here, another
// profile than its bot's now (or one !agent chose), or no activity within
// the profile's idle timeout.
func resumeCandidate(cfg *config.Config, row store.Conversation, platforms map[string]bridges.Platform, now time.Time) *config.Bot {
	bot := cfg.Bot(row.Key.Bot)
	pl := platforms[row.Key.Bot]
	if row.SessionID == "" || bot == nil || pl == nil || bot.Agent != row.Agent || row.AgentOverride != "" {
		return nil
	}
	p := cfg.Agents[bot.Agent]
	if p == nil {
		return nil
	}
	window := p.IdleTimeout
	if window <= 0 {
		window = warmResumeWindow
	}
	if now.Sub(row.LastActiveAt) > window {
		return nil
	}
	return bot
}

// webThreadGone reports whether row is a web conversation (of bot) that
// was deleted: its session may be kept (for !resume elsewhere), but nobody
// can write in it any more, so its return never comes.
func (c *Core) webThreadGone(ctx context.Context, row store.Conversation, bot *config.Bot) bool {
	if bot.Platform != config.PlatformWeb {
		return false
	}
	deleted, err := c.st.WebThreadDeleted(ctx, row.Key.Bot, row.Key.Thread)
	if err != nil {
		c.log.Warn("warm resume: read the web conversation", "key", row.Key, "conversation", row.ID, "err", err)
		return true
	}
	return deleted
}
