package commands

import (
	"context"
	"strings"
	"testing"
)

// privateConv is a fakeConv that records private answers.
type privateConv struct {
	*fakeConv
	private []string
	to      []Author
}

func (p *privateConv) Privately(_ context.Context, who Author, text string) {
	p.private, p.to = append(p.private, text), append(p.to, who)
}

func (p *privateConv) SessionID() string { return "" }

// TestHandoffRunsPrivately: !handoff answers its author (an admin here)
// privately with the conversation's id, and says when there is no
// session yet; nothing is posted in the conversation.
func TestHandoffRunsPrivately(t *testing.T) {
	p := &privateConv{fakeConv: newFakeConv(t)}
	l, _ := testTable.Parse("!handoff")
	testTable.Run(context.Background(), p, "m1", Author{ID: "dave", Name: "Dave"}, l)
	if len(p.private) != 1 || p.to[0].ID != "dave" || len(p.notices) != 0 {
		t.Fatalf("private %q to %v, notices %q", p.private, p.to, p.notices)
	}
	for _, want := range []string{"`bridge attach conv-1`", "`bridge export conv-1 -dir DIR`", "BRIDGE_HANDOFF_TOKEN", "no session yet"} {
		if !strings.Contains(p.private[0], want) {
			t.Errorf("answer lacks %q: %q", want, p.private[0])
		}
	}
}
