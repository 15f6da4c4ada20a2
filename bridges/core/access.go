package core

import (
	"slices"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/config"
)

// Access rules of a bot (config.Access). Ids are compared verbatim: adapters
// report channel and user ids in the form admins write in the config.

// Allowed implements Handler: whether user may talk to the bot key.Bot in
// key.Channel, by the same rules HandleMessage applies (an unknown bot
// allows nobody). It does no I/O.
func (c *Core) Allowed(key bridges.ConversationKey, user string) bool {
	if c.cfg() == nil {
		return false
	}
	b := c.cfg().Bot(key.Bot)
	return b != nil && channelAllowed(b, key.Channel) && userAllowed(b, user)
}

// channelAllowed reports whether the bot may work in channel (an empty
// Channels list allows every channel the bot is in).
func channelAllowed(b *config.Bot, channel string) bool {
	return len(b.Access.Channels) == 0 || slices.Contains(b.Access.Channels, channel)
}

// userAllowed reports whether user may talk to the bot: anyone when Users is
// empty, else the listed users, approvers and admins.
func userAllowed(b *config.Bot, user string) bool {
	a := b.Access
	return len(a.Users) == 0 || slices.Contains(a.Users, user) || isApprover(b, user)
}

// isApprover reports whether user may decide any permission request of the
// bot (approvers and admins).
func isApprover(b *config.Bot, user string) bool {
	return slices.Contains(b.Access.Approvers, user) || isAdmin(b, user)
}

// isAdmin reports whether user is one of the bot's admins.
func isAdmin(b *config.Bot, user string) bool {
	return slices.Contains(b.Access.Admins, user)
}

// adminsConfigured reports whether the bot has admins. Without them the
// admin-only commands are disabled.
func adminsConfigured(b *config.Bot) bool {
	return len(b.Access.Admins) > 0
}
