package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/store"
)

// This file holds what happens when the agent asks for a schedule with its
// schedule tool. A schedule is a lasting capability (a prompt that comes
// back on its own), so under agents.*.agent_schedules:
//   - ask (the default): the tool checks the request, posts a card showing
//     the cron expression, the prompt and where it runs, and returns at
//     once. Nothing is stored: the schedule exists only once a person who
//     may decide the card (the current turn's requesters, approvers,
//     admins — see requesters) approves it, and that person becomes its
//     creator. The card is audited like a permission card. It outlives the
//     turn, but not approval_timeout, the agent process (its exit, !new,
//     eviction close it) or the bridge (a restart closes it as expired):
//     a closed card can never be approved into existence.
//   - allow: the schedule is created at once and announced.
//   - off: the tool refuses.

// maxScheduleCards bounds the agent's schedule requests waiting for a
// decision in one conversation: a prompt-injected agent must not be able
// to bury a thread in cards.
const maxScheduleCards = 3

// errNoWorker: the conversation has no running worker to ask.
var errNoWorker = errors.New("the conversation is not running")

// scheduleAsk is the tool's answer when a card was posted.
const scheduleAsk = "Asked the people in this conversation to approve the schedule: a card shows it to them. " +
	"It does not exist until a person approves it, and nothing runs if nobody does. " +
	"Do not ask again; list_schedules shows it once it is approved."

// agentSchedulePolicy is the profile's agent_schedules; empty (a config
// built without validation) is ask.
func agentSchedulePolicy(p *config.Agent) string {
	switch p.AgentSchedules {
	case config.AgentSchedulesAllow, config.AgentSchedulesOff:
		return p.AgentSchedules
	}
	return config.AgentSchedulesAsk
}

// askSchedule checks r and, if it could be added, has the conversation's
// worker post an approval card for it. It returns when the card is posted
// (or could not be); it does not wait for the decision.
func (t *toolConv) askSchedule(ctx context.Context, r scheduleRequest) error {
	if _, err := t.core.checkSchedule(ctx, r); err != nil {
		return err
	}
	done := make(chan error, 1)
	err := t.core.onLiveWorker(ctx, t.key, func(ctx context.Context, cv *conversation) {
		done <- cv.openScheduleCard(ctx, r)
	})
	if err != nil {
		return fmt.Errorf("ask for approval of a schedule: %w", err)
	}
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("ask for approval of a schedule: %w", ctx.Err())
	}
}

// onLiveWorker runs f on the running worker of key (the agent's tools run
// only while their conversation's worker does), waiting for room in its
// queue until ctx ends.
func (c *Core) onLiveWorker(ctx context.Context, key bridges.ConversationKey, f func(context.Context, *conversation)) error {
	c.mu.Lock()
	cv := c.convs[key]
	c.mu.Unlock()
	if cv == nil {
		return errNoWorker
	}
	return cv.q.PushWait(ctx, inCall{f})
}

// openScheduleCard posts the approval card of the agent's schedule
// request r.
func (cv *conversation) openScheduleCard(ctx context.Context, r scheduleRequest) error {
	waiting := 0
	for _, cd := range cv.cards {
		if cd.kind == cardSchedule {
			waiting++
		}
	}
	if waiting >= maxScheduleCards {
		return fmt.Errorf("%w: %d schedule requests already wait for a person's decision here; wait for them", ErrToolRefused, waiting)
	}
	id := "schedule-" + uuid.NewString()
	input, err := json.Marshal(map[string]string{"cron": r.cron, "tz": r.tz, "prompt": r.prompt, "name": r.name,
		"channel": r.key.Channel, "thread": r.key.Thread})
	if err != nil {
		return fmt.Errorf("encode schedule request: %w", err)
	}
	cv.openCard(ctx, &card{
		id:       id,
		kind:     cardSchedule,
		req:      streamjson.PermissionRequest{RequestID: id, ToolName: qualifiedTool(ToolSchedule), Input: input},
		body:     cv.scheduleCardBody(r),
		schedule: &r,
	})
	if cv.cards[id] == nil {
		return fmt.Errorf("%w: the approval card could not be shown (chat error); try again later", ErrToolRefused)
	}
	cv.log.Info("agent schedule awaits approval", "card", id, "cron", r.cron, "tz", r.tz)
	return nil
}

// scheduleCardBody shows what approving the agent's request creates: when,
// where and what it runs.
func (cv *conversation) scheduleCardBody(r scheduleRequest) string {
	var b strings.Builder
	b.WriteString("🗓 **The agent asks for a schedule.** It does not exist unless you create it.\n")
	when := codeSpan(r.cron) + " " + orDefault(r.tz, "local time")
	if cr, err := config.ParseCron(r.cron, r.tz); err == nil {
		if next := cr.Next(cv.core.clock.Now()); !next.IsZero() {
			when += " · next " + next.Format("Mon 2 Jan 15:04 MST")
		}
	}
	b.WriteString("• when: " + when + "\n")
	where := "this conversation (channel " + codeSpan(r.key.Channel)
	if r.key.Thread != "" {
		where += ", thread " + codeSpan(r.key.Thread)
	}
	b.WriteString("• where: " + where + ")\n")
	if n := strings.TrimSpace(r.name); n != "" {
		b.WriteString("• name: " + oneLine(n, maxScheduleNameRunes) + "\n")
	}
	b.WriteString("• prompt, sent to the agent at every run:\n")
	b.WriteString(codeBlock("", clip(r.prompt, previewLines, previewRunes)) + "\n")
	b.WriteString("_Each run is a prompt for the agent, never a command, and carries nobody's rights. Whoever creates it becomes its creator._")
	return b.String()
}

// decideSchedule applies a choice to the card of an agent's schedule
// request: create it (as the clicker, checked again now) or refuse it. It
// returns a problem to tell the clicker, or "".
func (cv *conversation) decideSchedule(ctx context.Context, cd *card, choice string, who author) string {
	by := mention(who)
	switch choice {
	case bridges.ChoiceAllow:
		r := *cd.schedule
		r.createdBy = who.id
		sc, err := cv.core.addSchedule(ctx, r)
		if err != nil {
			why := "database error"
			if errors.Is(err, errScheduleRefused) {
				why = ToolErrorText(err)
			} else {
				cv.log.Error("add approved agent schedule", "card", cd.id, "err", err)
			}
			msg := "Approved by " + by + " but not created: " + why
			cv.audit(ctx, cd.id, store.DecisionDeny, who.id, msg)
			cv.retireCard(ctx, cd, "⚠️ "+msg)
			return ""
		}
		cv.audit(ctx, cd.id, store.DecisionAllow, who.id, fmt.Sprintf("schedule #%d created", sc.ID))
		cv.log.Info("agent schedule approved", "card", cd.id, "schedule", sc.ID, "by", who.id)
		cv.retireCard(ctx, cd, "✅ Created by "+by+" as "+scheduleLine(sc, cv.core.clock.Now(), cv.key)+
			". Remove it with `"+bridges.CommandPrefix+"schedule rm "+fmt.Sprint(sc.ID)+"`.")
	case bridges.ChoiceDeny:
		msg := "Refused by " + by + ": no schedule was created."
		cv.audit(ctx, cd.id, store.DecisionDeny, who.id, msg)
		cv.log.Info("agent schedule refused", "card", cd.id, "by", who.id)
		cv.retireCard(ctx, cd, "❌ "+msg)
	default:
		return "That choice is not available on this request."
	}
	return ""
}
