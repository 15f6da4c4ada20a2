// Package schedreq holds the schedules people ask for in chat (!schedule
// add) and agents ask for with their schedule tool: reading the request,
// the checks that bound it, the stored row it makes and the texts that
// show schedules. It needs nothing of the core: bridges/features/schedule (the
// scheduling feature: the scheduler, the !schedule command, the agent's
// schedule tools and their approval card) uses it.
package schedreq

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/toolconv"
	"github.com/agentbridge/agentbridge/config/schedules"
	"github.com/agentbridge/agentbridge/internal/textcut"
	"github.com/agentbridge/agentbridge/store"
)

// Limits on the schedules people make in chat and agents make with their
// tool (config schedules are the admins' and are not limited): a prompt
// injected into an agent must not be able to fill a channel or a bill.
const (
	MaxPerConversation = 10
	MinGap             = 5 * time.Minute
	MaxNameRunes       = 60
)

// Header starts the message that announces a scheduled run.
const Header = "⏰ scheduled: "

// ErrRefused wraps the reasons a schedule is not accepted; its message is
// meant for the person or agent who asked. It is a refusal of the agent's
// tools (toolconv.IsRefusal).
var ErrRefused = toolconv.NewRefusal("schedule refused")

// Request is a chat or agent schedule to add.
type Request struct {
	Source    store.ScheduleSource
	Name      string // "" = from the prompt
	Cron, TZ  string
	Prompt    string
	Key       bridges.ConversationKey // where the runs go: the conversation it was made in
	ConvID    string
	CreatedBy string
	Agent     string // the conversation's agent profile
}

// Store is what Check reads.
type Store interface {
	SchedulesOfConversation(ctx context.Context, convID string) ([]store.Schedule, error)
}

// Check reports why r cannot be added at now (wrapping ErrRefused), or
// returns its parsed cron: a valid cron and zone, at most one run per
// MinGap, a prompt, at most MaxPerConversation active in the
// conversation. Any other error is the store's.
func Check(ctx context.Context, st Store, now time.Time, r Request) (schedules.Cron, error) {
	cr, err := schedules.ParseCron(r.Cron, r.TZ)
	if err != nil {
		return cr, fmt.Errorf("%w: %w", ErrRefused, err)
	}
	if gap := cr.MinGap(now, 50); gap == 0 {
		return cr, fmt.Errorf("%w: %s never fires", ErrRefused, cr.Expr)
	} else if gap < MinGap {
		return cr, fmt.Errorf("%w: %s fires every %s; schedules made in chat or by the agent may run at most every %s",
			ErrRefused, cr.Expr, GapText(gap), GapText(MinGap))
	}
	if strings.TrimSpace(r.Prompt) == "" {
		return cr, fmt.Errorf("%w: the prompt is empty", ErrRefused)
	}
	existing, err := st.SchedulesOfConversation(ctx, r.ConvID)
	if err != nil {
		return cr, fmt.Errorf("check schedule: %w", err)
	}
	if len(existing) >= MaxPerConversation {
		return cr, fmt.Errorf("%w: this conversation already has %d schedules (the most allowed); remove one first",
			ErrRefused, len(existing))
	}
	return cr, nil
}

// Row is the schedule r makes, with its cron cr as Check parsed it, added
// at now: its name is r's (or the prompt's start) on one line, and its
// runs start after now.
func Row(r Request, cr schedules.Cron, now time.Time) store.Schedule {
	prompt := strings.TrimSpace(r.Prompt)
	name := textcut.OneLine(r.Name, MaxNameRunes)
	if name == "" {
		name = textcut.OneLine(prompt, 40)
	}
	return store.Schedule{
		Source: r.Source, Name: name, Key: store.ConversationKey(r.Key), Cron: cr.Expr, TZ: cr.Zone, Prompt: prompt,
		Agent: r.Agent, CatchUp: true, CreatedBy: r.CreatedBy, ConversationID: r.ConvID,
		LastFireAt: now,
	}
}

// ParseAdd reads the arguments of "!schedule add": `"CRON" [tz=ZONE]
// PROMPT` (the cron expression in double quotes, or a single @descriptor
// word).
func ParseAdd(s string) (cron, tz, prompt string, ok bool) {
	s = strings.TrimSpace(s)
	switch {
	case strings.HasPrefix(s, `"`) || strings.HasPrefix(s, "“"):
		s = strings.TrimPrefix(strings.TrimPrefix(s, `"`), "“")
		end := strings.IndexAny(s, `"”`)
		if end < 0 {
			return "", "", "", false
		}
		cron = s[:end]
		s = s[end:]
		s = strings.TrimPrefix(strings.TrimPrefix(s, `"`), "”")
	case strings.HasPrefix(s, "@"):
		cron, s = cutWord(s)
	default:
		return "", "", "", false
	}
	s = strings.TrimSpace(s)
	if w, after := cutWord(s); strings.HasPrefix(strings.ToLower(w), "tz=") {
		tz, s = w[len("tz="):], after
	}
	prompt = strings.TrimSpace(s)
	return strings.TrimSpace(cron), tz, prompt, cron != "" && prompt != ""
}

// cutWord splits s at its first command space (a space or newline).
func cutWord(s string) (word, rest string) {
	if i := strings.IndexAny(s, " \n"); i >= 0 {
		return s[:i], s[i+1:]
	}
	return s, ""
}
