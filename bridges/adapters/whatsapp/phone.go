package whatsapp

import (
	"fmt"
	"time"

	"go.mau.fi/whatsmeow/types"

	"github.com/agentbridge/agentbridge/bridges"
)

// phoneOfflineWarn is how long the bot's phone may be unseen before the
// admins are warned: WhatsApp unlinks the devices of a phone offline for
// about 14 days (mautrix-whatsapp warns at 12).
const phoneOfflineWarn = 12 * 24 * time.Hour

// notePhone notes a sign of life of the bot's own phone (the primary
// device, device 0): a message or receipt it sent.
func (b *Bridge) notePhone(src types.MessageSource) {
	if src.IsFromMe && src.Sender.Device == 0 {
		b.phoneSeen.Store(b.now().UnixNano())
		b.phoneWarned.Store(false)
	}
}

// checkPhone warns once (log and the bot's reported state, which /healthz
// and !status show) when the phone has not been seen for phoneOfflineWarn
// since it was last seen or since Run started.
func (b *Bridge) checkPhone() {
	since := b.now().Sub(time.Unix(0, b.phoneSeen.Load()))
	if since < phoneOfflineWarn || b.phoneWarned.Swap(true) {
		return
	}
	reason := fmt.Sprintf("the bot's phone has not been online for %d days: open WhatsApp on it (with a network) before day 14, "+
		"or WhatsApp unlinks this device", int(since.Hours()/24))
	b.log.Warn("whatsapp phone offline", "days", int(since.Hours()/24))
	if b.up.Load() {
		b.report(bridges.BotState{State: bridges.ConnConnected, Reason: reason})
	}
}
