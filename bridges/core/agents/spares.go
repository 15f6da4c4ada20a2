package agents

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"time"

	"github.com/agentbridge/agentbridge/agent"
	"github.com/agentbridge/agentbridge/agent/pool"
	"github.com/agentbridge/agentbridge/bridges/core/render"
	"github.com/agentbridge/agentbridge/bridges/core/sessiondir"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/profile"
	"github.com/agentbridge/agentbridge/internal/textcut"
)

// SpareTools gives a warm spare of profile p, kept for bot, the bridge's
// agent tools as every conversation of the bot has them: the same server
// name and allowed tools, so that a conversation can take the spare.
type SpareTools func(opts *agent.Options, bot *config.Bot, p *profile.Agent)

// KeepSpares makes agents, when it is a WarmPool, keep the warm spares of
// every profile one of bots (bot names of cfg) uses, the default and the
// profiles !agent may move to, and returns a function that stops keeping
// them. The spares are spawned exactly as a new conversation of the
// profile would be (ProfileOptions, tools), so a conversation without
// overrides takes one; with worktrees each starts in its own.
func (s Spawner) KeepSpares(agents Pool, cfg *config.Config, bots []string, tools SpareTools, log *slog.Logger) (stop func()) {
	wp, ok := agents.(WarmPool)
	if !ok {
		return func() {}
	}
	var kept []pool.SpareConfig
	seen := map[string]bool{}
	for _, name := range slices.Sorted(slices.Values(bots)) {
		bot := cfg.Bot(name)
		for _, pn := range bot.Profiles() { // the default and the profiles !agent may move to
			p := cfg.Agents[pn]
			if p == nil || seen[p.Name] {
				continue
			}
			seen[p.Name] = true
			sc := pool.SpareConfig{
				Limit:   Limit(p, nil),
				Count:   p.WarmSpares,
				Options: s.ProfileOptions(cfg, p),
				WarmUp:  true,
				// warm_spares: auto
				Auto:        p.WarmSparesAuto,
				Max:         p.MaxWarmSpares,
				SpareMemory: p.SpareMemory,
			}
			if tools != nil {
				tools(&sc.Options, bot, p)
			}
			if wt := s.Worktrees; wt != nil && p.Worktree {
				sc.Options.Prepare = func(ctx context.Context, o agent.Options) (agent.Options, error) {
					return wt.PrepareSpawn(ctx, p, o, true)
				}
			}
			if cfg.DataDir != "" {
				sc.StateRoot = filepath.Join(cfg.DataDir, sessiondir.Dir)
			}
			if p.KeepsSpares() {
				wp.KeepSpares(sc)
				kept = append(kept, sc)
				log.Debug("keeping warm spares", "profile", p.Name, "count", p.WarmSparesText(), "max_live", p.MaxLive)
			}
		}
	}
	return func() {
		for _, sc := range kept {
			sc.Count, sc.Auto = 0, false
			wp.KeepSpares(sc)
		}
	}
}

// StopSpares makes agents, when it is a WarmPool, stop keeping warm spares
// of profile p (a profile no running bot uses any more).
func StopSpares(agents Pool, p string) {
	if wp, ok := agents.(WarmPool); ok {
		wp.KeepSpares(pool.SpareConfig{Limit: pool.Limit{Profile: p}, Count: 0})
	}
}

// SpareStatusLine describes the warm spares of profile p for !status (a
// line starting with a newline), or "" when agents keep none for it.
func SpareStatusLine(agents Pool, p *profile.Agent) string {
	wp, ok := agents.(WarmPool)
	if !ok || !p.KeepsSpares() {
		return ""
	}
	st := wp.SpareStatus(p.Name)
	label := "warm spares"
	if st.Auto {
		label = fmt.Sprintf("warm spares (auto, at most %d)", st.Max)
	}
	switch {
	case st.Want == 0:
		return ""
	case st.Failures > 0 && st.Ready == 0:
		next := "now"
		if wait := time.Until(st.NextAttempt); wait > 0 {
			next = "in " + render.FormatDuration(wait.Round(time.Second))
		}
		return fmt.Sprintf("\n• %s: ⚠️ failing to start (%d in a row): %s; next try %s",
			label, st.Failures, textcut.OneLine(st.LastError, 200), next)
	case st.MemShort:
		return fmt.Sprintf("\n• %s: %d of %d ready (no more start: less than the spare memory available)", label, st.Ready, st.Want)
	case st.WarmUpOff != "":
		return fmt.Sprintf("\n• %s: %d of %d ready (without a warm-up turn: %s)", label, st.Ready, st.Want, textcut.OneLine(st.WarmUpOff, 160))
	default:
		return fmt.Sprintf("\n• %s: %d of %d ready", label, st.Ready, st.Want)
	}
}
