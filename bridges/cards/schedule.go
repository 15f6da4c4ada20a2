package cards

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/agenttools/toolconv"
	"github.com/agentbridge/agentbridge/bridges/render"
	"github.com/agentbridge/agentbridge/bridges/schedule/schedreq"
	"github.com/agentbridge/agentbridge/store"
)

// OpenSchedule posts the approval card of the agent's schedule
// request r.
func (s *Set) OpenSchedule(ctx context.Context, r schedreq.Request) error {
	waiting := 0
	for _, cd := range s.open {
		if cd.kind == cardSchedule {
			waiting++
		}
	}
	if waiting >= schedreq.MaxCards {
		return fmt.Errorf("%w: %d schedule requests already wait for a person's decision here; wait for them", toolconv.ErrRefused, waiting)
	}
	id := "schedule-" + uuid.NewString()
	input, err := json.Marshal(map[string]string{"cron": r.Cron, "tz": r.TZ, "prompt": r.Prompt, "name": r.Name,
		"channel": r.Key.Channel, "thread": r.Key.Thread})
	if err != nil {
		return fmt.Errorf("encode schedule request: %w", err)
	}
	s.openCard(ctx, &card{
		id:       id,
		kind:     cardSchedule,
		req:      streamjson.PermissionRequest{RequestID: id, ToolName: toolconv.Qualified(toolconv.ToolSchedule), Input: input},
		body:     schedreq.CardBody(r, s.h.Now(), render.CodeBlock("", render.Clip(r.Prompt, render.PreviewLines, render.PreviewRunes))),
		schedule: &r,
	})
	if s.open[id] == nil {
		return fmt.Errorf("%w: the approval card could not be shown (chat error); try again later", toolconv.ErrRefused)
	}
	s.h.Log().Info("agent schedule awaits approval", "card", id, "cron", r.Cron, "tz", r.TZ)
	return nil
}

// decideSchedule applies a choice to the card of an agent's schedule
// request: create it (as the clicker, checked again now) or refuse it. It
// returns a problem to tell the clicker, or "".
func (s *Set) decideSchedule(ctx context.Context, cd *card, choice string, who Person) string {
	by := mention(who)
	switch choice {
	case bridges.ChoiceAllow:
		r := *cd.schedule
		r.CreatedBy = who.ID
		sc, err := s.h.AddSchedule(ctx, r)
		if err != nil {
			why := "database error"
			if errors.Is(err, schedreq.ErrRefused) {
				why = toolconv.ErrorText(err)
			} else {
				s.h.Log().Error("add approved agent schedule", "card", cd.id, "err", err)
			}
			msg := "Approved by " + by + " but not created: " + why
			s.audit(ctx, cd.id, store.DecisionDeny, who.ID, msg)
			s.retireCard(ctx, cd, "⚠️ "+msg)
			return ""
		}
		s.audit(ctx, cd.id, store.DecisionAllow, who.ID, fmt.Sprintf("schedule #%d created", sc.ID))
		s.h.Log().Info("agent schedule approved", "card", cd.id, "schedule", sc.ID, "by", who.ID)
		s.retireCard(ctx, cd, "✅ Created by "+by+" as "+schedreq.Line(sc, s.h.Now(), s.h.Key())+
			". Remove it with `"+bridges.CommandPrefix+"schedule rm "+fmt.Sprint(sc.ID)+"`.")
	case bridges.ChoiceDeny:
		msg := "Refused by " + by + ": no schedule was created."
		s.audit(ctx, cd.id, store.DecisionDeny, who.ID, msg)
		s.h.Log().Info("agent schedule refused", "card", cd.id, "by", who.ID)
		s.retireCard(ctx, cd, "❌ "+msg)
	default:
		return "That choice is not available on this request."
	}
	return ""
}
