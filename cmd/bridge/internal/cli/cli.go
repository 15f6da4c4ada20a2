// Package cli is what the bridge's subcommands share with main, which
// dispatches to them: the streams and environment a command runs with,
// the config loader (app.LoadConfig: with the bridge's platforms, which
// bridges/app lists), and usage errors. Main prints a command's error after
// "bridge COMMAND: " and turns it into the exit code: 2 for a usage
// error, 1 for any other.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"github.com/agentbridge/agentbridge/config"
)

// DefaultConfigPath is -config's default.
const DefaultConfigPath = "bridge.yaml"

// Env is what a subcommand runs with.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer // flag errors and help, and the log
	// LookupEnv reads the process environment (os.LookupEnv; tests give
	// their own).
	LookupEnv func(string) (string, bool)
	// Load loads and validates the config file at path with the bridge's
	// platforms, expanding ${ENV} through LookupEnv (config.Load); its
	// error lists every problem with its line.
	Load func(path string) (*config.Config, error)
	// Logger makes the logger the config's log section asks for, writing
	// to Stderr.
	Logger func(config.Log) *slog.Logger
}

// LoadConfig parses -config from args (the flags of command name: -config
// alone) and loads the file; every problem is a usage error.
func (e Env) LoadConfig(name string, args []string) (*config.Config, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.Stderr)
	path := fs.String("config", DefaultConfigPath, "path of the YAML config file")
	if err := fs.Parse(args); err != nil {
		return nil, UsageError{Err: err}
	}
	if fs.NArg() > 0 {
		return nil, Usagef("unexpected arguments: %v", fs.Args())
	}
	cfg, err := e.Load(*path)
	if err != nil {
		return nil, UsageError{Err: err}
	}
	return cfg, nil
}

// UsageError marks a command's errors that exit with 2: flags,
// arguments, the config.
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// Usagef is a UsageError made with fmt.Errorf.
func Usagef(format string, args ...any) error { return UsageError{fmt.Errorf(format, args...)} }

// IsUsage reports whether err's chain holds a UsageError.
func IsUsage(err error) bool {
	var ue UsageError
	return errors.As(err, &ue)
}
