// Package textcut holds the small text helpers every layer uses to keep
// a value short and present in a message or a log line: collapse to one
// line, cut to a number of runes, fall back to a default when blank (for
// an empty string alone, use cmp.Or). Pure functions of strings; it
// imports no project package.
package textcut

import (
	"strings"
	"unicode/utf8"
)

// OneLine collapses every run of whitespace (newlines included) to one
// space, trims the ends, and cuts the result to n runes (Truncate).
func OneLine(s string, n int) string {
	return Truncate(strings.Join(strings.Fields(s), " "), n)
}

// Truncate returns s when it has at most n runes; otherwise its first
// n-1 runes and "…", n runes in all. It never splits a rune.
func Truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:max(0, n-1)]) + "…"
}

// OrBlank returns s, or def when s is empty or only whitespace.
func OrBlank(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}
