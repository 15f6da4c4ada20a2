package handoff_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/bridges/core/worker"
	"github.com/agentbridge/agentbridge/bridges/features/commands"
	"github.com/agentbridge/agentbridge/bridges/features/handoff"
	"github.com/agentbridge/agentbridge/config/profile"
)

// privateConv is the conversation !handoff runs in: only what it uses.
type privateConv struct {
	commands.Conversation
	session string
	prof    *profile.Agent
	private []string
	to      []worker.Person
}

func (p *privateConv) ID() string        { return "conv-1" }
func (p *privateConv) SessionID() string { return p.session }
func (p *privateConv) Profile() *profile.Agent {
	if p.prof == nil {
		return &profile.Agent{Name: "coder"}
	}
	return p.prof
}
func (p *privateConv) Privately(_ context.Context, who worker.Person, text string) {
	p.private, p.to = append(p.private, text), append(p.to, who)
}

// TestHandoffCommandRunsPrivately: !handoff is a participants' command
// named handoff that answers its author privately with the conversation's
// id, and says when there is no session yet. (Its authority and that
// nothing is posted in the conversation: bridges/core's
// TestHandoffCommandIsPrivate.)
func TestHandoffCommandRunsPrivately(t *testing.T) {
	cmd := handoff.Command()
	if cmd.Name != "handoff" || cmd.Who != commands.Participants {
		t.Fatalf("command %q for %v, want handoff for participants", cmd.Name, cmd.Who)
	}
	for _, session := range []string{"", "sess-9"} {
		p := &privateConv{session: session}
		cmd.Run(context.Background(), p, worker.Person{ID: "dave", Name: "Dave"}, commands.Line{Name: "handoff"})
		if len(p.private) != 1 || p.to[0].ID != "dave" {
			t.Fatalf("private %q to %v", p.private, p.to)
		}
		for _, want := range []string{"`bridge attach conv-1`", "`bridge export conv-1 -dir DIR`", "BRIDGE_HANDOFF_TOKEN"} {
			if !strings.Contains(p.private[0], want) {
				t.Errorf("answer lacks %q: %q", want, p.private[0])
			}
		}
		if got := strings.Contains(p.private[0], "no session yet"); got != (session == "") {
			t.Errorf("session %q: says no session yet = %v", session, got)
		}
	}
	// An ACP agent's session: attach, and no export to run.
	p := &privateConv{session: "sess-9", prof: &profile.Agent{Name: "gem", Kind: profile.KindACP}}
	cmd.Run(context.Background(), p, worker.Person{ID: "dave", Name: "Dave"}, commands.Line{Name: "handoff"})
	if len(p.private) != 1 || !strings.Contains(p.private[0], "`bridge attach conv-1`") ||
		strings.Contains(p.private[0], "`bridge export conv-1") || !strings.Contains(p.private[0], "of kind acp") {
		t.Errorf("the answer for an ACP conversation: %q", p.private)
	}
}
