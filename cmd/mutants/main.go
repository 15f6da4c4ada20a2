// Command mutants checks that the tests hold: it applies each single-point break listed in the
// repository's mutants.txt files (see parse.go for the format) to a temporary copy of the checkout, runs
// the package tests named by the break, and prints KILLED (a test failed) or SURVIVED per break, then a
// summary. Run it from anywhere inside the checkout (`make mutants`).
//
// Exit codes: 0 every break killed, 1 a break survived, did not build, or its original text does not
// occur exactly once, 2 usage or setup error.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"strings"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mutants", flag.ContinueOnError)
	fs.SetOutput(stderr)
	only := fs.String("only", "", "run only the breaks whose package directory or title matches this regexp")
	verbose := fs.Bool("v", false, "print the go test output of every break, not only of surviving and broken ones")
	timeout := fs.Duration("timeout", 10*time.Minute, "go test -timeout for each break")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	filter, err := regexp.Compile(*only)
	if err != nil {
		fmt.Fprintf(stderr, "mutants: -only: %v\n", err)
		return 2
	}
	top, err := exec.CommandContext(ctx, "git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		fmt.Fprintf(stderr, "mutants: not in a git checkout: %v\n", err)
		return 2
	}
	root := strings.TrimSpace(string(top))
	all, err := findBreaks(root)
	if err != nil {
		fmt.Fprintf(stderr, "mutants: %v\n", err)
		return 2
	}
	var breaks []pkgBreak
	for _, b := range all {
		if filter.MatchString(b.Dir) || filter.MatchString(b.Title) {
			breaks = append(breaks, b)
		}
	}
	if len(breaks) == 0 {
		fmt.Fprintln(stderr, "mutants: no breaks found")
		return 2
	}
	tmp, err := os.MkdirTemp("", "mutants-")
	if err != nil {
		fmt.Fprintf(stderr, "mutants: %v\n", err)
		return 2
	}
	defer os.RemoveAll(tmp)
	if err := copyCheckout(ctx, root, tmp); err != nil {
		fmt.Fprintf(stderr, "mutants: %v\n", err)
		return 2
	}
	fmt.Fprintf(stdout, "%d breaks in a copy of %s\n", len(breaks), root)
	counts := map[Outcome]int{}
	for _, b := range breaks {
		if ctx.Err() != nil {
			fmt.Fprintln(stderr, "mutants: interrupted")
			return 2
		}
		start := time.Now()
		outcome, detail := runBreak(ctx, tmp, b, *timeout)
		counts[outcome]++
		fmt.Fprintf(stdout, "%-8s %s/mutants.txt:%d %s (%s)\n", outcome, b.Dir, b.Line, b.Title,
			time.Since(start).Round(100*time.Millisecond))
		if outcome != Killed || *verbose {
			fmt.Fprintln(stdout, indent(detail))
		}
	}
	fmt.Fprintf(stdout, "%d breaks: %d killed, %d survived, %d not found, %d broken\n",
		len(breaks), counts[Killed], counts[Survived], counts[NotFound], counts[Broken])
	if counts[Killed] != len(breaks) {
		return 1
	}
	return 0
}

// indent prefixes each line of s with four spaces, so test output stands apart from the result lines.
func indent(s string) string {
	s = strings.TrimRight(s, "\n")
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}
