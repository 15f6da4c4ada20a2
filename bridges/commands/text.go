package commands

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentbridge/agentbridge/config"
)

// The helpers below are the core's (bridges/core: access.go, render.go),
// copied because this package may not import the core.

// isAdmin reports whether user is one of the bot's admins.
func isAdmin(b *config.Bot, user string) bool { return slices.Contains(b.Access.Admins, user) }

// adminsConfigured reports whether the bot has admins. Without them the
// admin-only commands are disabled.
func adminsConfigured(b *config.Bot) bool { return len(b.Access.Admins) > 0 }

// codeSpan renders s as an inline code span, safe for any backticks in s.
func codeSpan(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	longest, run := 0, 0
	for _, c := range s {
		if c == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}

// mention names a user in a message.
func mention(a Author) string {
	switch {
	case a.Name != "":
		return "@" + a.Name
	case a.ID != "":
		return "@" + a.ID
	default:
		return "someone"
	}
}

// oneLine collapses whitespace runs and truncates to n runes with "…".
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:max(0, n-1)]) + "…"
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func formatDuration(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	d = d.Round(time.Second)
	return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
}

// usd formats dollars: cents from $1 up ("$20.00"), else up to four
// decimals ("$0.0025", "$0.50"; six below a cent, "$0.000012") without
// trailing zeros, "$0" for nothing.
func usd(x float64) string {
	switch {
	case x < 1e-9: // float rounding of sums of costs
		return "$0"
	case x >= 1:
		return fmt.Sprintf("$%.2f", x)
	}
	format := "%.4f"
	if x < 0.01 {
		format = "%.6f"
	}
	s := strings.TrimRight(fmt.Sprintf(format, x), "0")
	if len(s) < len("0.00") {
		s += strings.Repeat("0", len("0.00")-len(s))
	}
	return "$" + s
}
