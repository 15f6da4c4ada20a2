package discordfake

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

// NonceWindow is how long a create-message nonce sent with enforce_nonce
// is remembered ("the past few minutes" in Discord's documentation).
const NonceWindow = 5 * time.Minute

// maxNonceLen is the longest nonce Discord accepts.
const maxNonceLen = 25

// nonceState is the fake's memory of enforced nonces and its injected
// lost answers of create-message.
type nonceState struct {
	seen       map[nonceKey]nonceEntry
	lose       int // create-message answers still to lose
	loseStatus int // 0: close the connection; else this HTTP status
	fail       int // create-message requests still to refuse with failWith
	failWith   apiError
	failStatus int
}

// nonceKey: Discord de-duplicates per author and channel.
type nonceKey struct{ channel, author, nonce string }

type nonceEntry struct {
	id string
	at time.Time
}

// LoseResponses makes the next n create-message requests
// (POST /channels/{id}/messages) succeed — the message is stored and
// dispatched — while their answer is lost: with status 0 the connection
// is closed without a response, otherwise the answer is that HTTP status
// (e.g. 502, which discordgo retries by itself).
func (f *Fake) LoseResponses(n, status int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nonces.lose, f.nonces.loseStatus = max(n, 0), status
}

// FailCreate makes the next n create-message requests fail, without
// creating anything, with HTTP status and Discord's JSON error code and
// message — e.g. 403, 50013, "Missing Permissions" for a bot that lost
// its rights, or 503, 0, "upstream connect error" for an outage.
func (f *Fake) FailCreate(n, status, code int, message string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nonces.fail, f.nonces.failStatus = max(n, 0), status
	f.nonces.failWith = apiError{Code: code, Message: message}
}

// failLocked reports whether this create-message request is refused
// (FailCreate), with what. f.mu is held.
func (f *Fake) failLocked() (bool, int, apiError) {
	if f.nonces.fail <= 0 {
		return false, 0, apiError{}
	}
	f.nonces.fail--
	return true, f.nonces.failStatus, f.nonces.failWith
}

// nonceString is the nonce of a request body: a string or an integer.
func nonceString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}

// checkNonce answers 50035 for a nonce Discord refuses (over 25
// characters) and reports whether the body may proceed.
func checkNonce(w http.ResponseWriter, b *wireMessageBody) bool {
	if len(nonceString(b.Nonce)) > maxNonceLen {
		formError(w, "nonce", "BASE_TYPE_MAX_LENGTH", "Must be "+strconv.Itoa(maxNonceLen)+" or fewer in length.")
		return false
	}
	return true
}

// enforcedLocked returns the message created earlier in ch by the bot
// with the same nonce, when the body asks for enforce_nonce and one was
// created within NonceWindow. f.mu is held.
func (f *Fake) enforcedLocked(ch string, b *wireMessageBody) (*message, bool) {
	nonce := nonceString(b.Nonce)
	if !b.EnforceNonce || nonce == "" {
		return nil, false
	}
	e, ok := f.nonces.seen[nonceKey{ch, f.opts.BotID, nonce}]
	if !ok || time.Since(e.at) > NonceWindow {
		return nil, false
	}
	m, ok := f.messages[e.id]
	return m, ok
}

// rememberLocked records the nonce of a message just created. f.mu is
// held.
func (f *Fake) rememberLocked(m *message, b *wireMessageBody) {
	nonce := nonceString(b.Nonce)
	if nonce == "" {
		return
	}
	m.wire.Nonce = b.Nonce
	if !b.EnforceNonce {
		return
	}
	if f.nonces.seen == nil {
		f.nonces.seen = map[nonceKey]nonceEntry{}
	}
	f.nonces.seen[nonceKey{m.wire.ChannelID, f.opts.BotID, nonce}] = nonceEntry{id: m.wire.ID, at: m.created}
}

// loseLocked reports whether this create-message answer is lost, and
// how. f.mu is held.
func (f *Fake) loseLocked() (bool, int) {
	if f.nonces.lose <= 0 {
		return false, 0
	}
	f.nonces.lose--
	return true, f.nonces.loseStatus
}

// writeLost answers a request whose answer is lost.
func writeLost(w http.ResponseWriter, status int) {
	if status == 0 {
		panic(http.ErrAbortHandler) // the server closes the connection unanswered
	}
	w.Header().Set("Content-Type", "text/html")
	w.WriteHeader(status)
	_, _ = w.Write([]byte("<html><body>Bad Gateway</body></html>"))
}
