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
	cfg, err := config.Load(*path, lookupEnv)
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

func cmdExampleConfig(args []string, stdout io.Writer) error {
	if len(args) > 0 {
		return usagef("example-config takes no arguments")
	}
	_, err := stdout.Write(config.Example())
	return err
}
