package discordfake

import "net/http"

// Permission bits the fake checks, as in Discord's permission integer.
const (
	PermissionViewChannel           int64 = 1 << 10
	PermissionSendMessages          int64 = 1 << 11
	PermissionAttachFiles           int64 = 1 << 15
	PermissionReadMessageHistory    int64 = 1 << 16
	PermissionCreatePublicThreads   int64 = 1 << 35
	PermissionSendMessagesInThreads int64 = 1 << 38
)

// DefaultPermissions is what the bot holds in the fake's server channels
// unless Options.Permissions or SetPermissions say otherwise: exactly
// bridges/adapters/discord's InvitePermissions (a test there keeps them equal).
const DefaultPermissions = PermissionViewChannel | PermissionSendMessages | PermissionAttachFiles |
	PermissionReadMessageHistory | PermissionCreatePublicThreads | PermissionSendMessagesInThreads

// codeMissingPermissions is Discord's JSON error code for a request the
// bot's permissions do not allow (HTTP 403).
const codeMissingPermissions = 50013

// SetPermissions changes the permissions the bot holds in server channels
// (DMs need none), as editing its role does.
func (f *Fake) SetPermissions(p int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.perms = p
}

// permittedLocked answers 403 Missing Permissions (code 50013), as Discord
// does, and returns false unless the bot holds every bit of need. f.mu is
// held.
func (f *Fake) permittedLocked(w http.ResponseWriter, need int64) bool {
	if f.perms&need == need {
		return true
	}
	writeError(w, http.StatusForbidden, codeMissingPermissions, "Missing Permissions", nil)
	return false
}

// mayPostLocked checks a new message in ch with files attachments: View
// Channel and Send Messages (Send Messages in Threads in a thread), plus
// Attach Files when it carries files. DMs need none. f.mu is held.
func (f *Fake) mayPostLocked(w http.ResponseWriter, ch *wireChannel, files int) bool {
	if ch.Type == ChannelDM {
		return true
	}
	need := PermissionViewChannel | PermissionSendMessages
	if ch.ThreadMetadata != nil || ch.ParentID != "" {
		need = PermissionViewChannel | PermissionSendMessagesInThreads
	}
	if files > 0 {
		need |= PermissionAttachFiles
	}
	return f.permittedLocked(w, need)
}
