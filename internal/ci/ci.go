// Package ci tells tests whether they run in continuous integration, where a missing tool (the Claude
// Code CLI, bwrap, git, Chromium, tzdata, a usable cgroup) is a failure rather than a reason to skip.
package ci

import (
	"os"
	"strings"
)

// Strict reports whether the environment variable CI is truthy: "1", "true" or "yes", in any case
// (CI systems set CI=true, CI=1 or CI=yes).
func Strict() bool { return truthy(os.Getenv("CI")) }

// truthy reports whether v is "1", "true" or "yes", ignoring case and surrounding spaces.
func truthy(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes":
		return true
	}
	return false
}
