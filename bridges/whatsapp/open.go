package whatsapp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/store"
	"go.mau.fi/whatsmeow/types"

	"github.com/agentbridge/agentbridge/config"
)

// Open makes the adapter of a configured WhatsApp bot over a real client
// of its linked device: it checks that the bot's device store holds a
// linked device (CheckLinked: the error says how to link it), locks the
// store against a second process (LockDeviceStore: ErrDeviceInUse), opens
// it, turns on the decrypted-event buffer and synchronous acks (a message
// is acknowledged only once the core recorded it), the retry message store
// and re-requests from the phone, and looks up the bot's phone numbers
// (access lists) once connected. whatsmeow's own reconnects are off: Run
// reconnects. The returned close function closes the device store once
// Run has returned, and releases the lock. cfg.Path is named in the
// relink command a logged-out bot asks for. This is the constructor every
// adapter has (cmd/bridge's list of platforms calls it).
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
		return nil, nil, err // read only: creates nothing
	}
	unlock, err := LockDeviceStore(wc.DeviceStore)
	if err != nil {
		return nil, nil, err
	}
	container, err := OpenDeviceStore(ctx, wc.DeviceStore, log)
	if err != nil {
		_ = unlock()
		return nil, nil, err
	}
	dev, err := container.GetFirstDevice(ctx)
	if err != nil || dev.ID == nil {
		_ = container.Close()
		_ = unlock()
		return nil, nil, fmt.Errorf("whatsapp device store %s: no linked device (%v)", wc.DeviceStore, err)
	}
	cli := whatsmeow.NewClient(dev, Logger(log, "Client"))
	cli.EnableDecryptedEventBuffer = true
	cli.SynchronousAck = true
	// Run reconnects (capped back-off, forever): whatsmeow's own
	// reconnect waits 2 s more after every failure, without a cap.
	cli.EnableAutoReconnect = false
	// As the reference bridge (mautrix-whatsapp) does: keep sent messages
	// for recipients' retry receipts across restarts (else a phone that
	// failed to decrypt shows "Waiting for this message" for ever), and ask
	// the bot's phone for messages this device could not decrypt.
	cli.UseRetryMessageStore = true
	cli.AutomaticMessageRerequestFromPhone = true
	b := New(Options{
		Bot:    bot.Name,
		Client: cli,
		Self:   func() (types.JID, types.JID) { return cli.Store.GetJID(), cli.Store.GetLID() },
		LIDs:   cli.Store.LIDs,
		Log:    log,
		Phones: accessPhones(bot.Access),

		Approvals:      wc.Approvals,
		ConfigPath:     configPath,
		RefreshVersion: refreshWAVersion,
	})
	closeAll := func() error { return errors.Join(container.Close(), unlock()) }
	return b, closeAll, nil
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
// catches typos, which are logged. Run asks once, after the first
// connection (again after a failed lookup), not at every reconnect.
func (b *Bridge) lookUpPhones(ctx context.Context) {
	if len(b.phones) == 0 {
		return
	}
	res, err := b.cli.IsOnWhatsApp(ctx, b.phones)
	if err != nil {
		b.lookedUp.Store(false) // again at the next connection
		b.log.Warn("whatsapp lookup of the access list's numbers failed", "err", err)
		return
	}
	for _, r := range res {
		if !r.IsIn {
			b.log.Warn("a number of the access list is not on WhatsApp", "user", r.Query)
		}
	}
}

// refreshWAVersion fetches WhatsApp Web's current version and makes
// whatsmeow use it (a process-wide setting of the library), reporting
// whether it changed.
func refreshWAVersion(ctx context.Context) (bool, error) {
	v, err := whatsmeow.GetLatestVersion(ctx, &http.Client{Timeout: 30 * time.Second})
	if err != nil {
		return false, fmt.Errorf("whatsapp version: %w", err)
	}
	if *v == store.GetWAVersion() {
		return false, nil
	}
	store.SetWAVersion(*v)
	return true, nil
}
