package commands

import (
	"time"

	"github.com/agentbridge/agentbridge/bridges/render"
)

// Access helpers as the core has them (bridges/core submit.go); this
// package may not import the core.

func mention(a Author) string               { return render.Mention(a.Name, a.ID) }
func formatDuration(d time.Duration) string { return render.FormatDuration(d) }
