package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"time"

	"github.com/agentbridge/agentbridge/bridges/whatsapp"
	"github.com/agentbridge/agentbridge/config"
)

// cmdWhatsAppLink links a WhatsApp bot as a device of a phone's account:
// bridge whatsapp-link -config FILE -bot NAME [-phone +NUMBER] [-relink].
// Flag and config problems exit 2; a link that fails (timeout, refusal,
// already linked) exits 1 with what to do.
func cmdWhatsAppLink(ctx context.Context, args []string, stdout, stderr io.Writer, lookupEnv func(string) (string, bool)) error {
	fs := flag.NewFlagSet("whatsapp-link", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("config", "bridge.yaml", "path of the YAML config file")
	bot := fs.String("bot", "", "name of the WhatsApp bot to link (required)")
	phone := fs.String("phone", "", "link with a pairing code for this number (+15551234567) instead of a QR code")
	relink := fs.Bool("relink", false, "replace the device the bot is already linked with")
	timeout := fs.Duration("timeout", whatsapp.DefaultLinkTimeout, "give up after this long")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usagef("unexpected arguments: %v", fs.Args())
	}
	if *bot == "" {
		return usagef("-bot is required (the name of a bot with platform: whatsapp)")
	}
	cfg, err := config.Load(*path, lookupEnv)
	if err != nil {
		return usageError{err}
	}
	b := cfg.Bot(*bot)
	switch {
	case b == nil:
		return usagef("no bot named %q in %s", *bot, *path)
	case b.Platform != config.PlatformWhatsApp:
		return usagef("bot %q is a %s bot, not a whatsapp bot", *bot, b.Platform)
	}
	logger := newLogger(cfg.Log, stderr)
	_, err = whatsapp.Link(ctx, whatsapp.LinkOptions{
		Bot: b.Name, DeviceStore: b.WhatsApp.DeviceStore, Phone: *phone, Relink: *relink,
		Timeout: *timeout, Out: stdout, ClearScreen: isTerminal(stdout), Log: logger,
	})
	return err
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// whatsappStartCheck is how long the start-up check of a device store may take.
const whatsappStartCheck = 10 * time.Second

// checkWhatsAppBot fails the start of a WhatsApp bot: unlinked, with the
// command that links it; linked, because the message adapter is not in
// this build yet.
func checkWhatsAppBot(ctx context.Context, cfg *config.Config, b *config.Bot) error {
	ctx, cancel := context.WithTimeout(ctx, whatsappStartCheck)
	defer cancel()
	jid, err := whatsapp.CheckLinked(ctx, b.Name, b.WhatsApp.DeviceStore, cfg.Path, nil)
	if err != nil {
		return err
	}
	return errors.New("the whatsapp message adapter is not available in this build yet (the bot is linked to +" + jid.User + ")")
}
