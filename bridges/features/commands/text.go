package commands

import (
	"time"

	"github.com/agentbridge/agentbridge/bridges/core"
	"github.com/agentbridge/agentbridge/bridges/core/render"
)

// Text helpers as the core has them (bridges/core).

func mention(a core.Person) string          { return render.Mention(a.Name, a.ID) }
func formatDuration(d time.Duration) string { return render.FormatDuration(d) }
