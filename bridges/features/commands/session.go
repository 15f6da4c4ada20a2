package commands

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/render"
	"github.com/agentbridge/agentbridge/bridges/core/worker"
	"github.com/agentbridge/agentbridge/config/profile"
	"github.com/agentbridge/agentbridge/internal/textcut"
	"github.com/agentbridge/agentbridge/store"
)

// This file holds the commands on the conversation's agent: !stop, !new,
// !model, !mode, !agent and !cost.

func runStop(ctx context.Context, c Conversation, _ worker.Person, _ Line) {
	running, err := c.StopTurn(ctx)
	switch {
	case !running:
		c.Notice(ctx, "Nothing to stop.")
	case err != nil:
		c.Notice(ctx, "⚠️ Could not interrupt the agent: "+textcut.OneLine(err.Error(), 200))
	}
}

func runNew(ctx context.Context, c Conversation, who worker.Person, _ Line) {
	wt, err := c.NewSession(ctx, who.ID)
	switch {
	case errors.Is(err, worker.ErrStarting):
		c.Notice(ctx, "⏳ The agent is still starting; try "+bridges.CommandPrefix+"new again in a moment.")
		return
	case err != nil:
		c.Log().Error("start a fresh session", "err", err)
		c.Notice(ctx, "⚠️ Could not start a fresh session (database error).")
		return
	}
	text := "🆕 Started a fresh session. The agent no longer sees the earlier messages of this thread."
	if wt != "" {
		text += "\n" + wt
	}
	c.Notice(ctx, text)
}

func runModel(ctx context.Context, c Conversation, _ worker.Person, l Line) {
	if ch := c.AgentChoices("model"); ch.Own {
		runChoice(ctx, c, "model", ch, l)
		return
	}
	model := l.Arg(0)
	if len(l.Args) != 1 || strings.ContainsRune(model, '`') {
		c.Notice(ctx, "Usage: `"+bridges.CommandPrefix+"model NAME` (or `"+bridges.CommandPrefix+"model default`). Current model: "+render.CodeSpan(cmp.Or(c.Model(), "the CLI's default")))
		return
	}
	if model == "default" {
		model = ""
	}
	live, err := c.SetModel(ctx, model)
	switch {
	case err != nil:
		c.Log().Error("change model", "err", err)
		c.Notice(ctx, "⚠️ Could not change the model (database error).")
	case live != nil:
		c.Notice(ctx, "⚠️ Saved, but the running agent refused the model: "+textcut.OneLine(live.Error(), 200)+". It applies when the agent restarts.")
	default:
		c.Notice(ctx, "🧠 Model set to "+render.CodeSpan(cmp.Or(c.Model(), "the CLI's default"))+".")
	}
}

func runMode(ctx context.Context, c Conversation, _ worker.Person, l Line) {
	if ch := c.AgentChoices("mode"); ch.Own {
		runChoice(ctx, c, "mode", ch, l)
		return
	}
	mode := l.Arg(0)
	if len(l.Args) > 1 {
		mode = "" // usage
	}
	valid := map[string]bool{profile.ModeDefault: true, profile.ModeAcceptEdits: true, profile.ModePlan: true,
		profile.ModeBypass: c.Profile().AllowBypass}
	if !valid[mode] {
		msg := "Usage: `" + bridges.CommandPrefix + "mode default|acceptEdits|plan`"
		if mode == profile.ModeBypass {
			msg = "⛔ bypassPermissions is not allowed for this agent (allow_bypass is off)."
		}
		c.Notice(ctx, msg+" Current mode: "+render.CodeSpan(c.Mode()))
		return
	}
	later, live, err := c.SetMode(ctx, mode)
	switch {
	case err != nil:
		c.Log().Error("change permission mode", "err", err)
		c.Notice(ctx, "⚠️ Could not change the mode (database error).")
	case later:
		c.Notice(ctx, "🔐 Mode set to "+render.CodeSpan(mode)+"; it applies when the current turn ends (the agent restarts).")
	case live != nil:
		c.Notice(ctx, "⚠️ Saved, but the running agent refused the mode: "+textcut.OneLine(live.Error(), 200)+". It applies when the agent restarts.")
	default:
		c.Notice(ctx, "🔐 Mode set to "+render.CodeSpan(mode)+".")
	}
}

func runCost(ctx context.Context, c Conversation, who worker.Person, _ Line) {
	conv, err := c.Store().UsageTotals(ctx, c.ID())
	if err != nil {
		c.Log().Error("usage totals", "err", err)
		c.Notice(ctx, "⚠️ Could not read the usage (database error).")
		return
	}
	bot, err := c.Store().BotUsageTotals(ctx, c.Bot().Name)
	if err != nil {
		c.Log().Error("bot usage totals", "err", err)
		c.Notice(ctx, "⚠️ Could not read the usage (database error).")
		return
	}
	convLine, botLine := totalsLine(conv), totalsLine(bot)
	if c.Profile().Kind == profile.KindACP && conv.CostUSD == 0 {
		// An ACP agent reports a cost only if it wants to: no $0.0000.
		convLine = "no cost reported by this agent (kind acp); " + strings.TrimPrefix(convLine, fmt.Sprintf("$%.4f ", conv.CostUSD))
	}
	if bot.CostUSD == 0 && bot.Count > 0 { // none of the bot's turns reported a cost (its agents are ACP ones that report none)
		botLine = "no cost reported; " + strings.TrimPrefix(botLine, fmt.Sprintf("$%.4f ", bot.CostUSD))
	}
	text := fmt.Sprintf("💰 This conversation: %s\n💰 Bot %s: %s", convLine, render.CodeSpan(c.Bot().Name), botLine)
	switch budget, err := c.BudgetLeft(ctx, who.ID); {
	case err != nil:
		c.Log().Error("budget left", "err", err)
		text += "\n⚠️ Could not read the budget left (database error)."
	case budget != "":
		text += "\n" + budget
	}
	c.Notice(ctx, text)
}

func totalsLine(t store.Totals) string {
	return fmt.Sprintf("$%.4f over %d turns (%s in, %s out tokens, %s)", t.CostUSD, t.Count,
		compactCount(t.InputTokens+t.CacheReadTokens+t.CacheCreationTokens), compactCount(t.OutputTokens),
		formatDuration(time.Duration(t.DurationMS)*time.Millisecond))
}

func compactCount(n int64) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	default:
		return fmt.Sprint(n)
	}
}

// runAgent lists the bot's profiles (no argument) or moves the
// conversation to one (Run checked that who may write here). Only a
// profile Agents lists is accepted: the bot's config, never the person,
// decides where a conversation may run.
func runAgent(ctx context.Context, c Conversation, who worker.Person, l Line) {
	names, current := c.Agents()
	if len(l.Args) == 0 {
		var b strings.Builder
		b.WriteString("🤖 Agent profiles of this bot:")
		for i, n := range names {
			b.WriteString("\n• " + render.CodeSpan(n))
			if i == 0 {
				b.WriteString(" (default)")
			}
			if n == current {
				b.WriteString(" ← this conversation")
			}
		}
		if len(names) < 2 {
			b.WriteString("\n_This bot has no other profile to move to (bots[].agents is empty)._")
		} else {
			b.WriteString("\n`" + bridges.CommandPrefix + "agent NAME` moves this conversation; it starts fresh there.")
		}
		c.Notice(ctx, b.String())
		return
	}
	name := l.Arg(0)
	switch {
	case len(l.Args) != 1 || strings.ContainsRune(name, '`'):
		c.Notice(ctx, "Usage: `"+bridges.CommandPrefix+"agent NAME`. Current profile: "+render.CodeSpan(current))
		return
	case !slices.Contains(names, name):
		c.Notice(ctx, "⛔ "+render.CodeSpan(name)+" is not an agent profile of this bot. It may use: "+codeList(names)+".")
		return
	case name == current:
		c.Notice(ctx, "This conversation already runs on "+render.CodeSpan(name)+".")
		return
	}
	wt, err := c.SwitchAgent(ctx, name, who.ID)
	switch {
	case errors.Is(err, worker.ErrWorking) || errors.Is(err, worker.ErrStarting) || errors.Is(err, worker.ErrResuming):
		c.Notice(ctx, "⏳ The agent is working (a turn, a message or an approval is open). Use `"+bridges.CommandPrefix+"stop` first, then `"+bridges.CommandPrefix+"agent "+name+"` again.")
		return
	case err != nil:
		c.Log().Error("switch agent profile", "agent", name, "err", err)
		c.Notice(ctx, "⚠️ Could not move the conversation (database error).")
		return
	}
	text := SwitchedText(who, name)
	if wt != "" {
		text += "\n" + wt
	}
	c.Notice(ctx, text)
}

// SwitchedText is the notice that the conversation moved to profile name
// on who's !agent.
func SwitchedText(who worker.Person, name string) string {
	return "🔀 " + mention(who) + " moved this conversation to agent " + render.CodeSpan(name) +
		". It starts fresh: the agent does not see the earlier messages of this thread."
}

func codeList(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = render.CodeSpan(n)
	}
	return strings.Join(out, ", ")
}
