package commands

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/store"
)

// This file holds the commands on the conversation's agent: !stop, !new,
// !model, !mode and !cost.

func runStop(ctx context.Context, c Conversation, _ Author, _ Line) {
	running, err := c.Stop(ctx)
	switch {
	case !running:
		c.Notice(ctx, "Nothing to stop.")
	case err != nil:
		c.Notice(ctx, "⚠️ Could not interrupt the agent: "+oneLine(err.Error(), 200))
	}
}

func runNew(ctx context.Context, c Conversation, who Author, _ Line) {
	wt, err := c.NewSession(ctx, who.ID)
	switch {
	case errors.Is(err, ErrStarting):
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

func runModel(ctx context.Context, c Conversation, _ Author, l Line) {
	model := l.Arg(0)
	if len(l.Args) != 1 || strings.ContainsRune(model, '`') {
		c.Notice(ctx, "Usage: `"+bridges.CommandPrefix+"model NAME` (or `"+bridges.CommandPrefix+"model default`). Current model: "+codeSpan(orDefault(c.Model(), "the CLI's default")))
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
		c.Notice(ctx, "⚠️ Saved, but the running agent refused the model: "+oneLine(live.Error(), 200)+". It applies when the agent restarts.")
	default:
		c.Notice(ctx, "🧠 Model set to "+codeSpan(orDefault(c.Model(), "the CLI's default"))+".")
	}
}

func runMode(ctx context.Context, c Conversation, _ Author, l Line) {
	mode := l.Arg(0)
	if len(l.Args) > 1 {
		mode = "" // usage
	}
	valid := map[string]bool{config.ModeDefault: true, config.ModeAcceptEdits: true, config.ModePlan: true,
		config.ModeBypass: c.Profile().AllowBypass}
	if !valid[mode] {
		msg := "Usage: `" + bridges.CommandPrefix + "mode default|acceptEdits|plan`"
		if mode == config.ModeBypass {
			msg = "⛔ bypassPermissions is not allowed for this agent (allow_bypass is off)."
		}
		c.Notice(ctx, msg+" Current mode: "+codeSpan(c.Mode()))
		return
	}
	later, live, err := c.SetMode(ctx, mode)
	switch {
	case err != nil:
		c.Log().Error("change permission mode", "err", err)
		c.Notice(ctx, "⚠️ Could not change the mode (database error).")
	case later:
		c.Notice(ctx, "🔐 Mode set to "+codeSpan(mode)+"; it applies when the current turn ends (the agent restarts).")
	case live != nil:
		c.Notice(ctx, "⚠️ Saved, but the running agent refused the mode: "+oneLine(live.Error(), 200)+". It applies when the agent restarts.")
	default:
		c.Notice(ctx, "🔐 Mode set to "+codeSpan(mode)+".")
	}
}

func runCost(ctx context.Context, c Conversation, who Author, _ Line) {
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
	text := fmt.Sprintf("💰 This conversation: %s\n💰 Bot %s: %s", totalsLine(conv), codeSpan(c.Bot().Name), totalsLine(bot))
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
