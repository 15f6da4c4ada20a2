// Package cut shortens text for the console's pages: to one line, or to a
// number of runes.
package cut

import "strings"

// OneLine collapses whitespace and cuts s to n runes.
func OneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// Truncate cuts s to n runes, marking the cut with "…".
func Truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
