package commands

import (
	"slices"
	"time"

	"github.com/agentbridge/agentbridge/bridges/render"
	"github.com/agentbridge/agentbridge/config"
)

// Access helpers as the core has them (bridges/core submit.go); this
// package may not import the core.

// isAdmin reports whether user is one of the bot's admins.
func isAdmin(b *config.Bot, user string) bool { return slices.Contains(b.Access.Admins, user) }

// adminsConfigured reports whether the bot has admins. Without them the
// admin-only commands are disabled.
func adminsConfigured(b *config.Bot) bool { return len(b.Access.Admins) > 0 }

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Texts shared with the core's messages (bridges/render).
func codeSpan(s string) string              { return render.CodeSpan(s) }
func mention(a Author) string               { return render.Mention(a.Name, a.ID) }
func oneLine(s string, n int) string        { return render.OneLine(s, n) }
func formatDuration(d time.Duration) string { return render.FormatDuration(d) }
func usd(x float64) string                  { return render.USD(x) }
