package access_test

import (
	"context"
	"testing"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/access"
	"github.com/agentbridge/agentbridge/bridges/core/access/accesstest"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
)

// person is kind k as the decision sees them.
func person(k accesstest.Kind) access.Person {
	switch k {
	case accesstest.HandoffWith, accesstest.HandoffNone:
		return access.Person{Via: access.ViaHandoff, Name: accesstest.Handoff(k)}
	case accesstest.SignedOut:
		return access.Person{Via: access.ViaWeb, Name: accesstest.User(k), Valid: func(context.Context) bool { return false }}
	}
	return access.Person{Via: access.ViaWeb, Name: accesstest.User(k), Valid: func(context.Context) bool { return true }}
}

// TestDecisionTable: the decision, asked for every person kind, state
// and action, agrees with the written table; named by thread alone (as
// the console names it) it agrees too.
func TestDecisionTable(t *testing.T) {
	ctx := context.Background()
	st := bridgetest.OpenStore(t)
	ids, err := accesstest.Conversations(ctx, st, "coder")
	if err != nil {
		t.Fatal(err)
	}
	a := access.New(accesstest.Config(false), st)
	for _, k := range accesstest.Kinds {
		for _, s := range accesstest.States {
			full := access.Conv{ID: ids[s], Key: bridges.ConversationKey{Bot: accesstest.Bot, Channel: accesstest.User(accesstest.Owner), Thread: accesstest.Thread(s)}}
			byThread := access.Conv{Key: bridges.ConversationKey{Bot: accesstest.Bot, Thread: accesstest.Thread(s)}}
			for _, act := range access.Actions {
				want := accesstest.May(k, s, act)
				d, err := a.Decide(ctx, person(k), full, act)
				if err != nil {
					t.Fatal(err)
				}
				if d.Allowed != want {
					t.Errorf("%s, %s conversation, %s: allowed %v, want %v (%s)", k, s, act, d.Allowed, want, d.Why)
				}
				if s == accesstest.Deleted {
					continue // the console does not name a deleted conversation by thread
				}
				if got := a.May(ctx, person(k), byThread, act); got != want {
					t.Errorf("%s, %s conversation by thread, %s: allowed %v, want %v", k, s, act, got, want)
				}
			}
		}
	}
}

// TestChannelIsNotTheConversation: a key that names the wrong owner for a
// thread is refused, and a thread id nobody used is a new conversation of
// the person asking (theirs, whoever's channel they name).
func TestChannelIsNotTheConversation(t *testing.T) {
	ctx := context.Background()
	st := bridgetest.OpenStore(t)
	if _, err := accesstest.Conversations(ctx, st, "coder"); err != nil {
		t.Fatal(err)
	}
	a := access.New(accesstest.Config(false), st)
	bob := person(accesstest.Participant)
	forged := access.Conv{Key: bridges.ConversationKey{Bot: accesstest.Bot, Channel: "bob", Thread: accesstest.Thread(accesstest.Shared)}}
	if a.May(ctx, bob, forged, access.Manage) || a.May(ctx, bob, forged, access.See) {
		t.Error("a key naming the participant as owner gives him the conversation")
	}
	fresh := access.Conv{Key: bridges.ConversationKey{Bot: accesstest.Bot, Thread: "neverused01"}}
	d, err := a.Decide(ctx, bob, fresh, access.Write)
	if err != nil || !d.Allowed || d.Key.Channel != "bob" || d.Exists {
		t.Errorf("a new thread: %+v, %v", d, err)
	}
	alien := access.Conv{Key: bridges.ConversationKey{Bot: accesstest.Bot, Channel: "ana", Thread: "neverused02"}}
	if a.May(ctx, bob, alien, access.Write) {
		t.Error("bob writes a new conversation into ana's channel")
	}
}

// TestChangedWakesWatchers: Changed ends a Watch whose person lost
// access at once (no waiting for the periodic re-check).
func TestChangedWakesWatchers(t *testing.T) {
	ctx := context.Background()
	st := bridgetest.OpenStore(t)
	if _, err := accesstest.Conversations(ctx, st, "coder"); err != nil {
		t.Fatal(err)
	}
	a := access.New(accesstest.Config(false), st)
	cv := access.Conv{Key: bridges.ConversationKey{Bot: accesstest.Bot, Thread: accesstest.Thread(accesstest.Shared)}}
	ended := a.Watch(ctx, person(accesstest.Participant), cv, access.See)
	select {
	case <-ended:
		t.Fatal("ended while allowed")
	default:
	}
	if err := st.ShareWebThread(ctx, accesstest.Bot, accesstest.Thread(accesstest.Shared), "bob", ""); err != nil {
		t.Fatal(err)
	}
	a.Changed()
	<-ended // bounded by the test's timeout; RecheckEvery would end it too
}
