package whatsapp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/types"

	"github.com/agentbridge/agentbridge/bridges"
)

// messageID is the WhatsApp message id of part (0-based) of the reply
// idem, in the format of whatsmeow's GenerateMessageID ("3EB0" and 18
// upper-case hex digits): the same on every attempt, so that a retry
// after a lost answer re-sends the same id and WhatsApp shows the message
// once. "" when idem is "" (whatsmeow then chooses a random id).
func messageID(idem string, part int) types.MessageID {
	if idem == "" {
		return ""
	}
	sum := sha256.Sum256(fmt.Appendf(nil, "agentbridge/%s/%d", idem, part))
	return whatsmeow.WebMessageIDPrefix + strings.ToUpper(hex.EncodeToString(sum[:9]))
}

// sendExtra is the SendMessage option that sets id (none for "").
func sendExtra(id types.MessageID) []whatsmeow.SendRequestExtra {
	if id == "" {
		return nil
	}
	return []whatsmeow.SendRequestExtra{{ID: id}}
}

// isPermanent reports whether an error of Post is one no retry can fix:
// a message or chat the adapter refuses (ErrBadMessage, ErrNotAllowed),
// a device that is not (or no longer) logged in, a recipient WhatsApp
// cannot take, or a request WhatsApp refused as bad, unauthorized,
// forbidden, not found or gone. Disconnected (whatsmeow's
// ErrNotConnected), timed out (ErrMessageTimedOut), 5xx and 429 answers
// are transient: the core tries again once the client is back.
func isPermanent(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	for _, target := range []error{ErrBadMessage, ErrNotAllowed, whatsmeow.ErrNotLoggedIn, whatsmeow.ErrRecipientADJID,
		whatsmeow.ErrUnknownServer, whatsmeow.ErrBroadcastListUnsupported, whatsmeow.ErrInvalidInlineBotID} {
		if errors.Is(err, target) {
			return true
		}
	}
	if iq, ok := errors.AsType[*whatsmeow.IQError](err); ok {
		switch iq.Code {
		case 400, 401, 403, 404, 405, 406, 410:
			return true
		}
	}
	return false
}

// classify marks err with bridges.Permanent when no retry can fix it.
func classify(err error) error {
	if isPermanent(err) {
		return bridges.Permanent(err)
	}
	return err
}
