package whatsapp

import (
	"context"
	"errors"
	"fmt"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/types"
)

// sendPresence tells WhatsApp the bot's presence after connecting (and
// when the push name arrives after linking): without it other people see
// "-" as its name. "Unavailable" keeps the phone's notifications. Before
// the first app-state sync brings the push name it fails with
// whatsmeow.ErrNoPushName, and PushNameSetting sends it again.
func (b *Bridge) sendPresence(ctx context.Context) {
	err := b.cli.SendPresence(ctx, types.PresenceUnavailable)
	switch {
	case err == nil:
	case errors.Is(err, whatsmeow.ErrNoPushName):
		b.log.Debug("whatsapp presence waits for the push name", "err", err)
	default:
		b.log.Warn("whatsapp presence not sent", "err", err)
	}
}

// refreshVersion makes the client use WhatsApp Web's current version
// (once: a second "outdated" is a failure), for Run to connect again; it
// fails when the version cannot be fetched or did not change.
func (b *Bridge) refreshVersion(ctx context.Context) error {
	changed, err := b.refresh(ctx)
	if err != nil {
		return fmt.Errorf("fetch the current WhatsApp Web version: %w", err)
	}
	if !changed {
		return errors.New("the current WhatsApp Web version is the one refused")
	}
	b.log.Warn("whatsapp said this client is outdated: using the current WhatsApp Web version; upgrade the bridge soon")
	return nil
}
