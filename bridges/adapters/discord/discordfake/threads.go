package discordfake

import (
	"net/http"
	"time"
	"unicode/utf8"
)

func (f *Fake) startThread(w http.ResponseWriter, r *http.Request) {
	var b wireThreadStart
	if !decodeBody(w, r, &b) {
		return
	}
	if n := utf8.RuneCountInString(b.Name); n < 1 || n > 100 {
		formError(w, "name", "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 100 in length.")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.threadFailLocked(w) {
		return
	}
	parent, ok := f.channels[r.PathValue("channel_id")]
	if !ok {
		writeError(w, http.StatusNotFound, codeUnknownChannel, "Unknown Channel", nil)
		return
	}
	if parent.Type != ChannelGuildText && parent.Type != 5 {
		writeError(w, http.StatusBadRequest, codeWrongChannelType, "Cannot execute action on this channel type", nil)
		return
	}
	if !f.permittedLocked(w, PermissionCreatePublicThreads) { // perms.go
		return
	}
	mid := r.PathValue("message_id")
	if m, ok := f.messages[mid]; !ok || m.wire.ChannelID != parent.ID {
		writeError(w, http.StatusNotFound, codeUnknownMessage, "Unknown Message", nil)
		return
	}
	if _, exists := f.channels[mid]; exists {
		writeError(w, http.StatusBadRequest, codeThreadAlreadyCreated, "A thread has already been created for this message", nil)
		return
	}
	typ := ChannelPublicThread // from a message, the type follows the parent
	if parent.Type == 5 {
		typ = 10 // announcement thread
	}
	archive := b.AutoArchiveDuration
	if archive == 0 {
		archive = 4320
	}
	now := time.Now()
	th := &wireChannel{
		ID: mid, Type: typ, GuildID: parent.GuildID, ParentID: parent.ID, Name: b.Name, OwnerID: f.opts.BotID,
		ThreadMetadata: &wireThreadMetadata{AutoArchiveDuration: archive, ArchiveTimestamp: isoTime(now)},
		MemberCount:    1,
	}
	f.channels[mid] = th
	f.threads = append(f.threads, Thread{
		ID: mid, ParentID: parent.ID, GuildID: parent.GuildID, MessageID: mid, Name: b.Name,
		Type: typ, AutoArchiveDuration: archive, At: now,
	})
	created := *th
	created.NewlyCreated = true
	f.dispatch("THREAD_CREATE", created)
	f.notify()
	writeJSON(w, http.StatusCreated, th)
}

// threadFailure is what FailThreadStart injects.
type threadFailure struct {
	n      int // thread starts still to refuse; < 0: all
	status int
	err    apiError
}

// FailThreadStart makes the next n thread starts (POST
// /channels/{id}/messages/{mid}/threads) fail, without starting anything,
// with HTTP status and Discord's JSON error code and message: 503, 0,
// "upstream connect error" for an outage; 403, 50013, "Missing
// Permissions" for a bot without Create Public Threads. n < 0 fails all
// until called again with 0.
func (f *Fake) FailThreadStart(n, status, code int, message string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.threadFail = threadFailure{n: n, status: status, err: apiError{Code: code, Message: message}}
}

// threadFailLocked answers a thread start FailThreadStart refuses and
// reports whether it did. f.mu is held.
func (f *Fake) threadFailLocked(w http.ResponseWriter) bool {
	if f.threadFail.n == 0 {
		return false
	}
	if f.threadFail.n > 0 {
		f.threadFail.n--
	}
	f.notify()
	writeError(w, f.threadFail.status, f.threadFail.err.Code, f.threadFail.err.Message, nil)
	return true
}
