package replica

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/agentbridge/agentbridge/bridges"
)

// Private answers to forwarded clicks. A click reaches whichever replica
// the platform picks; its private answer ("only … can answer this
// request", "no longer open") needs that replica's connection — a Discord
// interaction's token, a web page open there — so it cannot be sent by the
// holder that decides the click. The receiving replica keeps the click's
// Reply under a random token for replyTTL and forwards the token with the
// click; the holder's answers come back as signals for the receiving
// replica, which sends them through the kept Reply.

// replyTTL is how long a forwarded click can be answered privately.
const replyTTL = 2 * time.Minute

// replyTimeout bounds sending one private answer.
const replyTimeout = 10 * time.Second

// maxReplyRunes bounds a private answer in a signal: at most 6 bytes a
// rune once JSON-encoded, well under a signal's 7999 bytes.
const maxReplyRunes = 1000

// privateReply is a private answer to a forwarded click, for the replica
// that received it.
type privateReply struct {
	Replica string `json:"r"` // the replica that received the click
	Token   string `json:"t"` // the click's token there
	Text    string `json:"x"`
}

// replies keeps the Reply functions of forwarded clicks by token. It is
// safe for concurrent use.
type replies struct {
	mu   sync.Mutex
	byID map[string]keptReply
}

type keptReply struct {
	reply   func(ctx context.Context, text string) error
	expires time.Time
}

// keep stores reply and returns its token.
func (rs *replies) keep(reply func(ctx context.Context, text string) error, now time.Time) string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	token := hex.EncodeToString(b)
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.byID == nil {
		rs.byID = make(map[string]keptReply)
	}
	rs.byID[token] = keptReply{reply: reply, expires: now.Add(replyTTL)}
	return token
}

// get returns the Reply kept under token, unless it expired.
func (rs *replies) get(token string, now time.Time) func(ctx context.Context, text string) error {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	k, ok := rs.byID[token]
	if !ok || now.After(k.expires) {
		return nil
	}
	return k.reply
}

// prune forgets the expired ones.
func (rs *replies) prune(now time.Time) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for t, k := range rs.byID {
		if now.After(k.expires) {
			delete(rs.byID, t)
		}
	}
}

// remoteReply is the Reply of a click forwarded by replica from with
// token: it sends the answer back to that replica.
func (r *Replica) remoteReply(from, token string) func(ctx context.Context, text string) error {
	return func(ctx context.Context, text string) error {
		if utf8.RuneCountInString(text) > maxReplyRunes {
			text = string([]rune(text)[:maxReplyRunes-1]) + "…"
		}
		return r.send(ctx, signal{Reply: &privateReply{Replica: from, Token: token, Text: text}})
	}
}

// onReply sends a holder's private answer to a click this replica
// received, through the click's own Reply, in a goroutine Run waits for.
func (r *Replica) onReply(ctx context.Context, p privateReply) {
	if p.Replica != r.id {
		return
	}
	reply := r.replies.get(p.Token, time.Now())
	if reply == nil {
		r.log.Info("a private answer to a click came too late; not sent")
		return
	}
	r.replying.Go(func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), replyTimeout)
		defer cancel()
		if err := reply(rctx, p.Text); err != nil {
			r.log.Warn("private answer to a forwarded click", "err", err)
		}
	})
}

// forwardedClick is the bridges.Action of a click another replica
// forwarded (replica from), with a Reply when it kept one.
func (r *Replica) forwardedClick(from string, c *click) bridges.Action {
	a := bridges.Action{Key: c.Key, CardID: c.CardID, Choice: c.Choice, UserID: c.UserID, UserName: c.UserName}
	if c.Reply != "" {
		a.Reply = r.remoteReply(from, c.Reply)
	}
	return a
}
