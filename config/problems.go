package config

import (
	"fmt"
	"sort"
	"strings"
)

// Problem is one thing wrong with a config file.
type Problem struct {
	Line int    // 1-based line in the file; 0 if unknown
	Path string // where in the config, e.g. "bots[0].agent" or "agents.coder.idle_timeout"; "" for the document
	Msg  string // what is wrong; never contains a secret or an expanded ${VAR} value
}

// String formats the problem without the file name: "12: bots[0].agent: msg".
func (p Problem) String() string {
	var b strings.Builder
	if p.Line > 0 {
		fmt.Fprintf(&b, "%d: ", p.Line)
	}
	if p.Path != "" {
		b.WriteString(p.Path)
		b.WriteString(": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// ValidationError is returned by Load and Parse when the config is
// invalid. It holds every problem found, ordered by line.
type ValidationError struct {
	File     string // the name given to Parse, or the path given to Load
	Problems []Problem
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
func sortProblems(ps []Problem) {
	sort.SliceStable(ps, func(i, j int) bool {
		if ps[i].Line != ps[j].Line {
			return ps[i].Line < ps[j].Line
		}
		return ps[i].Path < ps[j].Path
	})
}
