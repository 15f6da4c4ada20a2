package whatsapp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/mdp/qrterminal/v3"
	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/store"
	"go.mau.fi/whatsmeow/store/sqlstore"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
)

// Errors of linking and of the start-up check. Messages returned by Link
// and CheckLinked wrap them and say what to do.
var (
	ErrAlreadyLinked = errors.New("already linked")
	ErrNotLinked     = errors.New("not linked")
	ErrLinkTimeout   = errors.New("linking timed out")
	ErrLinkRefused   = errors.New("linking refused")
)

// DefaultLinkTimeout bounds a whole linking attempt (WhatsApp stops
// offering codes after ~160 s; the rest is for the connection to finish).
const DefaultLinkTimeout = 4 * time.Minute

// LinkOptions configure Link.
type LinkOptions struct {
	Bot         string // bot name, for messages
	DeviceStore string // the bot's device store file (config whatsapp.device_store)
	// Phone asks for a pairing code for this number (E.164, "+15551234567")
	// instead of showing QR codes.
	Phone string
	// Relink deletes the device already stored (if any) and links a new
	// one; if that fails, the bot is left unlinked. The phone keeps listing
	// the old device until it is removed there.
	Relink bool
	// Timeout bounds the attempt; 0 = DefaultLinkTimeout.
	Timeout time.Duration
	// Out receives the QR codes or the pairing code and the instructions.
	Out io.Writer
	// ClearScreen redraws each new QR code on a cleared screen (Out is a
	// terminal) instead of printing it below the previous one.
	ClearScreen bool
	Log         *slog.Logger
	// Postgres, when set, is the bot's device store in PostgreSQL
	// (store.driver: postgres) in place of DeviceStore. Nothing locks it
	// against a running bridge there: the caller checks that none holds
	// the bot (cmd/bridge does).
	Postgres PGDevices
}

// where names the device store for messages.
func (o LinkOptions) where() string {
	if o.Postgres.DSN != "" {
		return o.Postgres.String()
	}
	return o.DeviceStore
}

// Link pairs the bot as a linked device of a phone's WhatsApp account and
// stores the device in opts.DeviceStore. It waits until the new device has
// connected (not just paired), prints the linked number and returns its
// JID. It fails with a message saying what to do when the bot is already
// linked (ErrAlreadyLinked, unless Relink), when no phone links in time
// (ErrLinkTimeout), or when WhatsApp refuses (ErrLinkRefused: a passkey
// request, an outdated client, a rejected number).
func Link(ctx context.Context, opts LinkOptions) (types.JID, error) {
	return linkWith(ctx, opts, func(cli *whatsmeow.Client) linkClient { return cli })
}

// linkWith is Link with the client wrapped by wrap (tests keep the real
// client but replace its network calls).
func linkWith(ctx context.Context, opts LinkOptions, wrap func(*whatsmeow.Client) linkClient) (types.JID, error) {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	container, unlock, err := openForLink(ctx, opts)
	if err != nil {
		return types.JID{}, err
	}
	defer unlock()
	defer container.Close()
	dev, err := container.GetFirstDevice(ctx)
	if err != nil {
		return types.JID{}, fmt.Errorf("whatsapp device store %s: %w", opts.where(), err)
	}
	if dev.ID != nil {
		if !opts.Relink {
			return types.JID{}, fmt.Errorf("bot %q is %w to %s: pass -relink to replace this device with a new one", opts.Bot, ErrAlreadyLinked, phoneOf(*dev.ID))
		}
		old := *dev.ID
		if err := container.DeleteDevice(ctx, dev); err != nil {
			return types.JID{}, fmt.Errorf("delete the old device of bot %q: %w", opts.Bot, err)
		}
		fmt.Fprintf(opts.Out, "Deleted the device linked to %s; also remove it on that phone (WhatsApp → Linked devices).\n", phoneOf(old))
		dev = container.NewDevice()
	}
	// The name the phone shows under Linked devices (sent at registration).
	store.SetOSInfo("agentbridge", [3]uint32{1, 0, 0})
	cli := whatsmeow.NewClient(dev, Logger(opts.Log, "Client"))
	defer cli.Disconnect()
	return link(ctx, wrap(cli), opts)
}

// linkClient is the part of waClient that linking uses.
type linkClient interface {
	AddEventHandler(handler whatsmeow.EventHandler) uint32
	RemoveEventHandler(id uint32) bool
	Connect() error
	GetQRChannel(ctx context.Context) (<-chan whatsmeow.QRChannelItem, error)
	PairPhone(ctx context.Context, phone string, showPushNotification bool, clientType whatsmeow.PairClientType, clientDisplayName string) (string, error)
}

// linkWatch collects the connection events that the QR channel does not
// report: the paired JID, the connection after pairing, a local failure.
type linkWatch struct {
	mu        sync.Mutex
	paired    types.JID
	connected chan struct{}
	failed    chan error
	once      sync.Once
}

func (w *linkWatch) handle(evt any) {
	switch e := evt.(type) {
	case *events.PairSuccess:
		w.mu.Lock()
		w.paired = e.ID
		w.mu.Unlock()
	case *events.Connected:
		w.once.Do(func() { close(w.connected) })
	case *events.PairError:
		w.fail(fmt.Errorf("%w: pairing succeeded on the phone but could not be finished here (%v); run the command again", ErrLinkRefused, e.Error))
	case *events.LoggedOut:
		w.fail(fmt.Errorf("%w: WhatsApp logged the new device out right away (reason %v)", ErrLinkRefused, e.Reason))
	case *events.TemporaryBan:
		w.fail(fmt.Errorf("%w: the account is temporarily banned (%v)", ErrLinkRefused, e))
	case *events.ClientOutdated:
		w.fail(fmt.Errorf("%w: WhatsApp rejects this client version as outdated: upgrade the bridge", ErrLinkRefused))
	}
}

func (w *linkWatch) fail(err error) {
	select {
	case w.failed <- err:
	default:
	}
}

// link runs the pairing on cli, a client whose device is not linked.
func link(ctx context.Context, cli linkClient, opts LinkOptions) (types.JID, error) {
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultLinkTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	w := &linkWatch{connected: make(chan struct{}), failed: make(chan error, 1)}
	id := cli.AddEventHandler(w.handle)
	defer cli.RemoveEventHandler(id)

	qr, err := cli.GetQRChannel(ctx) // before Connect: codes are read from the start
	if err != nil {
		return types.JID{}, fmt.Errorf("whatsapp link: %w", err)
	}
	if err := cli.Connect(); err != nil {
		return types.JID{}, fmt.Errorf("whatsapp link: connect: %w", err)
	}
	if err := showCodes(ctx, cli, qr, w, opts); err != nil {
		return types.JID{}, err
	}
	fmt.Fprintln(opts.Out, "Paired; waiting for the new device to connect…")
	select {
	case <-w.connected:
	case err := <-w.failed:
		return types.JID{}, err
	case <-ctx.Done():
		return types.JID{}, fmt.Errorf("%w: paired, but the device did not connect within %s; run the command again with -relink", ErrLinkTimeout, timeout)
	}
	w.mu.Lock()
	jid := w.paired
	w.mu.Unlock()
	fmt.Fprintf(opts.Out, "Linked bot %q to %s. Start the bridge with `bridge run`.\n", opts.Bot, phoneOf(jid))
	return jid, nil
}

// showCodes reads the QR channel until pairing succeeds: it draws each QR
// code (or, with opts.Phone, asks once for a pairing code and prints it).
func showCodes(ctx context.Context, cli linkClient, qr <-chan whatsmeow.QRChannelItem, w *linkWatch, opts LinkOptions) error {
	codes := 0
	for {
		var item whatsmeow.QRChannelItem
		var ok bool
		select {
		case item, ok = <-qr:
		case err := <-w.failed:
			return err
		case <-ctx.Done():
			return fmt.Errorf("%w: no phone linked the bot in time; run the command again", ErrLinkTimeout)
		}
		if !ok {
			return fmt.Errorf("%w: WhatsApp closed the linking session; run the command again", ErrLinkTimeout)
		}
		switch item.Event {
		case whatsmeow.QRChannelEventCode:
			codes++
			if opts.Phone != "" {
				if codes == 1 {
					if err := pairPhone(ctx, cli, opts); err != nil {
						return err
					}
				}
				continue
			}
			drawQR(opts, item, codes)
		case whatsmeow.QRChannelSuccess.Event:
			return nil
		case whatsmeow.QRChannelTimeout.Event:
			return fmt.Errorf("%w: the codes expired before a phone linked the bot; run the command again", ErrLinkTimeout)
		case whatsmeow.QRChannelEventPasskeyRequest:
			return fmt.Errorf("%w: WhatsApp asked this device for a passkey confirmation, which the bridge cannot give; "+
				"run the command again (with -phone to use a pairing code instead of a QR code, or without it)", ErrLinkRefused)
		case whatsmeow.QRChannelClientOutdated.Event:
			return fmt.Errorf("%w: WhatsApp rejects this client version as outdated: upgrade the bridge", ErrLinkRefused)
		case whatsmeow.QRChannelScannedWithoutMultidevice.Event:
			return fmt.Errorf("%w: the phone does not have multi-device enabled; update WhatsApp on the phone and try again", ErrLinkRefused)
		case whatsmeow.QRChannelErrUnexpectedEvent.Event:
			return fmt.Errorf("%w: the connection was in an unexpected state (already logged in, or banned); run the command again with -relink", ErrLinkRefused)
		case whatsmeow.QRChannelEventError:
			return fmt.Errorf("%w: %v; run the command again", ErrLinkRefused, item.Error)
		default:
			opts.Log.Debug("whatsapp link: ignored QR channel item", "event", item.Event)
		}
	}
}

// drawQR prints one QR code with the instructions to scan it.
func drawQR(opts LinkOptions, item whatsmeow.QRChannelItem, n int) {
	if opts.ClearScreen {
		fmt.Fprint(opts.Out, "\x1b[H\x1b[2J")
	} else if n > 1 {
		fmt.Fprintln(opts.Out, "\nThe code changed; scan this one:")
	}
	qrterminal.GenerateHalfBlock(item.Code, qrterminal.L, opts.Out)
	fmt.Fprintf(opts.Out, "Scan with WhatsApp on the bot's phone: Settings → Linked devices → Link a device. "+
		"This code is valid for %d s; a new one follows.\n", int(item.Timeout.Seconds()))
}

// pairPhone asks WhatsApp for a pairing code for opts.Phone and prints it.
func pairPhone(ctx context.Context, cli linkClient, opts LinkOptions) error {
	code, err := cli.PairPhone(ctx, opts.Phone, true, whatsmeow.PairClientChrome, "Chrome (Linux)")
	switch {
	case errors.Is(err, whatsmeow.ErrPhoneNumberTooShort), errors.Is(err, whatsmeow.ErrPhoneNumberIsNotInternational):
		return fmt.Errorf("%w: -phone %s: %v (want the full international number, e.g. +15551234567)", ErrLinkRefused, opts.Phone, err)
	case err != nil:
		return fmt.Errorf("%w: WhatsApp refused a pairing code for %s (is this number on WhatsApp?): %v", ErrLinkRefused, opts.Phone, err)
	}
	fmt.Fprintf(opts.Out, "On the phone of %s: WhatsApp → Settings → Linked devices → Link a device → "+
		"Link with phone number instead, and enter this code:\n\n    %s\n\n", opts.Phone, code)
	return nil
}

// phoneOf renders a phone-number JID as "+NUMBER" (other JIDs as they are).
func phoneOf(jid types.JID) string {
	if jid.Server == types.DefaultUserServer && jid.User != "" {
		return "+" + jid.User
	}
	return strings.TrimSpace(jid.String())
}

// CheckLinked reports whether the bot's device store holds a linked
// device; a bot that is not linked gives an error wrapping ErrNotLinked
// that names the command to run (configPath is the -config argument).
func CheckLinked(ctx context.Context, bot, deviceStore, configPath string, log *slog.Logger) (types.JID, error) {
	notLinked := fmt.Errorf("whatsapp bot %q is %w to a phone yet: run `bridge whatsapp-link -config %s -bot %s` first",
		bot, ErrNotLinked, configPath, bot)
	if _, err := os.Stat(deviceStore); errors.Is(err, fs.ErrNotExist) {
		return types.JID{}, notLinked // without creating the store
	}
	container, err := OpenDeviceStore(ctx, deviceStore, log)
	if err != nil {
		return types.JID{}, err
	}
	defer container.Close()
	dev, err := container.GetFirstDevice(ctx)
	if err != nil {
		return types.JID{}, fmt.Errorf("whatsapp device store %s: %w", deviceStore, err)
	}
	if dev.ID == nil {
		return types.JID{}, notLinked
	}
	return *dev.ID, nil
}

// openForLink opens the device store Link fills: the SQLite file, locked
// until unlock (ErrDeviceInUse when a bridge runs on it), or the
// PostgreSQL schema. Close the container before unlock.
func openForLink(ctx context.Context, opts LinkOptions) (c *sqlstore.Container, unlock func() error, err error) {
	if opts.Postgres.DSN != "" {
		c, err := openPGDevices(ctx, opts.Postgres, opts.Log)
		return c, func() error { return nil }, err
	}
	unlock, err = LockDeviceStore(opts.DeviceStore)
	if err != nil {
		return nil, nil, err
	}
	c, err = OpenDeviceStore(ctx, opts.DeviceStore, opts.Log)
	if err != nil {
		return nil, nil, errors.Join(err, unlock())
	}
	return c, unlock, nil
}
