// Package whatsappcmd holds `bridge whatsapp-link`: a WhatsApp bot
// linked as a device of a phone's account.
package whatsappcmd

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/agentbridge/agentbridge/bridges/adapters/whatsapp"
	"github.com/agentbridge/agentbridge/bridges/app"
	"github.com/agentbridge/agentbridge/bridges/features/replica/connlease"
	"github.com/agentbridge/agentbridge/cmd/bridge/internal/cli"
	"github.com/agentbridge/agentbridge/config"
)

// Link runs `bridge whatsapp-link -config FILE -bot NAME [-phone +NUMBER]
// [-relink]`: it links a WhatsApp bot as a device of a phone's account.
// Flag and config problems exit 2; a link that fails (timeout, refusal,
// already linked) exits 1 with what to do.
func Link(ctx context.Context, args []string, env cli.Env) error {
	fs := flag.NewFlagSet("whatsapp-link", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	path := fs.String("config", cli.DefaultConfigPath, "path of the YAML config file")
	bot := fs.String("bot", "", "name of the WhatsApp bot to link (required)")
	phone := fs.String("phone", "", "link with a pairing code for this number (+15551234567) instead of a QR code")
	relink := fs.Bool("relink", false, "replace the device the bot is already linked with")
	timeout := fs.Duration("timeout", whatsapp.DefaultLinkTimeout, "give up after this long")
	if err := fs.Parse(args); err != nil {
		return cli.UsageError{Err: err}
	}
	if fs.NArg() > 0 {
		return cli.Usagef("unexpected arguments: %v", fs.Args())
	}
	if *bot == "" {
		return cli.Usagef("-bot is required (the name of a bot with platform: whatsapp)")
	}
	cfg, err := env.Load(*path)
	if err != nil {
		return cli.UsageError{Err: err}
	}
	b := cfg.Bot(*bot)
	switch {
	case b == nil:
		return cli.Usagef("no bot named %q in %s", *bot, *path)
	}
	wc, ok := b.Settings.(*whatsapp.Config)
	if !ok {
		return cli.Usagef("bot %q is a %s bot, not a whatsapp bot", *bot, b.Platform)
	}
	logger := env.Logger(cfg.Log)
	pg := whatsapp.PGDevicesOf(cfg, b.Name)
	if pg.DSN != "" {
		release, err := holdDeviceForLink(ctx, cfg, b.Name, *timeout, logger)
		if err != nil {
			return err
		}
		defer release()
	}
	_, err = whatsapp.Link(ctx, whatsapp.LinkOptions{
		Bot: b.Name, DeviceStore: wc.DeviceStore, Postgres: pg, Phone: *phone, Relink: *relink,
		Timeout: *timeout, Out: env.Stdout, ClearScreen: isTerminal(env.Stdout), Log: logger,
	})
	return err
}

// holdDeviceForLink keeps every bridge off bot's device while
// whatsapp-link links it into PostgreSQL, where no file lock can: it
// fails when a bridge runs on the database (store.Store.HoldOwner) and takes
// the device's connection lease itself, which fails while a replica holds
// the device and keeps the replicas standing by until release.
func holdDeviceForLink(ctx context.Context, cfg *config.Config, bot string, timeout time.Duration, logger *slog.Logger) (release func(), err error) {
	st, err := app.OpenStore(ctx, cfg, logger)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	owner, err := app.HoldStore(ctx, st)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("whatsapp-link: %w", err), st.Close())
	}
	host, _ := os.Hostname()
	l, err := st.AcquireLease(ctx, connlease.Resource(whatsapp.Name, bot), fmt.Sprintf("whatsapp-link %s:%d", host, os.Getpid()),
		timeout+time.Minute)
	if err != nil {
		err = fmt.Errorf("whatsapp-link: bot %q is connected by a running bridge (stop every replica first; "+
			"never link a device a bridge uses): %w", bot, err)
		return nil, errors.Join(err, owner.Release(), st.Close())
	}
	return func() {
		if err := errors.Join(st.ReleaseLease(context.WithoutCancel(ctx), l), owner.Release(), st.Close()); err != nil {
			logger.Warn("whatsapp-link: release the device", "err", err)
		}
	}, nil
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
