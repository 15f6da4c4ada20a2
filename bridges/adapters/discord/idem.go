package discord

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/bwmarrin/discordgo"
)

// maxNonceLen is the longest nonce Discord accepts (25 characters).
const maxNonceLen = 25

// nonceOf is the create-message nonce of part (0-based) of the reply
// idem: 25 hex characters of SHA-256(idem "/" part), the same on every
// attempt, different for each part and each reply.
func nonceOf(idem string, part int) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%s/%d", idem, part))
	return hex.EncodeToString(sum[:])[:maxNonceLen]
}

// nonceSend is a create-message body with Discord's idempotency fields,
// which discordgo v0.29's MessageSend lacks: with enforce_nonce, Discord
// answers a second create with the same nonce in the same channel within
// a few minutes with the message it created the first time.
type nonceSend struct {
	*discordgo.MessageSend
	Nonce        string `json:"nonce"`
	EnforceNonce bool   `json:"enforce_nonce"`
}

// sendMessage creates a message in ch. With a nonce ("" = none) the
// request carries it with enforce_nonce, so that a retry of a post whose
// answer was lost (by discordgo on a 502, or by the core later) returns
// the first message instead of creating another. It goes through the
// session's rate limiter like ChannelMessageSendComplex. send has no
// files.
func (b *Bridge) sendMessage(ctx context.Context, ch string, send *discordgo.MessageSend, nonce string) (*discordgo.Message, error) {
	if nonce == "" {
		return b.session.ChannelMessageSendComplex(ch, send, discordgo.WithContext(ctx))
	}
	endpoint := discordgo.EndpointChannelMessages(ch)
	body, err := b.session.RequestWithBucketID("POST", endpoint, nonceSend{MessageSend: send, Nonce: nonce, EnforceNonce: true},
		endpoint, discordgo.WithContext(ctx))
	if err != nil {
		return nil, err
	}
	var msg discordgo.Message
	if err := discordgo.Unmarshal(body, &msg); err != nil {
		return nil, fmt.Errorf("decode created message: %w", err)
	}
	return &msg, nil
}
