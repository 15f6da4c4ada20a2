package commands

import (
	"time"

	"github.com/agentbridge/agentbridge/bridges/core/render"
	"github.com/agentbridge/agentbridge/bridges/core/worker"
)

// Text helpers as the core has them (bridges/core).

func mention(a worker.Person) string        { return render.Mention(a.Name, a.ID) }
func formatDuration(d time.Duration) string { return render.FormatDuration(d) }
