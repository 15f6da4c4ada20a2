// Command clicheck captures the stream-json wire of a Claude Code CLI and
// compares it with another capture, so adopting a new CLI version is one
// command and one reading (`make cli-check VERSION=x.y.z`).
//
//	clicheck capture -claude PATH -out DIR [-only a,b]
//	    runs the scripted scenarios (scenarios in capture.go) with the CLI
//	    at PATH against the in-repo fake model (agent/fakemodel), writing
//	    DIR/transcript-<scenario>.jsonl in the stored captures' format
//	    ({"t","dir","msg"}, paths rewritten).
//	clicheck diff A B
//	    prints the frame kinds (type/subtype) and field paths of the
//	    CLI→host frames seen only in A, and only in B (A, B: a capture
//	    directory or one transcript file). Exit status 0 either way.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/agentbridge/agentbridge/agent/fakemodel"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "clicheck:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: clicheck capture -claude PATH -out DIR | clicheck diff A B")
	}
	switch args[0] {
	case "capture":
		fs := flag.NewFlagSet("capture", flag.ContinueOnError)
		bin := fs.String("claude", "claude", "the CLI to run")
		out := fs.String("out", "", "directory for the transcripts")
		only := fs.String("only", "", "comma-separated scenarios (default: all)")
		verbose := fs.Bool("v", false, "log the fake model's requests")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if *out == "" {
			return fmt.Errorf("capture: -out is required")
		}
		abs, err := filepath.Abs(*bin)
		if strings.Contains(*bin, "/") && err == nil {
			*bin = abs
		}
		level := slog.LevelWarn
		if *verbose {
			level = slog.LevelDebug
		}
		logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
		srv, err := fakemodel.Start(logger)
		if err != nil {
			return fmt.Errorf("capture: %w", err)
		}
		defer srv.Close()
		sel := map[string]bool{}
		for _, n := range strings.Split(*only, ",") {
			if n != "" {
				sel[n] = true
			}
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
		defer stop()
		return Capture(ctx, *bin, srv.Env(), srv.URL(), *out, sel)
	case "diff":
		if len(args) != 3 {
			return fmt.Errorf("usage: clicheck diff A B")
		}
		a, err := ReadShape(args[1])
		if err != nil {
			return err
		}
		b, err := ReadShape(args[2])
		if err != nil {
			return err
		}
		if !Diff(os.Stdout, args[1], a, args[2], b) {
			fmt.Println("no differences in frame kinds or field paths")
		}
		return nil
	default:
		return fmt.Errorf("unknown command %q (capture, diff)", args[0])
	}
}
