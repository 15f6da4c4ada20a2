package admin

import (
	"context"
	"net/http"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/adapters/web/auth"
)

// ReplicaStatus is what the bots page shows of a bridge of several
// replicas (config replicas), read from the leases: this process's
// replica id, the conversations it runs, and who holds each bot's one
// platform connection (the Discord gateway, the WhatsApp device).
type ReplicaStatus struct {
	ID            string
	Conversations []string          // ids of the conversations whose leases this replica holds
	Connections   map[string]string // bot name → the replica holding its connection; absent: nobody or no lease
}

// SetReplicas gives the pages this replica's status; nil (one bridge)
// shows none. Call it before serving.
func (p *Pages) SetReplicas(f func(context.Context) (ReplicaStatus, error)) { p.replicas = f }

// replicaView is the replica section of the bots page.
type replicaView struct {
	ID            string
	Conversations []ConvView
}

// replicaSection reads the replica's status for the bots page: nil for
// one bridge; when the leases cannot be read, the id alone and the error
// logged (the page still shows the bots).
func (p *Pages) replicaSection(r *http.Request) (*replicaView, map[string]string) {
	if p.replicas == nil {
		return nil, nil
	}
	s, err := p.replicas(r.Context())
	if err != nil {
		p.log.Error("read the replicas' leases", "err", err)
	}
	v := &replicaView{ID: s.ID}
	for _, id := range s.Conversations {
		var key bridges.ConversationKey
		if conv, err := p.st.ConversationByID(r.Context(), id); err == nil {
			key = bridges.ConversationKey(conv.Key)
		}
		v.Conversations = append(v.Conversations, p.host.Conversation(r.Context(), auth.CurrentUser(r).Name, id, key))
	}
	return v, s.Connections
}
