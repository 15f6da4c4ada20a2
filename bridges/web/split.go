package web

import "github.com/agentbridge/agentbridge/bridges/web/internal/cut"

// Messages are not split: the core splits them to Limits.MaxMessageRunes.
// The pages cut text to one line or a length (package cut, shared with the
// operator pages).

// oneLine collapses whitespace and cuts s to n runes.
func oneLine(s string, n int) string { return cut.OneLine(s, n) }

// truncate cuts s to n runes, marking the cut with "…".
func truncate(s string, n int) string { return cut.Truncate(s, n) }
