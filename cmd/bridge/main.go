// Command bridge connects Slack, Discord and WhatsApp conversations to
// persistent Claude Code agents. See README.md and `bridge example-config`.
//
// Exit codes: 0 ok, 1 runtime failure, 2 usage or configuration error.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	// A sandbox's launcher runs from this package's init, before the heavy
	// dependencies start, and becomes the CLI (agent/sandbox/egress/launch).
	_ "github.com/agentbridge/agentbridge/agent/sandbox/egress/launch"
	"github.com/agentbridge/agentbridge/bridges/app"
	"github.com/agentbridge/agentbridge/cmd/bridge/internal/cli"
	"github.com/agentbridge/agentbridge/cmd/bridge/internal/configcmd"
	"github.com/agentbridge/agentbridge/cmd/bridge/internal/handoffcmd"
	"github.com/agentbridge/agentbridge/cmd/bridge/internal/reloadcmd"
	"github.com/agentbridge/agentbridge/cmd/bridge/internal/storecmd"
	"github.com/agentbridge/agentbridge/cmd/bridge/internal/weblink"
	"github.com/agentbridge/agentbridge/cmd/bridge/internal/whatsappcmd"
	"github.com/agentbridge/agentbridge/config"
)

// Exit codes of the CLI contract.
const (
	exitOK      = 0
	exitRuntime = 1
	exitUsage   = 2
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.LookupEnv)
	stop()
	os.Exit(code)
}

// usageError marks the errors of `bridge run` that exit with exitUsage
// (the other commands' are cli.UsageError).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

const usageText = `usage: bridge <command> [flags]

commands:
  run [-config bridge.yaml] [-demo]
                                   run the bridge until SIGINT/SIGTERM; -demo: no
                                   credentials, the real CLI against the built-in
                                   scripted model, web console only
  check-config [-config FILE]      validate the config and print a summary
  reload [-config FILE] [-now]     make the running bridge reload its config
                                   (validated first; -now: replace agents of
                                   changed profiles even during background tasks)
  web-link [-config FILE]          print a sign-in link for the web console's
                                   generated admin (or how web.users sign in)
  attach [-config FILE | -url URL] CONVERSATION
                                   continue a conversation's live agent in this
                                   terminal (token in BRIDGE_HANDOFF_TOKEN)
  export [-config FILE | -url URL] CONVERSATION -dir DIR
                                   write its session where claude --resume run
                                   in DIR finds it
  import [-config FILE | -url URL] -bot NAME -channel C SESSION.jsonl
                                   continue a local Claude Code session in a new
                                   thread of a bot
  whatsapp-link [-config FILE] -bot NAME [-phone +NUMBER] [-relink]
                                   link a WhatsApp bot to a phone (QR code, or a
                                   pairing code with -phone)
  migrate-store -from sqlite://PATH -to postgres://USER@HOST/DB
                                   copy an installation's database into an empty
                                   PostgreSQL database (stop the bridge first)
  example-config [-minimal]        print the commented example config (-minimal:
                                   the web-console-only config make run writes)
  version                          print the version
`

// run dispatches a subcommand and maps its error to an exit code. `bridge
// run` is wired in this package; every other command lives in a package
// of its own under internal/ and gets a cli.Env.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, lookupEnv func(string) (string, bool)) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usageText)
		return exitUsage
	}
	env := cli.Env{
		Stdin: os.Stdin, Stdout: stdout, Stderr: stderr, LookupEnv: lookupEnv,
		Load:   func(path string) (*config.Config, error) { return app.LoadConfig(path, lookupEnv) },
		Logger: func(c config.Log) *slog.Logger { return app.NewLogger(c, stderr) },
	}
	var err error
	switch args[0] {
	case "run":
		err = cmdRun(ctx, args[1:], stderr, lookupEnv)
	case "check-config":
		err = configcmd.CheckConfig(args[1:], env)
	case "reload":
		err = reloadcmd.Run(ctx, args[1:], env)
	case "web-link":
		err = weblink.Run(args[1:], env)
	case "attach":
		err = handoffcmd.Attach(ctx, args[1:], env)
	case "export":
		err = handoffcmd.Export(ctx, args[1:], env)
	case "import":
		err = handoffcmd.Import(ctx, args[1:], env)
	case "whatsapp-link":
		err = whatsappcmd.Link(ctx, args[1:], env)
	case "migrate-store":
		err = storecmd.MigrateStore(ctx, args[1:], env)
	case "example-config":
		err = configcmd.ExampleConfig(args[1:], env)
	case "version":
		fmt.Fprintf(stdout, "bridge %s\n", version)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usageText)
	default:
		fmt.Fprintf(stderr, "bridge: unknown command %q\n\n%s", args[0], usageText)
		return exitUsage
	}
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(stderr, "bridge %s: %v\n", args[0], err)
	var ue usageError
	var ce app.ConfigError
	if errors.As(err, &ue) || errors.As(err, &ce) || cli.IsUsage(err) {
		return exitUsage
	}
	return exitRuntime
}
