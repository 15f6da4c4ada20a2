package agents

import (
	"slices"

	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/profile"
	"github.com/agentbridge/agentbridge/store"
)

// This file holds which agent profiles a conversation may run on (its
// own, its bot's, the bot's agents list: !agent) and the one it runs on.

// ProfileChoices are the profiles a conversation of bot may run on, each
// once and configured: its own (BaseProfile), the bot's default, then the
// bot's agents list.
func ProfileChoices(cfg *config.Config, bot *config.Bot, row store.Conversation) []string {
	var out []string
	if p := BaseProfile(cfg, bot, row); p != nil {
		out = append(out, p.Name)
	}
	for _, n := range bot.Profiles() {
		if cfg.Agents[n] != nil && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// BaseProfile is the profile of conversation row without !agent: the one
// it was created with (a scheduled run may name its own), else the bot's.
func BaseProfile(cfg *config.Config, bot *config.Bot, row store.Conversation) *profile.Agent {
	if p := cfg.Agents[row.Agent]; p != nil {
		return p
	}
	return cfg.Agents[bot.Agent]
}

// ConvProfile is the profile conversation row runs on: the one !agent
// moved it to while the bot still lists it, else BaseProfile; gone names
// a stored profile the bot no longer lists (the conversation goes back at
// its next message: the worker's revertAgent).
func ConvProfile(cfg *config.Config, bot *config.Bot, row store.Conversation) (p *profile.Agent, gone string) {
	if o := row.AgentOverride; o != "" {
		if slices.Contains(ProfileChoices(cfg, bot, row), o) {
			return cfg.Agents[o], ""
		}
		gone = o
	}
	return BaseProfile(cfg, bot, row), gone
}
