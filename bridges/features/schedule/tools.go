package schedule

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/render"
	"github.com/agentbridge/agentbridge/bridges/core/toolconv"
	"github.com/agentbridge/agentbridge/bridges/features/agenttools"
	"github.com/agentbridge/agentbridge/bridges/features/schedule/schedreq"
	"github.com/agentbridge/agentbridge/config/profile"
	"github.com/agentbridge/agentbridge/internal/textcut"
	"github.com/agentbridge/agentbridge/store"
)

// The agent's schedule tools.
const (
	ToolSchedule       = "schedule"
	ToolListSchedules  = "list_schedules"
	ToolCancelSchedule = "cancel_schedule"
)

// tools are the agent's schedule tools (Feature.Tools). A schedule is a
// lasting capability (a prompt that comes back on its own), so under
// agents.*.agent_schedules:
//   - ask (the default): the tool checks the request, has the
//     conversation's worker post a card showing the cron expression, the
//     prompt and where it runs (approvalCard), and returns at once.
//     Nothing is stored: the schedule exists only once a person who may
//     decide the card (the current turn's requesters, approvers, admins)
//     approves it, and that person becomes its creator. The card is
//     audited like a permission card. It outlives the turn, but not
//     approval_timeout, the agent process (its exit, !new, eviction close
//     it) or the bridge (a restart closes it as expired): a closed card
//     can never be approved into existence.
//   - allow: the schedule is created at once and announced.
//   - off: the tool refuses.
func (s *Scheduler) tools() []agenttools.Tool {
	return []agenttools.Tool{
		{Name: ToolSchedule, Define: func(conv toolconv.Conversation) mcp.Tool {
			return mcp.NewTool(ToolSchedule,
				mcp.WithDescription("Schedule a prompt to be sent to you in this conversation on a cron schedule, "+
					"e.g. to check on something every morning. "+schedreq.ToolNote(schedreq.Policy(conv.Profile()))),
				mcp.WithString("cron", mcp.Required(), mcp.Description(`Five-field cron expression: minute hour day-of-month month day-of-week, e.g. "0 9 * * 1-5"; or @daily, @hourly.`)),
				mcp.WithString("prompt", mcp.Required(), mcp.Description("What you will be asked at each run.")),
				mcp.WithString("tz", mcp.Description("IANA time zone of the cron expression, e.g. Europe/Berlin; default the bridge's local time.")),
				mcp.WithString("name", mcp.Description("Short name shown with each run; default the start of the prompt.")),
				mcp.WithOpenWorldHintAnnotation(false),
			)
		}, Handle: s.scheduleTool, Detail: func(in map[string]any, _ string) string {
			return render.Str(in, "cron") + " — " + render.FirstLine(render.Str(in, "prompt"))
		}},
		{Name: ToolListSchedules, Define: func(toolconv.Conversation) mcp.Tool {
			return mcp.NewTool(ToolListSchedules,
				mcp.WithDescription("List the schedules of this conversation (made in the chat or by you) with their ids and next runs."),
				mcp.WithReadOnlyHintAnnotation(true), mcp.WithOpenWorldHintAnnotation(false),
			)
		}, Handle: s.listTool},
		{Name: ToolCancelSchedule, Define: func(toolconv.Conversation) mcp.Tool {
			return mcp.NewTool(ToolCancelSchedule,
				mcp.WithDescription("Cancel a schedule of this conversation by its id (see list_schedules)."),
				mcp.WithNumber("id", mcp.Required(), mcp.Description("The schedule's id.")),
				mcp.WithDestructiveHintAnnotation(true), mcp.WithOpenWorldHintAnnotation(false),
			)
		}, Handle: s.cancelTool, Detail: func(in map[string]any, _ string) string {
			if id, ok := in["id"].(float64); ok {
				return fmt.Sprintf("#%d", int64(id))
			}
			return ""
		}},
	}
}

// scheduleTool creates, asks approval for, or refuses the schedule the
// agent asks for, per the profile's agent_schedules.
func (s *Scheduler) scheduleTool(ctx context.Context, conv toolconv.Conversation, req mcp.CallToolRequest) (string, error) {
	cron, err := req.RequireString("cron")
	if err != nil {
		return "", fmt.Errorf("%w: cron is required", toolconv.ErrRefused)
	}
	prompt, err := req.RequireString("prompt")
	if err != nil {
		return "", fmt.Errorf("%w: prompt is required", toolconv.ErrRefused)
	}
	key := conv.Key()
	r := schedreq.Request{
		Source: store.ScheduleFromAgent, Name: req.GetString("name", ""), Cron: cron, TZ: req.GetString("tz", ""),
		Prompt: prompt, Key: key, ConvID: conv.ConvID(), Agent: conv.Profile().Name,
	}
	switch schedreq.Policy(conv.Profile()) {
	case profile.AgentSchedulesOff:
		return "", fmt.Errorf("%w: schedules made by the agent are turned off for this agent (agent_schedules: off); "+
			"a person can add one with %sschedule add", toolconv.ErrRefused, bridges.CommandPrefix)
	case profile.AgentSchedulesAsk:
		if err := s.askApproval(ctx, conv, r); err != nil {
			return "", err
		}
		return schedreq.AskAnswer, nil
	}
	r.CreatedBy = conv.Owner() // agent_schedules: allow
	sc, err := s.add(ctx, r)
	if err != nil {
		return "", err
	}
	notice(ctx, conv, "🗓 The agent scheduled "+schedreq.Line(sc, s.clock.Now(), key))
	return fmt.Sprintf("Scheduled as #%d: %s", sc.ID, schedreq.Line(sc, s.clock.Now(), key)), nil
}

// notice tells the conversation what the agent did to its schedules:
// people must see what will run in their name.
func notice(ctx context.Context, conv toolconv.Conversation, text string) {
	if _, err := conv.PostText(ctx, text); err != nil {
		conv.Log().Warn("post schedule notice", "err", err)
	}
}

func (s *Scheduler) listTool(ctx context.Context, conv toolconv.Conversation, _ mcp.CallToolRequest) (string, error) {
	all, err := s.st.SchedulesOfConversation(ctx, conv.ConvID())
	if err != nil {
		return "", fmt.Errorf("list schedules: %w", err)
	}
	if len(all) == 0 {
		return "This conversation has no schedules.", nil
	}
	lines := make([]string, 0, len(all))
	for _, sc := range all {
		lines = append(lines, schedreq.Line(sc, s.clock.Now(), conv.Key())+"\n  prompt: "+textcut.OneLine(sc.Prompt, 300))
	}
	return strings.Join(lines, "\n"), nil
}

func (s *Scheduler) cancelTool(ctx context.Context, conv toolconv.Conversation, req mcp.CallToolRequest) (string, error) {
	n, err := req.RequireFloat("id")
	if err != nil || n != float64(int64(n)) {
		return "", fmt.Errorf("%w: id must be a schedule's number", toolconv.ErrRefused)
	}
	id := int64(n)
	sc, err := s.st.ScheduleByID(ctx, id)
	if errors.Is(err, store.ErrNotFound) || err == nil && (!sc.Active() || sc.ConversationID != conv.ConvID()) {
		return "", fmt.Errorf("%w: this conversation has no schedule #%d (see list_schedules)", toolconv.ErrRefused, id)
	}
	if err != nil {
		return "", fmt.Errorf("cancel schedule: %w", err)
	}
	if err := s.remove(ctx, sc, "agent:"+conv.ConvID()); err != nil {
		return "", err
	}
	notice(ctx, conv, fmt.Sprintf("🗓 The agent cancelled schedule #%d (%s).", sc.ID, schedreq.Name(sc.Name)))
	return fmt.Sprintf("Schedule #%d cancelled.", sc.ID), nil
}

// askApproval checks r and, if it could be added, has the conversation's
// worker post an approval card for it. It returns when the card is posted
// (or could not be); it does not wait for the decision.
func (s *Scheduler) askApproval(ctx context.Context, conv toolconv.Conversation, r schedreq.Request) error {
	if _, err := schedreq.Check(ctx, s.st, s.clock.Now(), r); err != nil {
		return err
	}
	a, err := s.approvalCard(r)
	if err != nil {
		return err
	}
	if err := conv.AskApproval(ctx, a); err != nil {
		if toolconv.IsRefusal(err) { // the card's own refusals (too many wait, not shown)
			return err
		}
		return fmt.Errorf("ask for approval of a schedule: %w", err)
	}
	return nil
}

// approvalCard is the card of the agent's schedule request r: approving
// it creates the schedule as the approver, checked again then.
func (s *Scheduler) approvalCard(r schedreq.Request) (toolconv.Approval, error) {
	id := "schedule-" + uuid.NewString()
	input, err := json.Marshal(map[string]string{"cron": r.Cron, "tz": r.TZ, "prompt": r.Prompt, "name": r.Name,
		"channel": r.Key.Channel, "thread": r.Key.Thread})
	if err != nil {
		return toolconv.Approval{}, fmt.Errorf("encode schedule request: %w", err)
	}
	return toolconv.Approval{
		ID: id, Tool: toolconv.Qualified(ToolSchedule), Input: input,
		Body:    schedreq.CardBody(r, s.clock.Now(), render.CodeBlock("", render.Clip(r.Prompt, render.PreviewLines, render.PreviewRunes))),
		Buttons: render.ScheduleButtons(),
		Max:     schedreq.MaxCards,
		Full: func(waiting int) error {
			return fmt.Errorf("%w: %d schedule requests already wait for a person's decision here; wait for them", toolconv.ErrRefused, waiting)
		},
		Opened: func(log *slog.Logger) {
			log.Info("agent schedule awaits approval", "card", id, "cron", r.Cron, "tz", r.TZ)
		},
		Expired: func(wait string) string {
			return "Nobody approved the schedule within " + wait + ", so none was created."
		},
		Allow: func(ctx context.Context, d toolconv.Decider) toolconv.Decision {
			r := r
			r.CreatedBy = d.ID
			sc, err := s.add(ctx, r)
			if err != nil {
				why := "database error"
				if errors.Is(err, schedreq.ErrRefused) {
					why = toolconv.ErrorText(err)
				} else {
					d.Log.Error("add approved agent schedule", "card", d.Card, "err", err)
				}
				msg := "Approved by " + d.Mention + " but not created: " + why
				return toolconv.Decision{Audit: msg, Status: "⚠️ " + msg}
			}
			d.Log.Info("agent schedule approved", "card", d.Card, "schedule", sc.ID, "by", d.ID)
			return toolconv.Decision{Allowed: true, Audit: fmt.Sprintf("schedule #%d created", sc.ID),
				Status: "✅ Created by " + d.Mention + " as " + schedreq.Line(sc, s.clock.Now(), r.Key) +
					". Remove it with `" + bridges.CommandPrefix + "schedule rm " + fmt.Sprint(sc.ID) + "`."}
		},
		Deny: func(_ context.Context, d toolconv.Decider) toolconv.Decision {
			msg := "Refused by " + d.Mention + ": no schedule was created."
			d.Log.Info("agent schedule refused", "card", d.Card, "by", d.ID)
			return toolconv.Decision{Audit: msg, Status: "❌ " + msg}
		},
	}, nil
}
