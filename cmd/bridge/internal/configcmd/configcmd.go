// Package configcmd holds `bridge check-config` and `bridge
// example-config`.
package configcmd

import (
	"flag"
	"fmt"

	"github.com/agentbridge/agentbridge/cmd/bridge/internal/cli"
	"github.com/agentbridge/agentbridge/config"
)

// CheckConfig runs `bridge check-config [-config FILE]`: it validates the
// config and prints "config ok" and its summary; every problem is a usage
// error. A warning (config.Config.Warnings) goes to stderr and fails nothing.
func CheckConfig(args []string, env cli.Env) error {
	cfg, err := env.LoadConfig("check-config", args)
	if err != nil {
		return err
	}
	for _, w := range cfg.Warnings() {
		fmt.Fprintf(env.Stderr, "warning: %s\n", w)
	}
	fmt.Fprintf(env.Stdout, "config ok\n%s", cfg.Summary())
	return nil
}

// ExampleConfig runs `bridge example-config [-minimal]`: it prints the
// commented full example, or with -minimal the smallest useful config
// (the web console only), which `make run` writes on a fresh machine.
func ExampleConfig(args []string, env cli.Env) error {
	fs := flag.NewFlagSet("example-config", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	minimal := fs.Bool("minimal", false, "print the minimal config: one agent profile and the web console")
	if err := fs.Parse(args); err != nil {
		return cli.UsageError{Err: err}
	}
	if fs.NArg() > 0 {
		return cli.Usagef("example-config takes no arguments besides -minimal")
	}
	doc := config.Example()
	if *minimal {
		doc = config.Minimal()
	}
	_, err := env.Stdout.Write(doc)
	return err
}
