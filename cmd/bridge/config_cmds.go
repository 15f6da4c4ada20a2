package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/agentbridge/agentbridge/config"
)

// loadConfig parses -config from args and loads the file; every problem is
// a usage error (exit 2).
func loadConfig(name string, args []string, stderr io.Writer, lookupEnv func(string) (string, bool)) (*config.Config, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("config", "bridge.yaml", "path of the YAML config file")
	if err := fs.Parse(args); err != nil {
		return nil, usageError{err}
	}
	if fs.NArg() > 0 {
		return nil, usagef("unexpected arguments: %v", fs.Args())
	}
	cfg, err := loadConfigFile(*path, lookupEnv)
	if err != nil {
		return nil, usageError{err}
	}
	return cfg, nil
}

func cmdCheckConfig(args []string, stdout, stderr io.Writer, lookupEnv func(string) (string, bool)) error {
	cfg, err := loadConfig("check-config", args, stderr, lookupEnv)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "config ok\n%s", cfg.Summary())
	return nil
}

// cmdExampleConfig prints the commented full example, or with -minimal the
// smallest useful config (the web console only), which `make run` writes
// on a fresh machine.
func cmdExampleConfig(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("example-config", flag.ContinueOnError)
	fs.SetOutput(stderr)
	minimal := fs.Bool("minimal", false, "print the minimal config: one agent profile and the web console")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usagef("example-config takes no arguments besides -minimal")
	}
	doc := config.Example()
	if *minimal {
		doc = config.Minimal()
	}
	_, err := stdout.Write(doc)
	return err
}
