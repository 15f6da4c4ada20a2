package web

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/bridges/adapters/web/admin"
	"github.com/agentbridge/agentbridge/store"
)

// TestAdminBotsShowReplica: with replicas, the bots page names the replica
// serving it, the conversations it runs, and who holds each bot's
// connection; when the leases cannot be read it still shows the bots. One
// bridge shows no replica section.
func TestAdminBotsShowReplica(t *testing.T) {
	h := newAdminHarness(t)
	if _, body := h.get(t, h.ana, "/admin"); strings.Contains(body, `id="replica"`) || strings.Contains(body, "Held by replica") {
		t.Error("one bridge shows a replica section")
	}
	conv, _, err := h.st.GetOrCreateConversation(context.Background(), store.ConversationKey{Bot: "team-slack", Channel: "C42", Thread: "1.5"}, "coder", "U1")
	if err != nil {
		t.Fatal(err)
	}
	status := admin.ReplicaStatus{ID: "host-a-12-ab", Conversations: []string{conv.ID}, Connections: map[string]string{"team-slack": "host-b-7-cd"}}
	var readErr error
	h.c.SetReplicas(func(context.Context) (admin.ReplicaStatus, error) { return status, readErr })
	_, body := h.get(t, h.ana, "/admin")
	for _, want := range []string{`id="replica"`, "host-a-12-ab", "It runs 1 conversation:", "C42", "Held by replica", "<code>host-b-7-cd</code>"} {
		if !strings.Contains(body, want) {
			t.Errorf("bots page lacks %q:\n%s", want, body)
		}
	}

	status = admin.ReplicaStatus{ID: "host-a-12-ab", Connections: map[string]string{"team-slack": "host-a-12-ab"}}
	_, body = h.get(t, h.ana, "/admin")
	for _, want := range []string{"It runs no conversation now.", "<code>host-a-12-ab</code> (this one)"} {
		if !strings.Contains(body, want) {
			t.Errorf("bots page lacks %q:\n%s", want, body)
		}
	}

	status, readErr = admin.ReplicaStatus{ID: "host-a-12-ab"}, errors.New("database down")
	if code, body := h.get(t, h.ana, "/admin"); code != 200 || !strings.Contains(body, "team-slack") || !strings.Contains(body, "no lease") {
		t.Errorf("with the leases unreadable: %d\n%s", code, body)
	}
}
