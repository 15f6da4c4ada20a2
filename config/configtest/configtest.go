// Package configtest is the adapters' config-test harness: it parses a
// bridge.yaml made of a few lines with one platform's keys, the way each
// adapter's config tests check their `bots[].<platform>` settings, and
// compares the problems found with the lines wanted.
package configtest

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/decode"
)

// Parse parses lines (joined with newlines) after a minimal agents
// section ("coder"), with env as the environment for ${VAR} expansion
// (nil: empty) and p as the one platform. It returns the config, or the
// problems when validation fails (the config is nil on any other error).
func Parse(env map[string]string, p config.Platform, lines ...string) (*config.Config, []decode.Problem) {
	return ParseDoc(env, p, "agents:\n  coder: {}\n"+strings.Join(lines, "\n")+"\n")
}

// ParseDoc is Parse of a whole document (for tests whose expected
// problems name the lines of their own layout).
func ParseDoc(env map[string]string, p config.Platform, doc string) (*config.Config, []decode.Problem) {
	c, err := config.Parse([]byte(doc), "bridge.yaml", func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		[]config.Platform{p})
	var ve *config.ValidationError
	if errors.As(err, &ve) {
		return nil, ve.Problems
	}
	return c, nil
}

// WantProblems fails tb unless ps are exactly want, in order, each
// written "line path: message" (as check-config prints them).
func WantProblems(tb testing.TB, ps []decode.Problem, want []string) {
	tb.Helper()
	got := make([]string, 0, len(ps))
	for _, p := range ps {
		got = append(got, fmt.Sprintf("%d %s: %s", p.Line, p.Path, p.Msg))
	}
	if g, w := strings.Join(got, "\n"), strings.Join(want, "\n"); g != w {
		tb.Errorf("problems:\n%s\nwant:\n%s", g, w)
	}
}

// FileSettings stands in for the settings of an adapter that keeps a
// credential in a file (config.SecretFiler), as WhatsApp's device store.
type FileSettings struct{ File string }

// String names the file.
func (s FileSettings) String() string { return "files{" + s.File + "}" }

// Summary is empty.
func (s FileSettings) Summary() string { return "" }

// SecretFiles is the one file.
func (s FileSettings) SecretFiles() []string { return []string{s.File} }
