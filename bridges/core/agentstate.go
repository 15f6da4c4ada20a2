package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges/render"
	"github.com/agentbridge/agentbridge/store"
)

// This file holds what the agent asks or runs beyond permission requests:
// MCP elicitations (forms an MCP server wants filled in, shown as question
// cards) and the background tasks shown by !status.

// elicitationResponder is the optional ability of an AgentSession
// (*agent.Session has it) to answer an elicitation request.
type elicitationResponder interface {
	RespondElicitation(ctx context.Context, requestID, action string, content map[string]any) error
}

// backgroundLister is the optional ability of an AgentSession
// (*agent.Session has it) to list its running background tasks.
type backgroundLister interface {
	BackgroundTasks() []streamjson.BackgroundTask
}

// onElicitation shows an MCP server's elicitation request (a form the
// server wants filled in) as a question card, with the authority of a
// permission card: the turn's requesters, approvers and admins decide.
// Each field becomes a question: an enum field offers its values, a
// boolean Yes and No (as buttons; several such fields are toggled and
// submitted), a single text or number field is answered by reply. The
// card has a Decline button; approval_timeout declines it. A form the
// card cannot show (URL mode, several fields of which one wants text,
// nested or unknown types) is cancelled — MCP's "dismissed without a
// choice" — and the conversation is told what was asked. The server's
// texts are untrusted: shown on one line, clipped.
func (cv *conversation) onElicitation(ctx context.Context, e streamjson.Elicitation) {
	if _, ok := cv.sess.(elicitationResponder); !ok {
		return
	}
	server := codeSpan(oneLine(orDefault(e.Server, "unknown"), 60))
	asked := "“" + oneLine(orDefault(e.Message, "no message"), 300) + "”"
	form, qs, err := parseElicitation(e)
	if err != nil {
		cv.log.Info("agent elicitation cancelled: form not shown", "request", e.RequestID, "mcp_server", e.Server, "mode", e.Mode, "err", err)
		cv.answerElicitation(ctx, e.RequestID, streamjson.ElicitCancel, nil)
		cv.notice(ctx, fmt.Sprintf("🔌 The MCP server %s asked for input (%s) that this bridge cannot show (%v), so the request was cancelled.", server, asked, err))
		return
	}
	cd := &card{id: e.RequestID, kind: cardQuestion, questions: qs, elicit: form,
		req: streamjson.PermissionRequest{RequestID: e.RequestID, ToolName: "MCP elicitation: " + e.Server, Input: e.Schema}}
	cd.picked = make([][]bool, len(qs))
	for i, q := range qs {
		cd.picked[i] = make([]bool, len(q.Options))
	}
	cd.intro = "🔌 **The MCP server " + server + " asks:** " + asked + "\n\n"
	cd.body = cd.intro + render.QuestionBody(qs, nil)
	cv.openCard(ctx, cd)
	if cv.cards[cd.id] == nil { // the card could not be posted
		cv.answerElicitation(ctx, e.RequestID, streamjson.ElicitCancel, nil)
	}
}

// answerElicitation answers the CLI, logging a failure.
func (cv *conversation) answerElicitation(ctx context.Context, id, action string, content map[string]any) {
	r, ok := cv.sess.(elicitationResponder)
	if !ok {
		return
	}
	if err := r.RespondElicitation(ctx, id, action, content); err != nil {
		cv.log.Warn("answer elicitation", "request", id, "action", action, "err", err)
	}
}

// respondElicitation turns the decision the question card machinery
// reached (respond's choke point) into the elicitation's answer: an allow
// carries the answers (question → label or typed text) and is sent as
// accept with the form's values; anything else (Decline, the approval
// timeout, a card that could not be shown) declines. Answers that do not
// fit their fields (a text that is no enum value, a number that does not
// parse) decline too, and the conversation is told.
func (cv *conversation) respondElicitation(ctx context.Context, cd *card, d streamjson.Decision) {
	if !d.Allow {
		cv.answerElicitation(ctx, cd.id, streamjson.ElicitDecline, nil)
		return
	}
	var in struct {
		Answers map[string]string `json:"answers"`
	}
	_ = json.Unmarshal(d.UpdatedInput, &in)
	content, err := cd.elicit.content(in.Answers)
	if err != nil {
		cv.log.Info("elicitation answer does not fit the form; declined", "request", cd.id, "err", err)
		cv.notice(ctx, "🔌 That answer does not fit the form ("+oneLine(err.Error(), 200)+"), so the request was declined.")
		cv.answerElicitation(ctx, cd.id, streamjson.ElicitDecline, nil)
		return
	}
	cv.answerElicitation(ctx, cd.id, streamjson.ElicitAccept, content)
}

// declineElicitation closes an elicitation card as declined by who.
func (cv *conversation) declineElicitation(ctx context.Context, cd *card, who author) {
	msg := "Declined by " + mention(who)
	cv.resolve(ctx, cd, streamjson.Decision{Message: msg}, store.DecisionDeny, who, msg, "❌ "+msg)
}

// elicitForm is the form of an elicitation card: one field per question,
// in the card's order.
type elicitForm struct {
	fields []elicitField
}

// elicitField is one property of an elicitation's requested_schema.
type elicitField struct {
	name     string
	question string   // the card's question text (unique within the form)
	typ      string   // string, number, integer or boolean
	enum     []string // allowed values of a string field; nil = free text
	required bool
}

// Answers of boolean fields.
const (
	elicitYes = "Yes"
	elicitNo  = "No"
)

// maxElicitFields bounds the fields one card shows.
const maxElicitFields = 10

// parseElicitation reads a form-mode request's flat schema into a form and
// the card's questions; it fails for what a card cannot show.
func parseElicitation(e streamjson.Elicitation) (*elicitForm, []render.Question, error) {
	if e.Mode != "" && e.Mode != "form" {
		return nil, nil, fmt.Errorf("mode %q", e.Mode)
	}
	var schema struct {
		Properties map[string]struct {
			Type        string   `json:"type"`
			Title       string   `json:"title"`
			Description string   `json:"description"`
			Enum        []string `json:"enum"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(e.Schema, &schema); err != nil {
		return nil, nil, fmt.Errorf("unreadable schema: %w", err)
	}
	// The order the CLI gives, then any other fields by name.
	var names, rest []string
	for _, n := range e.PropertyOrder {
		if _, ok := schema.Properties[n]; ok && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	for n := range schema.Properties {
		if !slices.Contains(names, n) {
			rest = append(rest, n)
		}
	}
	slices.Sort(rest)
	names = append(names, rest...)
	switch {
	case len(names) == 0:
		return nil, nil, errors.New("no fields")
	case len(names) > maxElicitFields:
		return nil, nil, fmt.Errorf("%d fields, at most %d", len(names), maxElicitFields)
	}
	form := &elicitForm{}
	var qs []render.Question
	seen := map[string]bool{}
	for _, n := range names {
		p := schema.Properties[n]
		f := elicitField{name: n, typ: p.Type, enum: p.Enum, required: slices.Contains(schema.Required, n)}
		q := render.Question{Question: oneLine(orDefault(p.Title, n), 200)}
		if d := strings.TrimSpace(p.Description); d != "" {
			q.Question += " — " + oneLine(d, 200)
		}
		if seen[q.Question] {
			q.Question += " (" + n + ")"
		}
		seen[q.Question] = true
		switch {
		case p.Type == "boolean":
			q.Options = []render.Option{{Label: elicitYes}, {Label: elicitNo}}
		case p.Type == "string" && len(p.Enum) > 0:
			for _, v := range p.Enum {
				q.Options = append(q.Options, render.Option{Label: v})
			}
		case p.Type == "string" || p.Type == "number" || p.Type == "integer":
			if len(names) > 1 {
				return nil, nil, fmt.Errorf("field %q wants typed text beside other fields", n)
			}
		default:
			return nil, nil, fmt.Errorf("field %q of type %q", n, p.Type)
		}
		f.question = q.Question
		form.fields = append(form.fields, f)
		qs = append(qs, q)
	}
	return form, qs, nil
}

// missing names the first required field answers lacks ("" when none;
// always "" for a nil form, i.e. AskUserQuestion).
func (f *elicitForm) missing(answers map[string]string) string {
	if f == nil {
		return ""
	}
	for _, fd := range f.fields {
		if _, ok := answers[fd.question]; fd.required && !ok {
			return codeSpan(fd.question)
		}
	}
	return ""
}

// content converts the card's answers (question → chosen label or typed
// text) into the form's values by property name, typed per the schema.
func (f *elicitForm) content(answers map[string]string) (map[string]any, error) {
	out := map[string]any{}
	for _, fd := range f.fields {
		a, ok := answers[fd.question]
		if !ok {
			if fd.required {
				return nil, fmt.Errorf("%s is required", fd.name)
			}
			continue
		}
		a = strings.TrimSpace(a)
		switch {
		case fd.typ == "boolean":
			switch strings.ToLower(a) {
			case "yes", "true", "y":
				out[fd.name] = true
			case "no", "false", "n":
				out[fd.name] = false
			default:
				return nil, fmt.Errorf("%s wants yes or no", fd.name)
			}
		case fd.enum != nil:
			i := slices.IndexFunc(fd.enum, func(v string) bool { return strings.EqualFold(v, a) })
			if i < 0 {
				return nil, fmt.Errorf("%s wants one of %s", fd.name, strings.Join(fd.enum, ", "))
			}
			out[fd.name] = fd.enum[i]
		case fd.typ == "integer":
			n, err := strconv.ParseInt(a, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%s wants a whole number", fd.name)
			}
			out[fd.name] = n
		case fd.typ == "number":
			n, err := strconv.ParseFloat(a, 64)
			if err != nil {
				return nil, fmt.Errorf("%s wants a number", fd.name)
			}
			out[fd.name] = n
		default:
			out[fd.name] = a
		}
	}
	return out, nil
}

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
		names = append(names, codeSpan(oneLine(orDefault(t.Description, strings.TrimSpace(t.TaskType+" "+t.TaskID)), 80)))
	}
	return fmt.Sprintf("\n• background tasks: %d — %s", len(tasks), strings.Join(names, ", "))
}
