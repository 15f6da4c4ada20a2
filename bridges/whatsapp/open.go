package whatsapp

import (
	"context"
	"fmt"
	"log/slog"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/types"

	"github.com/agentbridge/agentbridge/config"
)

// Open makes the adapter of a configured WhatsApp bot over a real client
// of its linked device: it opens the bot's device store (which must hold
// a linked device: see CheckLinked for the error otherwise), turns on the
// decrypted-event buffer and synchronous acks (a message is acknowledged
// only once the core recorded it), and looks up the bot's phone numbers
// (access lists) at every connection. whatsmeow's own reconnects are off:
// Run reconnects. The returned close function closes the device store once
// Run has returned. cfg.Path is named in the relink command a logged-out
// bot asks for. This is the constructor every adapter has (cmd/bridge's
// list of platforms calls it).
func Open(ctx context.Context, cfg *config.Config, bot *config.Bot, log *slog.Logger) (*Bridge, func() error, error) {
	configPath := cfg.Path
	var wc *Config
	if bot != nil {
		wc, _ = bot.Settings.(*Config)
	}
	if wc == nil {
		return nil, nil, fmt.Errorf("whatsapp open: %w: not a WhatsApp bot", ErrBadMessage)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if _, err := CheckLinked(ctx, bot.Name, wc.DeviceStore, configPath, log); err != nil {
		return nil, nil, err
	}
	container, err := OpenDeviceStore(ctx, wc.DeviceStore, log)
	if err != nil {
		return nil, nil, err
	}
	dev, err := container.GetFirstDevice(ctx)
	if err != nil || dev.ID == nil {
		_ = container.Close()
		return nil, nil, fmt.Errorf("whatsapp device store %s: no linked device (%v)", wc.DeviceStore, err)
	}
	cli := whatsmeow.NewClient(dev, Logger(log, "Client"))
	cli.EnableDecryptedEventBuffer = true
	cli.SynchronousAck = true
	// Run reconnects (capped back-off, forever): whatsmeow's own
	// reconnect waits 2 s more after every failure, without a cap.
	cli.EnableAutoReconnect = false
	b := New(Options{
		Bot:    bot.Name,
		Client: cli,
		Self:   func() (types.JID, types.JID) { return cli.Store.GetJID(), cli.Store.GetLID() },
		LIDs:   cli.Store.LIDs,
		Log:    log,
		Phones: accessPhones(bot.Access),

		Approvals:  wc.Approvals,
		ConfigPath: configPath,
	})
	return b, container.Close, nil
}

// accessPhones are the phone numbers (entries starting with "+") of an
// access list.
func accessPhones(a config.Access) []string {
	seen := map[string]bool{}
	var out []string
	for _, list := range [][]string{a.Users, a.Approvers, a.Admins} {
		for _, p := range list {
			if len(p) > 1 && p[0] == '+' && !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	return out
}

// lookUpPhones asks WhatsApp about the configured phone numbers: this
// stores their LID mappings (so that LID senders can be matched) and
// catches typos, which are logged.
func (b *Bridge) lookUpPhones(ctx context.Context) {
	if len(b.phones) == 0 {
		return
	}
	res, err := b.cli.IsOnWhatsApp(ctx, b.phones)
	if err != nil {
		b.log.Warn("whatsapp lookup of the access list's numbers failed", "err", err)
		return
	}
	for _, r := range res {
		if !r.IsIn {
			b.log.Warn("a number of the access list is not on WhatsApp", "user", r.Query)
		}
	}
}
