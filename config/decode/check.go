package decode

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// This file holds the checks after decoding and the formatting shared by
// messages and check-config's summary.

// Required reports a missing value at path unless a problem is already
// recorded there (e.g. an unset ${VAR}).
func (d *Decoder) Required(path, msg string) {
	if !d.bad[path] {
		d.Addf(d.LineOf(path), path, "%s", msg)
	}
}

// OneOf reports value at path unless it is one of allowed: unknown <what>
// "x" (want a or b).
func (d *Decoder) OneOf(path, value, what string, allowed ...string) bool {
	if slices.Contains(allowed, value) {
		return true
	}
	if !d.bad[path] {
		d.Addf(d.LineOf(path), path, "unknown %s %s (want %s)", what, d.Show(path, value), OrList(allowed))
	}
	return false
}

// OrList formats "a, b or c".
func OrList(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// ResolvePath makes p absolute relative to base (itself absolute).
func ResolvePath(base, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(base, p)
}

// ListOr joins s with commas, or returns empty for an empty list.
func ListOr(s []string, empty string) string {
	if len(s) == 0 {
		return empty
	}
	return strings.Join(s, ",")
}

// IntOr formats n, or zero for 0.
func IntOr(n int, zero string) string {
	if n == 0 {
		return zero
	}
	return fmt.Sprint(n)
}

// DurOr formats d compactly ("30m", "1h30m", "45s"), or zero for 0.
func DurOr(d time.Duration, zero string) string {
	if d == 0 {
		return zero
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
