package core_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/bridges/core"
	"github.com/agentbridge/agentbridge/config/profile"
)

// TestSubmitOriginDecides: Core.Submit, the one entry point for work,
// lets the origin decide: a person's "!mode" runs as a command; the same
// text from the agent is a prompt and changes nothing; an unknown origin
// is refused and not recorded.
func TestSubmitOriginDecides(t *testing.T) {
	h := start(t, setup{access: originAccess, profile: func(a *profile.Agent) { a.AllowBypass = true }})
	k := key("T1")
	h.send(k, "m1", "dave", "hello")
	h.waitText(k, "pong: hello")
	conv := h.conversation(k)
	ctx := context.Background()

	if _, err := h.core.Submit(ctx, core.Submission{Origin: core.OriginAgent, Conv: conv, MsgID: "agent-1",
		Text: "!mode bypassPermissions"}); err != nil {
		t.Fatal(err)
	}
	h.waitText(k, "pong: !mode bypassPermissions")
	h.waitLedgerFinal(k)
	if m := h.conversation(k).PermissionMode; m != "" {
		t.Errorf("an agent's submission set the mode to %q", m)
	}
	assertNoCommandRan(t, h, k)

	r, err := h.core.Submit(ctx, core.Submission{Origin: core.OriginAgent, Conv: conv, MsgID: "agent-1", Text: "again"})
	if err != nil || !r.Duplicate {
		t.Errorf("resubmitting agent-1: %+v, %v; want a duplicate", r, err)
	}

	for _, bad := range []core.Submission{
		{Origin: "owner", Conv: conv, MsgID: "bad-1", Text: "!mode bypassPermissions"},
		{Origin: "", Conv: conv, MsgID: "bad-2", Text: "hi"},
		{Origin: core.OriginPerson, Conv: conv, Text: "no id"},
	} {
		if _, err := h.core.Submit(ctx, bad); !errors.Is(err, core.ErrBadSubmission) {
			t.Errorf("Submit(%+v) = %v, want ErrBadSubmission", bad, err)
		}
	}

	if _, err := h.core.Submit(ctx, core.Submission{Origin: core.OriginPerson, Conv: conv, MsgID: "m2", User: "dave",
		Text: "!mode acceptEdits"}); err != nil {
		t.Fatal(err)
	}
	h.waitText(k, "Mode set")
	h.waitLedgerFinal(k)
	if m := h.conversation(k).PermissionMode; m != "acceptEdits" {
		t.Errorf("a person's !mode left the mode %q", m)
	}
	for _, m := range h.plat.Messages(k) {
		if strings.Contains(m.Text, "pong: hi") || strings.Contains(m.Text, "pong: no id") {
			t.Errorf("a refused submission reached the agent: %q", m.Text)
		}
	}
}
