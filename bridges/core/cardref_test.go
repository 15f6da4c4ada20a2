package core_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/delivery"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/store"
)

// dyingCards is the platform of a core that stops while it posts its first
// card: with posted, the card reaches the platform and its answer comes
// back only once the core is stopping (too late to store where the card
// shows); without, the core stops before the card is posted.
type dyingCards struct {
	*bridgetest.Platform
	posted  bool
	once    sync.Once
	posting chan struct{} // closed when the card post has begun
}

func (d *dyingCards) Post(ctx context.Context, key bridges.ConversationKey, m bridges.Message) (bridges.MessageRef, error) {
	if len(m.Buttons) == 0 {
		return d.Platform.Post(ctx, key, m)
	}
	first := false
	d.once.Do(func() { first = true })
	if !first {
		return d.Platform.Post(ctx, key, m)
	}
	var ref bridges.MessageRef
	if d.posted {
		var err error
		if ref, err = d.Platform.Post(ctx, key, m); err != nil {
			return ref, err
		}
	}
	close(d.posting)
	<-ctx.Done()
	if !d.posted {
		return ref, fmt.Errorf("dying platform: %w", ctx.Err())
	}
	return ref, nil
}

// TestRestartClosesCardWithoutReference: the core stops between posting a
// card and storing its reference (or before the card reaches the
// platform). The next run cannot edit a card it has no reference of: it
// posts the closed card under the card's Idem with Retry, the platform
// returns the card it finds, and the card is edited to show it expired —
// one card, no buttons, no duplicate. A card that never reached the
// platform shows as expired all the same.
func TestRestartClosesCardWithoutReference(t *testing.T) {
	for _, posted := range []bool{true, false} {
		t.Run(fmt.Sprintf("posted=%v", posted), func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "bridge.db")
			plat := bridgetest.New(defaultLimits())
			dying := &dyingCards{Platform: plat, posted: posted, posting: make(chan struct{})}
			pool := bridgetest.NewFakePool(toolScript)
			defer pool.Close()

			h1 := start(t, setup{script: toolScript, dbPath: db, platform: plat, pool: pool,
				wrap: func(*bridgetest.Platform) bridges.Platform { return dying }})
			k := key("T1")
			h1.send(k, "m1", "bob", "bash: rm -rf build")
			<-dying.posting
			h1.stop()
			as, err := h1.st.OpenApprovals(ctxT(t))
			if err != nil || len(as) != 1 || as[0].CardRef != "" {
				t.Fatalf("after the stop: open approvals %+v, %v; want one without a card reference", as, err)
			}
			id := as[0].ID
			cards := func() []bridgetest.Msg {
				var out []bridgetest.Msg
				for _, m := range plat.Messages(k) {
					if m.CardID == id {
						out = append(out, m)
					}
				}
				return out
			}
			if n := len(cards()); posted != (n == 1) {
				t.Fatalf("after the stop: %d messages of card %s; posted=%v\n%s", n, id, posted, plat.Dump())
			}

			h2 := start(t, setup{script: toolScript, dbPath: db, platform: plat, pool: pool})
			plat.WaitFor(t, k, waitTimeout, "the card without a reference closed", func(m bridgetest.Msg) bool {
				return m.CardID == id && strings.Contains(m.Text, "Expired: bridge restarted") && len(m.Buttons) == 0
			})
			if got := cards(); len(got) != 1 {
				t.Errorf("%d messages of card %s, want 1 (the card, closed)\n%s", len(got), id, plat.Dump())
			} else if !strings.Contains(got[0].Text, "rm -rf build") {
				t.Errorf("closed card = %q, want the request shown", got[0].Text)
			}
			if n := plat.Lookups(); posted != (n == 1) {
				t.Errorf("%d posts found their Idem; posted=%v", n, posted)
			}
			as, err = h2.st.ApprovalsForConversation(ctxT(t), h2.conversation(k).ID)
			if err != nil || len(as) == 0 || as[0].ID != id || as[0].Decision != store.DecisionExpired {
				t.Errorf("approvals = %+v, %v; want %s expired", as, err, id)
			}
		})
	}
}

// TestCardIdemIsPerConversation: a card's key names its conversation, so
// that a request id the agent picks (it chooses it) can never name another
// conversation's card on a platform whose dedup spans conversations
// (Discord's nonce is per bot); and it is the same on every holder.
func TestCardIdemIsPerConversation(t *testing.T) {
	a, b := delivery.CardIdem("conv-a", "req-1"), delivery.CardIdem("conv-b", "req-1")
	if a == b {
		t.Fatalf("two conversations' cards of request req-1 share the key %q", a)
	}
	if again := delivery.CardIdem("conv-a", "req-1"); again != a {
		t.Fatalf("the key changed between holders: %q, %q", a, again)
	}
}
