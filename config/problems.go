package config

import (
	"fmt"
	"sort"
	"strings"

	"github.com/agentbridge/agentbridge/config/decode"
)

// ValidationError is returned by Load and Parse when the config is
// invalid. It holds every problem found, ordered by line.
type ValidationError struct {
	File     string // the name given to Parse, or the path given to Load
	Problems []decode.Problem
}

// Error prints one line per problem, like
//
//	bridge.yaml:12: bots[0].agent: agent "nope" is not defined
func (e *ValidationError) Error() string {
	var b strings.Builder
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.File)
		if p.Line > 0 {
			fmt.Fprintf(&b, ":%d", p.Line)
		}
		b.WriteString(": ")
		if p.Path != "" {
			b.WriteString(p.Path)
			b.WriteString(": ")
		}
		b.WriteString(p.Msg)
	}
	return b.String()
}

// sortProblems orders problems by line, then path, keeping discovery
// order otherwise, so that the output is deterministic.
func sortProblems(ps []decode.Problem) {
	sort.SliceStable(ps, func(i, j int) bool {
		if ps[i].Line != ps[j].Line {
			return ps[i].Line < ps[j].Line
		}
		return ps[i].Path < ps[j].Path
	})
}
