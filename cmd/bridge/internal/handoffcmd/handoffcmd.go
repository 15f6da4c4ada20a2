// Package handoffcmd holds the terminal hand-off commands
// (docs/handoff.md): `bridge attach`, `export` and `import`. Each talks
// to the running bridge on its http.listen with the person's token from
// BRIDGE_HANDOFF_TOKEN.
package handoffcmd

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"github.com/agentbridge/agentbridge/bridges/adapters/web"
	"github.com/agentbridge/agentbridge/bridges/features/handoff"
	"github.com/agentbridge/agentbridge/cmd/bridge/internal/cli"
)

// handoffFlags are the flags the hand-off commands share.
type handoffFlags struct {
	fs     *flag.FlagSet
	config *string
	url    *string
}

func newHandoffFlags(name string, stderr io.Writer) handoffFlags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return handoffFlags{fs: fs,
		config: fs.String("config", cli.DefaultConfigPath, "the bridge's config file (for its http.listen), when -url is not given"),
		url:    fs.String("url", "", "the bridge's HTTP address, e.g. http://127.0.0.1:9464 (default: env BRIDGE_URL, else from -config)"),
	}
}

// parse parses args, which may put the one positional argument before
// or after the flags, and returns it ("" if none).
func (h handoffFlags) parse(args []string) (string, error) {
	if err := h.fs.Parse(args); err != nil {
		return "", cli.UsageError{Err: err}
	}
	rest := h.fs.Args()
	if len(rest) == 0 {
		return "", nil
	}
	arg := rest[0]
	if err := h.fs.Parse(rest[1:]); err != nil {
		return "", cli.UsageError{Err: err}
	}
	if h.fs.NArg() > 0 {
		return "", cli.Usagef("unexpected arguments: %v", h.fs.Args())
	}
	return arg, nil
}

// client is the hand-off client for the bridge the flags name, with the
// token from the environment.
func (h handoffFlags) client(env cli.Env) (*handoff.Client, error) {
	token, _ := env.LookupEnv(handoff.TokenEnv)
	if token == "" {
		return nil, cli.Usagef("set %s to your handoff token (config handoff.users; ask an admin)", handoff.TokenEnv)
	}
	base := *h.url
	if base == "" {
		base, _ = env.LookupEnv("BRIDGE_URL")
	}
	if base == "" {
		cfg, err := env.Load(*h.config)
		if err != nil {
			return nil, cli.Usagef("find the bridge's address: %v (or give -url)", err)
		}
		if cfg.HTTP.Listen == "" {
			return nil, cli.Usagef("the bridge's http.listen is off: the terminal hand-off needs it")
		}
		base = web.ConsoleURL(cfg.HTTP.Listen)
	}
	return &handoff.Client{Base: base, Token: token}, nil
}

// Attach runs `bridge attach CONVERSATION`: an interactive terminal on
// the conversation's live agent until env.Stdin ends.
func Attach(ctx context.Context, args []string, env cli.Env) error {
	h := newHandoffFlags("attach", env.Stderr)
	conv, err := h.parse(args)
	if err != nil {
		return err
	}
	if conv == "" {
		return cli.Usagef("usage: bridge attach [-config FILE | -url URL] CONVERSATION (the id !handoff shows)")
	}
	c, err := h.client(env)
	if err != nil {
		return err
	}
	return c.Attach(ctx, conv, env.Stdin, env.Stdout)
}

// Export runs `bridge export CONVERSATION -dir DIR`: the session's
// transcript where `claude --resume` run in DIR finds it.
func Export(ctx context.Context, args []string, env cli.Env) error {
	h := newHandoffFlags("export", env.Stderr)
	dir := h.fs.String("dir", ".", "the project directory to continue the session in")
	conv, err := h.parse(args)
	if err != nil {
		return err
	}
	if conv == "" {
		return cli.Usagef("usage: bridge export [-config FILE | -url URL] CONVERSATION -dir DIR")
	}
	c, err := h.client(env)
	if err != nil {
		return err
	}
	configDir, _ := env.LookupEnv("CLAUDE_CONFIG_DIR")
	if configDir == "" {
		home, _ := env.LookupEnv("HOME")
		if home == "" {
			return errors.New("export: neither CLAUDE_CONFIG_DIR nor HOME is set: where does claude keep its sessions?")
		}
		configDir = filepath.Join(home, ".claude")
	}
	id, path, err := c.Export(ctx, conv, *dir, configDir)
	if err != nil {
		return err
	}
	abs, _ := filepath.Abs(*dir)
	fmt.Fprintf(env.Stdout, "Wrote %s\nContinue the session with:\n  cd %q && claude --resume %s\n", path, abs, id)
	fmt.Fprintln(env.Stdout, "Note: the conversation's agent wrote this transcript, and what it says reaches the model: "+
		"resume it in the default permission mode and read what it proposes (docs/handoff.md).")
	return nil
}

// Import runs `bridge import -bot NAME -channel C FILE`: a local Claude
// Code session continued in a new conversation of the bot.
func Import(ctx context.Context, args []string, env cli.Env) error {
	h := newHandoffFlags("import", env.Stderr)
	bot := h.fs.String("bot", "", "the bot to continue the session with")
	channel := h.fs.String("channel", "", "the channel (id) to start its thread in")
	file, err := h.parse(args)
	if err != nil {
		return err
	}
	if file == "" || *bot == "" || *channel == "" {
		return cli.Usagef("usage: bridge import [-config FILE | -url URL] -bot NAME -channel C SESSION.jsonl (from ~/.claude/projects/…)")
	}
	c, err := h.client(env)
	if err != nil {
		return err
	}
	im, err := c.Import(ctx, *bot, *channel, file)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "Imported session %s (%d messages) as conversation %s in %s/%s/%s.\nContinue it there, or here with: bridge attach %s\n",
		im.Session, im.Messages, im.Conversation, im.Bot, im.Channel, im.Thread, im.Conversation)
	return nil
}
