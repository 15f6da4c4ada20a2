package app

import (
	"context"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges/features/replica/connlease"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/store"
)

// TestDevicePin: the lease a WhatsApp bot's conversations follow is the
// one its connection gate holds (leaseConnections); other platforms'
// gates hold other leases, so their conversations are not pinned.
func TestDevicePin(t *testing.T) {
	t.Parallel()
	if got, want := devicePin("phone"), connlease.Resource("whatsapp", "phone"); got != want {
		t.Errorf("devicePin = %q, want the device lease %q", got, want)
	}
	if devicePin("team") == connlease.Resource("discord", "team") {
		t.Error("a Discord bot's conversations follow its gateway lease")
	}
}

// TestReplicaOperatorView: the operator view's replica status comes from
// the leases on PostgreSQL: this replica's id and conversations, and the
// holder of each bot's platform connection (not the conversations'
// leases, nor schedule claims). One bridge shows none.
func TestReplicaOperatorView(t *testing.T) {
	t.Parallel()
	if (*replicas)(nil).operatorView(nil) != nil {
		t.Error("one bridge has a replica status")
	}
	srv := sharedPG.Need(t)
	ctx := context.Background()
	st := bridgetest.OpenPostgresStore(t, srv.NewDatabase(t, ""))
	rs, err := newReplicas(&config.Config{Replicas: config.Replicas{Enabled: true, Lease: time.Minute}}, st, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	conv, _, err := st.GetOrCreateConversation(ctx, store.ConversationKey{Bot: "team", Channel: "C1", Thread: "1.1"}, "coder", "U1")
	if err != nil {
		t.Fatal(err)
	}
	if tenure, err := rs.r.Claim(ctx, conv.ID); !tenure.OK || err != nil {
		t.Fatal("claim", tenure.OK, err)
	}
	for res, owner := range map[string]string{connlease.Resource("whatsapp", "phone"): "replica-b",
		connlease.Resource("discord", "dc"): rs.r.ID(), "schedule:s1:1700000000": "replica-b"} {
		if _, err := st.AcquireLease(ctx, res, owner, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	s, err := rs.operatorView(st)(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s.ID != rs.r.ID() || !slices.Equal(s.Conversations, []string{conv.ID}) {
		t.Errorf("status = %s holding %v, want %s holding [%s]", s.ID, s.Conversations, rs.r.ID(), conv.ID)
	}
	want := map[string]string{"phone": "replica-b", "dc": rs.r.ID()}
	if len(s.Connections) != len(want) || s.Connections["phone"] != want["phone"] || s.Connections["dc"] != want["dc"] {
		t.Errorf("connections = %v, want %v", s.Connections, want)
	}
}
