package delivery

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/render"
	"github.com/agentbridge/agentbridge/internal/textcut"
	"github.com/agentbridge/agentbridge/store"
)

// This file holds the cards' message references as the audit table keeps
// them, and the closing of the cards a previous run or holder left open.

// StaleCards closes the cards of permission requests a previous run or
// holder left open (Close).
type StaleCards struct {
	Store    *store.Store                      // the core's: a request's conversation
	Platform func(bot string) bridges.Platform // bot's running adapter, nil if none
	Workdir  func(bot string) string           // bot's agent workdir, for relative paths in cards
	Now      func() time.Time
	Log      *slog.Logger
}

// Close closes the cards of permission requests that were open
// when the previous run (or the conversation's previous holder) ended:
// their processes are gone. The decisions are recorded through st (the
// new tenure's fenced store with replicas) before the cards are edited,
// so a claimer that lost the conversation meanwhile edits nothing.
//
// A request without a stored card reference (its holder died between
// posting the card and storing where it shows, or before posting it) is
// closed through its conversation's key: the closed card is posted under
// the card's Idem with Retry, so an adapter that finds the card returns
// it instead of posting again, and the card is then edited to the closed
// text; a card that never reached the platform shows closed at once.
func (s StaleCards) Close(ctx context.Context, st *store.Store, open []store.Approval) {
	const status = "⌛ Expired: bridge restarted."
	keys := make(map[string]bridges.ConversationKey) // conversation id → key, for requests without a card reference
	for _, a := range open {
		if _, err := st.RecordApprovalDecision(ctx, a.ID, store.DecisionExpired, "", "bridge restarted"); err != nil {
			s.Log.Warn("startup: expire approval", "request", a.ID, "err", err)
			if errors.Is(err, store.ErrFenced) {
				return
			}
		}
		ref, ok := DecodeCardRef(a.CardRef)
		if !ok {
			key, found := keys[a.ConversationID]
			if !found {
				conv, err := s.Store.ConversationByID(ctx, a.ConversationID)
				if err != nil {
					s.Log.Warn("startup: close stale card without a reference: load conversation", "request", a.ID, "err", err)
					continue
				}
				key = bridges.ConversationKey(conv.Key)
				keys[a.ConversationID] = key
			}
			ref = bridges.MessageRef{Key: key}
		}
		p := s.Platform(ref.Key.Bot)
		if p == nil {
			continue
		}
		text := textcut.Truncate(render.DecidedText(render.StaleCardBody(a, s.Workdir(ref.Key.Bot)), status), maxRunesOf(p))
		closed := bridges.Message{Text: text, CardID: a.ID}
		if !ok {
			found, err := p.Post(ctx, ref.Key, bridges.Message{Text: text, CardID: a.ID, Idem: CardIdem(a.ConversationID, a.ID), Retry: true})
			if err != nil {
				s.Log.Warn("startup: close stale card without a reference", "request", a.ID, "err", err)
				continue
			}
			// The card found (or the closed card just posted, edited to
			// the same text) was posted when the request was made.
			ref = bridges.MessageRef{Key: ref.Key, ID: found.ID, At: a.RequestedAt}
		}
		instead := bridges.Message{Text: status, ReplyTo: ref.ID}
		if _, err := EditOrPost(ctx, p, p.Limits(), s.Now(), ref, closed, instead); err != nil {
			s.Log.Warn("startup: close stale card", "request", a.ID, "err", err)
		}
	}
}

func maxRunesOf(p bridges.Platform) int {
	if n := p.Limits().MaxMessageRunes; n > 0 {
		return n
	}
	return render.DefaultMaxRunes
}

// EncodeCardRef is a card's message reference as the audit table stores
// it, so that a restarted bridge can close the card (DecodeCardRef).
func EncodeCardRef(ref bridges.MessageRef) string {
	b, err := json.Marshal(ref)
	if err != nil {
		return ""
	}
	return string(b)
}

// DecodeCardRef reads a reference EncodeCardRef wrote; false for none.
func DecodeCardRef(s string) (bridges.MessageRef, bool) {
	var ref bridges.MessageRef
	if s == "" || json.Unmarshal([]byte(s), &ref) != nil || ref.ID == "" {
		return bridges.MessageRef{}, false
	}
	return ref, true
}

// CardIdem is the bridges.Message.Idem the card of request id in
// conversation conv is posted with (bridges/features/cards), the same on
// every holder: recovery posts the closed card under it with Retry set to
// find a card whose reference was never stored (closeStaleCards). The
// request id comes from the agent: with the conversation in the key, no
// id it picks can name another conversation's card on a platform whose
// dedup spans conversations (Discord's nonce is per bot).
func CardIdem(conv, id string) string { return "card:" + conv + ":" + id }
