package agents

import (
	"strings"

	"github.com/agentbridge/agentbridge/agent/acp"
	"github.com/agentbridge/agentbridge/bridges/core/render"
	"github.com/agentbridge/agentbridge/config/profile"
)

// This file is the choices of an agent that chooses its own modes and
// models (kind acp), for the chat commands and !status.

// offerer is an agent session that chooses its own modes and models (an
// ACP agent, *agent.Session): what it offers for its session.
type offerer interface {
	Offered(kind string) (o acp.Offer, initial string, ok bool)
}

// Choice is one mode or model an agent offers.
type Choice struct{ ID, Name, Description string }

// Choices is what a conversation's agent offers of one kind (mode or
// model).
type Choices struct {
	// Own: the agent chooses its own (kind acp); false for the Claude
	// Code CLI, whose modes and models are fixed.
	Own bool
	// Live: the agent runs, so Current and Available are known (an empty
	// Available: it offers none).
	Live      bool
	Current   string
	Available []Choice
	// Stored is the conversation's choice, asked for at each start of the
	// agent ("" or "default" = the agent's own).
	Stored string
}

// Offered is what the agent of kind acp running as sess (nil when none
// runs) offers of kind ("mode" or "model"), with the conversation's
// stored model and mode.
func Offered(sess Session, kind, model, mode string) Choices {
	ch := Choices{Own: true, Stored: model}
	if kind == acp.KindMode {
		ch.Stored = mode
	}
	o, ok := sess.(offerer)
	if sess == nil || !ok {
		return ch
	}
	offer, _, isACP := o.Offered(kind)
	if !isACP {
		return ch
	}
	ch.Live, ch.Current = true, offer.Current
	for _, a := range offer.Available {
		ch.Available = append(ch.Available, Choice{ID: a.ID, Name: a.Name, Description: a.Description})
	}
	return ch
}

// skipsApproval is the modes known to make an agent run every tool
// without asking (Gemini CLI's yolo, Codex's full-access, Claude Code's
// bypassPermissions): the bridge's rules and cards would no longer see
// what it runs, so !mode refuses them for an ACP agent (allow_bypass is
// Claude Code's).
var skipsApproval = map[string]bool{"yolo": true, "full-access": true, "bypasspermissions": true, "dontask": true}

// SkipsApproval reports whether mode is one that makes an agent run its
// tools without asking (refused for agents of kind acp).
func SkipsApproval(mode string) bool { return skipsApproval[strings.ToLower(mode)] }

// StoredMode is the stored mode m an ACP agent is asked for at its
// start: none for "default" (the agent's own) and none for a mode that
// makes the agent stop asking (commands refuse to store one).
func StoredMode(m string) string {
	if m == profile.ModeDefault || SkipsApproval(m) {
		return ""
	}
	return m
}

// StatusLines are !status's model and mode of an ACP agent running as
// sess (nil when none runs) with the conversation's stored model and
// mode: the running agent's current one, else the conversation's choice,
// else the agent's own.
func StatusLines(sess Session, model, mode string) (modelLine, modeLine string) {
	return choiceStatus(Offered(sess, acp.KindModel, model, mode)), choiceStatus(Offered(sess, acp.KindMode, model, mode))
}

// choiceStatus is !status's line of one kind of choice (StatusLines).
func choiceStatus(ch Choices) string {
	switch {
	case ch.Live && ch.Current != "":
		return render.CodeSpan(ch.Current)
	case ch.Live:
		return "none offered"
	case ch.Stored != "" && ch.Stored != profile.ModeDefault:
		return render.CodeSpan(ch.Stored)
	}
	return "the agent's own"
}
