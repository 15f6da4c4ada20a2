// Package access is the one decision of who may do what in a conversation,
// now (docs/web.md, docs/handoff.md, SECURITY.md "Access review"). Every
// way into a conversation asks it at the moment of acting: the web
// console's pages, event streams, conversation list and search, the chat
// commands that reach other conversations (!sessions, !resume), hand-off
// export, attach, send and decide, and card decisions made from the
// console or a terminal. No path keeps a copy of the rule.
//
// The decision takes the conversation (its id and key), never its channel
// alone, and reads current state each time: the config in force (the
// bot's access lists, web.users, handoff.users after reloads), the web
// conversation's owner, shares and their roles, whether it was archived
// or deleted, whether the person's sign-in (web session, hand-off token)
// still holds, and for a chat channel who took part in the conversation.
//
// A web conversation's channel is its owner's name: a personal channel.
// It is never "shared" with the people who may write in one of its
// conversations; each conversation is shared on its own. Open streams
// ask again when Authority.Changed signals and at least every RecheckEvery
// (Stream), so that a revocation reaches them within a second.
package access

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/store"
)

// Action is what a person wants to do in a conversation.
type Action string

// The actions the decision answers.
const (
	See    Action = "see"    // read it: its page, its event stream, a tool call, a file
	List   Action = "list"   // find it in their conversation list or a search
	Write  Action = "write"  // send a message, stop a turn, !new
	Decide Action = "decide" // answer one of its cards
	Manage Action = "manage" // rename, archive, delete, share it
	Resume Action = "resume" // see its session in !sessions and take it with !resume
	Export Action = "export" // bridge export: its transcript
	Attach Action = "attach" // bridge attach: follow it and type into it
)

// Actions lists every action, in a fixed order (tests enumerate them).
var Actions = []Action{See, List, Write, Decide, Manage, Resume, Export, Attach}

// Via is the way a person reached the bridge.
type Via int

const (
	// ViaChat: a message or click on the conversation's platform;
	// Person.UserID is the platform's user id.
	ViaChat Via = iota
	// ViaWeb: the web console; Person.Name is the web user, who is their
	// own user id on the web bot.
	ViaWeb
	// ViaHandoff: a terminal; Person.Name is the handoff.users entry,
	// whose `as` maps it to a user id per bot.
	ViaHandoff
)

// Person is who acts. Valid, when set, says whether their credential (a
// web session, a hand-off token) still holds now; it is asked first.
type Person struct {
	Via    Via
	Name   string // ViaWeb: web user; ViaHandoff: handoff user
	UserID string // ViaChat: the platform's user id
	// In is the conversation a chat person acts from (a command's own
	// conversation); on a shared platform channel its members may resume
	// the channel's sessions.
	In bridges.ConversationKey
	// Except is a ledger message id not counted as taking part (the
	// command being decided, so that writing it does not qualify).
	Except string
	Valid  func(ctx context.Context) bool
}

// Conv names a conversation: its store id ("" for a web conversation not
// started yet, or not known to the caller) and its key. A web
// conversation may be named by bot and thread alone (the thread id is
// unique per bot): its channel is then its owner, and a thread id never
// used is a new conversation of the person asking.
type Conv struct {
	ID  string
	Key bridges.ConversationKey
}

// Role is a person's standing in a conversation.
type Role string

// The roles.
const (
	None        Role = ""            // no standing
	Owner       Role = "owner"       // started it (a web conversation)
	Participant Role = "participant" // shared as participant (web), or wrote in it (chat channel)
	Viewer      Role = "viewer"      // shared as viewer (web)
	Member      Role = "member"      // allowed in its chat channel, never wrote in it
	Admin       Role = "admin"       // the bot's admin (chat channels)
)

// State is a conversation's state as the decision sees it.
type State string

// The states.
const (
	Live     State = "live"
	Archived State = "archived" // a web conversation its owner archived
	Deleted  State = "deleted"  // a web conversation its owner deleted (its session may be kept)
)

// Decision is the answer.
type Decision struct {
	Allowed bool
	Role    Role
	State   State
	// Personal: the conversation lives in a channel of one person (the
	// web console's).
	Personal bool
	// UserID is the person's user id on the conversation's bot ("" when
	// they have none).
	UserID string
	// Key is the conversation's full key (a web conversation's channel,
	// its owner, filled in when the caller named it by bot and thread).
	Key bridges.ConversationKey
	// Thread is the web conversation as the person sees it; Exists is
	// false for one not started yet.
	Thread store.WebThread
	Exists bool
	// BotRefuses: the bot's access lists do not let the person talk to it
	// (the console answers "no access to this bot" rather than "no such
	// conversation").
	BotRefuses bool
	// Why says, when not Allowed, why not (for logs and refusals; it
	// names nothing of the conversation).
	Why string
}

// Store is what the decision reads (*store.Store implements it).
type Store interface {
	WebThreadFor(ctx context.Context, bot, thread, user string) (store.WebThread, error)
	WebThreadDeleted(ctx context.Context, bot, thread string) (bool, error)
	IsParticipant(ctx context.Context, convID, userID, exceptID string) (bool, error)
}

var _ Store = (*store.Store)(nil)

// Authority decides. Create it with New; safe for concurrent use.
type Authority struct {
	cfg     config.Source
	st      Store
	changes *signal
}

// New returns the authority over the config in force and the store.
func New(cfg config.Source, st Store) *Authority {
	return &Authority{cfg: cfg, st: st, changes: newSignal()}
}

// Changed tells open streams to ask again now: a share ended or changed,
// a conversation was archived or deleted, a reload applied, someone
// signed out. Cheap; never blocks.
func (a *Authority) Changed() { a.changes.fire() }

// Changes returns a channel closed at the next Changed.
func (a *Authority) Changes() <-chan struct{} { return a.changes.wait() }

// May is Decide's answer alone: false on an error (fails closed).
func (a *Authority) May(ctx context.Context, p Person, c Conv, act Action) bool {
	d, err := a.Decide(ctx, p, c, act)
	return err == nil && d.Allowed
}

// Decide says whether p may act on c now, and p's role there. An error
// is the store's: the caller refuses.
func (a *Authority) Decide(ctx context.Context, p Person, c Conv, act Action) (Decision, error) {
	d, err := a.standing(ctx, p, c)
	if err != nil {
		return Decision{}, err
	}
	if d.Why == "" {
		d.Allowed = allows(d, act, p, c)
		if !d.Allowed {
			d.Why = fmt.Sprintf("a %s of a %s conversation may not %s", orNone(d.Role), d.State, act)
		}
	}
	return d, nil
}

// standing finds p's role and c's state; Why is set when p has none.
func (a *Authority) standing(ctx context.Context, p Person, c Conv) (Decision, error) {
	d := Decision{State: Live, Key: c.Key}
	if p.Valid != nil && !p.Valid(ctx) {
		d.Why = "signed out, or the sign-in token changed"
		return d, nil
	}
	cfg := a.cfg.Current()
	bot := cfg.Bot(c.Key.Bot)
	if bot == nil {
		d.Why = "the conversation's bot is not configured"
		return d, nil
	}
	d.Personal = bot.Platform == config.PlatformWeb
	switch p.Via {
	case ViaChat:
		d.UserID = p.UserID
	case ViaWeb:
		if d.Personal {
			d.UserID = p.Name
		}
	case ViaHandoff:
		for _, u := range cfg.Handoff.Users {
			if u.Name == p.Name {
				d.UserID = u.As[bot.Name]
			}
		}
	}
	if d.UserID == "" {
		d.Why = "no user id on the conversation's bot"
		return d, nil
	}
	if d.Personal {
		d, err := a.personal(ctx, cfg, bot, d, c)
		if err == nil && d.Why == "" && !BotAllows(bot, d.Key.Channel, d.UserID) {
			d.Why, d.BotRefuses = "the bot's access lists do not allow them", d.Role == Owner
		}
		return d, err
	}
	if !BotAllows(bot, c.Key.Channel, d.UserID) {
		d.Why, d.BotRefuses = "the bot's access lists do not allow them", true
		return d, nil
	}
	switch {
	case slices.Contains(bot.Access.Admins, d.UserID):
		d.Role = Admin
	case c.ID == "":
		d.Role = Member
	default:
		wrote, err := a.st.IsParticipant(ctx, c.ID, d.UserID, p.Except)
		if err != nil {
			return d, fmt.Errorf("access: participation in %s: %w", c.ID, err)
		}
		d.Role = Member
		if wrote {
			d.Role = Participant
		}
	}
	return d, nil
}

// personal fills d for a conversation of a personal channel (the web
// console's): its owner, its shares, archived or deleted.
func (a *Authority) personal(ctx context.Context, cfg *config.Config, bot *config.Bot, d Decision, c Conv) (Decision, error) {
	if len(cfg.Web.Users) > 0 && cfg.WebUser(d.UserID) == nil {
		d.Why = "not one of web.users"
		return d, nil
	}
	th, err := a.st.WebThreadFor(ctx, bot.Name, c.Key.Thread, d.UserID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		deleted, derr := a.st.WebThreadDeleted(ctx, bot.Name, c.Key.Thread)
		if derr != nil {
			return d, fmt.Errorf("access: web conversation %s: %w", c.Key.Thread, derr)
		}
		if deleted {
			d.State = Deleted
		}
		switch {
		case c.Key.Channel == d.UserID:
			d.Role = Owner // theirs: not started yet, or deleted
		case c.Key.Channel == "" && !deleted:
			d.Role, d.Key.Channel = Owner, d.UserID // a new conversation of theirs
		}
		return d, nil
	case err != nil:
		return d, fmt.Errorf("access: web conversation %s: %w", c.Key.Thread, err)
	}
	if c.Key.Channel == "" {
		d.Key.Channel = th.Owner // named by its thread: the id alone names it
	}
	if th.Owner != d.Key.Channel {
		d.Why = "the conversation's key does not name its owner"
		return d, nil
	}
	d.Thread, d.Exists, d.Role = th, true, Role(th.Role)
	if th.Archived {
		d.State = Archived
	}
	return d, nil
}

// allows is the rule: what each role may do in each state. A personal
// channel's conversations are shared one by one; an archived one is its
// owner's alone until restored; a deleted one leaves its owner its
// session (!sessions, !resume) and nobody anything else. On a chat
// channel, its allowed members see, write and decide; hand-off and
// sessions of other channels need to have taken part (or be the bot's
// admin).
func allows(d Decision, act Action, p Person, c Conv) bool {
	if d.Personal {
		switch {
		case d.Role == Owner && d.State == Deleted:
			return act == Resume
		case d.Role == Owner:
			return true
		case d.State != Live:
			return false
		case d.Role == Participant:
			return slices.Contains([]Action{See, List, Write, Decide, Export, Attach}, act)
		case d.Role == Viewer:
			// A viewer's click reaches the cards, which decide it as for
			// anyone (the turn's requester, approvers, admins).
			return act == See || act == List || act == Decide
		}
		return false
	}
	switch d.Role {
	case Admin:
		return act != Manage
	case Participant:
		return act != Manage
	case Member:
		switch act {
		case See, List, Write, Decide:
			return true
		case Resume:
			return p.Via == ViaChat && p.In.Bot == c.Key.Bot && p.In.Channel == c.Key.Channel
		}
	}
	return false
}

// BotAllows reports whether the bot's access lists let user talk to it
// in channel (ChannelAllowed and UserAllowed).
func BotAllows(b *config.Bot, channel, user string) bool {
	return ChannelAllowed(b, channel) && UserAllowed(b, user)
}

// ChannelAllowed reports whether the bot may work in channel (an empty
// access.channels allows every channel the bot is in).
func ChannelAllowed(b *config.Bot, channel string) bool {
	return len(b.Access.Channels) == 0 || slices.Contains(b.Access.Channels, channel)
}

// UserAllowed reports whether user may talk to the bot: anyone when
// access.users is empty, else the listed users, approvers and admins.
func UserAllowed(b *config.Bot, user string) bool {
	a := b.Access
	return len(a.Users) == 0 || slices.Contains(a.Users, user) || slices.Contains(a.Approvers, user) || slices.Contains(a.Admins, user)
}

func orNone(r Role) string {
	if r == None {
		return "stranger"
	}
	return string(r)
}

// IsApprover reports whether user may decide any permission request of the
// bot (approvers and admins).
func IsApprover(b *config.Bot, user string) bool {
	return slices.Contains(b.Access.Approvers, user) || b.Access.IsAdmin(user)
}
