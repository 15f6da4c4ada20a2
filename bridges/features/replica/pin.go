package replica

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentbridge/agentbridge/store"
)

// A pin ties a bot's conversations to the replica holding another lease:
// a WhatsApp bot sends through its linked device only, so its
// conversations must run where the device's lease (connlease) is held.
// Options.Pin names that lease per bot ("" for none).

// pinFor returns the pinned lease of conversation id's bot ("" for none).
// A conversation the store does not know is not pinned.
func (r *Replica) pinFor(ctx context.Context, id string) (string, error) {
	if r.pin == nil {
		return "", nil
	}
	conv, err := r.st.ConversationByID(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("pin of conversation %s: %w", id, err)
	}
	return r.pin(conv.Key.Bot), nil
}

// pinHolders returns the owner of each live lease among pins.
func (r *Replica) pinHolders(ctx context.Context, pins map[string]bool) (map[string]string, error) {
	ls, err := r.st.Leases(ctx, "")
	if err != nil {
		return nil, fmt.Errorf("pinned leases: %w", err)
	}
	owners := make(map[string]string)
	for _, l := range ls {
		if pins[l.Resource] {
			owners[l.Resource] = l.Owner
		}
	}
	return owners, nil
}

// mayTake reports whether this replica may take a conversation pinned to
// lease pin: only while no other replica holds pin (when nobody does, the
// bot is connected nowhere and any replica may record its work).
func (r *Replica) mayTake(ctx context.Context, pin string) (bool, error) {
	if pin == "" {
		return true, nil
	}
	owners, err := r.pinHolders(ctx, map[string]bool{pin: true})
	if err != nil {
		return false, err
	}
	owner, held := owners[pin]
	return !held || owner == r.id, nil
}

// movedPins returns the held conversations whose pinned lease another
// replica holds now (the device moved): they must move after it.
func (r *Replica) movedPins(ctx context.Context) ([]string, error) {
	r.mu.Lock()
	pins := map[string]bool{}
	for _, h := range r.held {
		if h.pin != "" {
			pins[h.pin] = true
		}
	}
	r.mu.Unlock()
	if len(pins) == 0 {
		return nil, nil
	}
	owners, err := r.pinHolders(ctx, pins)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var moved []string
	for id, h := range r.held {
		if o, ok := owners[h.pin]; ok && h.pin != "" && o != r.id {
			moved = append(moved, id)
		}
	}
	return moved, nil
}
