package core

import (
	"fmt"
	"strings"

	"github.com/agentbridge/agentbridge/bridges/core/render"
	"github.com/agentbridge/agentbridge/internal/textcut"
)

// This file holds the optional abilities of an agent session the core
// uses beyond permission requests: answering MCP elicitations (their cards
// are in bridges/features/cards) and listing the background tasks !status shows.

// backgroundStatusLine is !status's line about the agent's running
// background tasks ("" when there are none or no agent is live).
func (cv *conversation) backgroundStatusLine() string {
	bl, ok := cv.sess.(backgroundLister)
	if !ok {
		return ""
	}
	tasks := bl.BackgroundTasks()
	if len(tasks) == 0 {
		return ""
	}
	names := make([]string, 0, len(tasks))
	for _, t := range tasks {
		names = append(names, render.CodeSpan(textcut.OneLine(textcut.OrBlank(t.Description, strings.TrimSpace(t.TaskType+" "+t.TaskID)), 80)))
	}
	return fmt.Sprintf("\n• background tasks: %d — %s", len(tasks), strings.Join(names, ", "))
}
