// Package accesstest is the access property's one written table and the
// fixture every path's test builds it on: person kinds × conversation
// states, and what each kind may do in each state (Expected). The tests
// of package access (the decision), bridges/adapters/web (pages, list, search,
// streams), bridges/features/handoff (export, attach, send, decide) and
// bridges/core (!sessions, !resume) each check their paths against it,
// so a path that skips the decision disagrees with the table.
package accesstest

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/agentbridge/agentbridge/bridges/core/access"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/profile"
	"github.com/agentbridge/agentbridge/store"
)

// Kind is a kind of person.
type Kind string

// The person kinds.
const (
	Owner       Kind = "owner"       // started the conversations
	Participant Kind = "participant" // shared as participant (where shared)
	Viewer      Kind = "viewer"      // shared as viewer (where shared)
	Former      Kind = "former"      // was a participant; the share ended
	Removed     Kind = "removed"     // shared as participant, then removed from web.users by a reload
	SignedOut   Kind = "signed-out"  // shared as participant, using a session that signed out
	Stranger    Kind = "stranger"    // a web user nothing is shared with
	Admin       Kind = "admin"       // a web admin nothing is shared with
	HandoffWith Kind = "handoff"     // a hand-off user mapped to the participant
	HandoffNone Kind = "handoff-no"  // a hand-off user mapped to the stranger
)

// Kinds lists every kind.
var Kinds = []Kind{Owner, Participant, Viewer, Former, Removed, SignedOut, Stranger, Admin, HandoffWith, HandoffNone}

// State is a conversation's state.
type State string

// The states; every conversation has messages and belongs to the owner.
const (
	Private  State = "private"  // never shared (but with the former participant, ended)
	Shared   State = "shared"   // shared with the participant, viewer, removed and signed-out kinds
	Unshared State = "unshared" // was shared as in Shared; every share ended
	Archived State = "archived" // shared as in Shared, then archived
	Deleted  State = "deleted"  // shared as in Shared, then deleted (its session kept)
)

// States lists every state.
var States = []State{Private, Shared, Unshared, Archived, Deleted}

// Expected is the table: what kind k may do in a conversation in state s.
// Written by hand, not derived from the decision.
func Expected(k Kind, s State) []access.Action {
	all := []access.Action{access.See, access.List, access.Write, access.Decide, access.Manage, access.Resume, access.Export, access.Attach}
	switch {
	case k == Owner && s == Deleted:
		return []access.Action{access.Resume} // its session stays hers: !sessions, !resume
	case k == Owner:
		return all
	case s != Shared:
		return nil // private, unshared, archived (the owner's alone), deleted
	case k == Participant || k == HandoffWith:
		return []access.Action{access.See, access.List, access.Write, access.Decide, access.Export, access.Attach}
	case k == Viewer:
		return []access.Action{access.See, access.List, access.Decide} // a click reaches the cards, which decide
	}
	return nil // former, removed, signed out, stranger, admin, hand-off user without access
}

// May reports whether the table lets k do act in state s.
func May(k Kind, s State, act access.Action) bool { return slices.Contains(Expected(k, s), act) }

// Bot is the web bot of the fixture.
const Bot = "console"

// User is the web user (and the user id on the web bot) of kind k.
func User(k Kind) string {
	switch k {
	case Owner:
		return "ana"
	case Participant, HandoffWith:
		return "bob"
	case Viewer:
		return "vic"
	case Former:
		return "fred"
	case Removed:
		return "rita"
	case SignedOut:
		return "sam"
	case Stranger, HandoffNone:
		return "stan"
	case Admin:
		return "adam"
	}
	return ""
}

// Handoff is the hand-off user of kind k ("" for web kinds).
func Handoff(k Kind) string {
	switch k {
	case HandoffWith:
		return "bob-term"
	case HandoffNone:
		return "stan-term"
	}
	return ""
}

// Token is kind k's sign-in token (web) or hand-off token.
func Token(k Kind) string {
	return fmt.Sprintf("%s-token-0123456789", strings.ReplaceAll(string(k), "-", ""))
}

// webKinds are the kinds that sign in to the console.
var webKinds = []Kind{Owner, Participant, Viewer, Former, Removed, SignedOut, Stranger, Admin}

// UsersYAML is the config's web.users and handoff.users (the removed kind
// included: a reload to UsersYAML(false) removes them).
func UsersYAML(withRemoved bool) string {
	var b strings.Builder
	b.WriteString("web:\n  users:\n")
	for _, k := range webKinds {
		if k == Removed && !withRemoved {
			continue
		}
		role := "user"
		if k == Admin || k == Owner {
			role = "admin"
		}
		fmt.Fprintf(&b, "    - { name: %s, role: %s, token: %q }\n", User(k), role, Token(k))
	}
	b.WriteString("handoff:\n  users:\n")
	for _, k := range []Kind{HandoffWith, HandoffNone} {
		fmt.Fprintf(&b, "    - { name: %s, token: %q, as: { %s: %s } }\n", Handoff(k), Token(k), Bot, User(k))
	}
	return b.String()
}

// Config is the fixture's config: the web bot, web.users (the removed
// kind only withRemoved) and handoff.users, as UsersYAML says.
func Config(withRemoved bool) *config.Config {
	cfg := &config.Config{Bots: []*config.Bot{{Name: Bot, Platform: config.PlatformWeb, Agent: "coder"}},
		Agents: map[string]*profile.Agent{"coder": {Name: "coder"}}}
	for _, k := range webKinds {
		if k == Removed && !withRemoved {
			continue
		}
		role := config.RoleUser
		if k == Admin || k == Owner {
			role = config.RoleAdmin
		}
		cfg.Web.Users = append(cfg.Web.Users, config.WebUser{Name: User(k), Role: role, Token: Token(k)})
	}
	for _, k := range []Kind{HandoffWith, HandoffNone} {
		cfg.Handoff.Users = append(cfg.Handoff.Users, config.HandoffUser{Name: Handoff(k), Token: Token(k),
			As: map[string]string{Bot: User(k)}})
	}
	return cfg
}

// Thread is the thread id of the conversation in state s.
func Thread(s State) string { return "acc" + string(s) + "000" }

// Word is a word only the conversation in state s holds (for searches).
func Word(s State) string { return "zebra" + string(s) }

// Conversations records, in st, the owner's conversation in each state:
// messages, shares, archive and deletion as States says, and each one's
// conversation row (the core's, with agent profile agent). It returns
// the conversations' ids by state.
func Conversations(ctx context.Context, st *store.Store, agent string) (map[State]string, error) {
	ids := map[State]string{}
	owner := User(Owner)
	for _, s := range States {
		key := store.ConversationKey{Bot: Bot, Channel: owner, Thread: Thread(s)}
		conv, _, err := st.GetOrCreateConversation(ctx, key, agent, owner)
		if err != nil {
			return nil, fmt.Errorf("conversation %s: %w", s, err)
		}
		ids[s] = conv.ID
		if _, err := st.AddWebMessage(ctx, store.WebMessage{ID: "m-" + string(s), Key: key, Author: owner,
			Text: "plan the " + Word(s) + " launch"}); err != nil {
			return nil, fmt.Errorf("message %s: %w", s, err)
		}
		share := func(member Kind, role string) error {
			return st.ShareWebThread(ctx, Bot, Thread(s), User(member), role)
		}
		if err := share(Former, store.WebParticipant); err != nil {
			return nil, err
		}
		if err := share(Former, ""); err != nil {
			return nil, err
		}
		if s == Private {
			continue
		}
		for _, sh := range []struct {
			k    Kind
			role string
		}{{Participant, store.WebParticipant}, {Viewer, store.WebViewer}, {Removed, store.WebParticipant}, {SignedOut, store.WebParticipant}} {
			if err := share(sh.k, sh.role); err != nil {
				return nil, err
			}
		}
		switch s {
		case Unshared:
			for _, k := range []Kind{Participant, Viewer, Removed, SignedOut} {
				if err := share(k, ""); err != nil {
					return nil, err
				}
			}
		case Archived:
			if err := st.ArchiveWebThread(ctx, Bot, Thread(s), true); err != nil {
				return nil, err
			}
		case Deleted:
			if err := st.DeleteWebThread(ctx, Bot, Thread(s)); err != nil {
				return nil, err
			}
		}
	}
	return ids, nil
}
