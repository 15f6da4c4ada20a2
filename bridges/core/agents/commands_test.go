package agents_test

import (
	"testing"

	"github.com/agentbridge/agentbridge/agent/acp"
	"github.com/agentbridge/agentbridge/bridges/core/agents"
)

// offering is an ACP agent session offering modes and models.
type offering struct {
	agents.Session
	offers map[string]acp.Offer
}

func (o offering) Offered(kind string) (acp.Offer, string, bool) {
	off, ok := o.offers[kind]
	return off, "", ok
}

// TestChoices: what an ACP agent offers while it runs, the stored choice
// otherwise; modes that make the agent stop asking are never asked for.
func TestChoices(t *testing.T) {
	if ch := agents.Offered(nil, acp.KindMode, "m1", "plan"); !ch.Own || ch.Live || ch.Stored != "plan" {
		t.Errorf("no agent running: %+v, want the stored mode", ch)
	}
	sess := offering{offers: map[string]acp.Offer{
		acp.KindModel: {Current: "fast", Available: []acp.Choice{{ID: "fast", Name: "Fast"}, {ID: "deep", Name: "Deep"}}},
	}}
	ch := agents.Offered(sess, acp.KindModel, "deep", "")
	if !ch.Live || ch.Current != "fast" || ch.Stored != "deep" || len(ch.Available) != 2 || ch.Available[1].Name != "Deep" {
		t.Errorf("running agent: %+v", ch)
	}
	model, mode := agents.StatusLines(sess, "deep", "")
	if model != "`fast`" || mode != "the agent's own" {
		t.Errorf("status lines %q, %q", model, mode)
	}
	if _, mode := agents.StatusLines(nil, "", "plan"); mode != "`plan`" {
		t.Errorf("stored mode's status line %q, want `plan`", mode)
	}
	for _, m := range []string{"yolo", "Full-Access", "bypassPermissions", "dontAsk"} {
		if !agents.SkipsApproval(m) || agents.StoredMode(m) != "" {
			t.Errorf("mode %s: not refused", m)
		}
	}
	if agents.StoredMode("default") != "" || agents.StoredMode("plan") != "plan" {
		t.Error("StoredMode: default is the agent's own, plan is asked for")
	}
}
