package discord

import (
	"net/url"
	"strconv"

	"github.com/bwmarrin/discordgo"
)

// InvitePermissions is the permission integer the bot needs in the
// channels it serves (docs/discord.md explains each bit): View Channels,
// Send Messages, Read Message History, Create Public Threads and Send
// Messages in Threads = 309237713920.
const InvitePermissions int64 = discordgo.PermissionViewChannel |
	discordgo.PermissionSendMessages |
	discordgo.PermissionReadMessageHistory |
	discordgo.PermissionCreatePublicThreads |
	discordgo.PermissionSendMessagesInThreads

// InviteURL is the OAuth2 URL that adds the bot (application appID) to a
// server with InvitePermissions.
func InviteURL(appID string) string {
	q := url.Values{}
	q.Set("client_id", appID)
	q.Set("scope", "bot")
	q.Set("permissions", strconv.FormatInt(InvitePermissions, 10))
	return "https://discord.com/oauth2/authorize?" + q.Encode()
}
