package handoff

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/access"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/store"
)

// principal is who a request comes from: a handoff user, as the user id
// config maps them to on the bot concerned (userID, once known).
type principal struct {
	cfg    *config.Config
	user   *config.HandoffUser
	userID string
}

// refusal is a request refused with an HTTP status and a message the
// terminal prints as is.
type refusal struct {
	status int
	msg    string
}

func (r *refusal) Error() string { return r.msg }

func refuse(status int, format string, args ...any) *refusal {
	return &refusal{status: status, msg: fmt.Sprintf(format, args...)}
}

// fail answers w with err: a refusal's status and message, or 500 with a
// generic message (the details go to the log).
// A refusal is recorded in the audit log.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	if rf, ok := isRefusal(err); ok {
		s.auditRefusal(r.Context(), rf)
		http.Error(w, rf.msg, rf.status)
		return
	}
	s.log.ErrorContext(r.Context(), "handoff request failed", "path", r.URL.Path, "err", err)
	http.Error(w, "the bridge could not do this (see its log)", http.StatusInternalServerError)
}

// authenticate finds the handoff user whose token the request carries
// ("Authorization: Bearer TOKEN"). It fails closed: no users configured,
// no token or an unknown one is refused.
func (s *Server) authenticate(r *http.Request) (principal, error) {
	cfg := s.opts.Config.Current()
	if len(cfg.Handoff.Users) == 0 {
		return principal{}, refuse(http.StatusForbidden, "terminal hand-off is off: the bridge's config has no handoff.users")
	}
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || token == "" {
		return principal{}, refuse(http.StatusUnauthorized, "no handoff token: set %s to your token from config handoff.users", TokenEnv)
	}
	u := cfg.HandoffUserByToken(token)
	if u == nil {
		s.log.WarnContext(r.Context(), "handoff refused: unknown token", "remote", r.RemoteAddr, "path", r.URL.Path)
		return principal{}, refuse(http.StatusUnauthorized, "unknown handoff token (check %s against config handoff.users)", TokenEnv)
	}
	trailOf(r.Context()).ev.Person = u.Name
	return principal{cfg: cfg, user: u}, nil
}

// onBot sets p's user id for bot, refusing a person the config does not
// map to that bot or whom the bot's access lists do not allow in channel.
func (p principal) onBot(bot *config.Bot, allowed func(bridges.ConversationKey, string) bool, channel string) (principal, error) {
	id := p.user.As[bot.Name]
	if id == "" {
		return p, refuse(http.StatusForbidden, "%s has no user id for bot %s (config handoff.users[].as)", p.user.Name, bot.Name)
	}
	if !allowed(bridges.ConversationKey{Bot: bot.Name, Channel: channel}, id) {
		return p, refuse(http.StatusForbidden, "%s (%s) may not talk to bot %s in %s (its access lists)", p.user.Name, id, bot.Name, channel)
	}
	p.userID = id
	return p, nil
}

// person is p for the access decision: its token must still name the
// same handoff user in the config in force at each decision (a reload
// that removes them or changes their token ends what they have open).
func (s *Server) person(p principal) access.Person {
	token, name := p.user.Token, p.user.Name
	return access.Person{Via: access.ViaHandoff, Name: name, Valid: func(context.Context) bool {
		u := s.opts.Config.Current().HandoffUserByToken(token)
		return u != nil && u.Name == name
	}}
}

// conversation loads conversation id and asks the access decision
// (package access) whether p may act on it now (act: export, attach).
// It returns p with its user id on the conversation's bot.
func (s *Server) conversation(ctx context.Context, p principal, id string, act access.Action) (store.Conversation, principal, error) {
	if id == "" {
		return store.Conversation{}, p, refuse(http.StatusBadRequest, "name a conversation (its id, as !handoff shows it)")
	}
	conv, err := s.opts.Store.ConversationByID(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return conv, p, refuse(http.StatusNotFound, "no conversation %q", id)
	}
	if err != nil {
		return conv, p, fmt.Errorf("load conversation %s: %w", id, err)
	}
	onConversation(ctx, conv)
	bot := p.cfg.Bot(conv.Key.Bot)
	if bot == nil {
		return conv, p, refuse(http.StatusNotFound, "conversation %s belongs to bot %s, which is not configured", id, conv.Key.Bot)
	}
	trailOf(ctx).ev.UserID = p.user.As[bot.Name]
	if p, err = p.onBot(bot, s.opts.Core.Allowed, conv.Key.Channel); err != nil {
		return conv, p, err
	}
	d, err := s.access.Decide(ctx, s.person(p), access.Conv{ID: conv.ID, Key: bridges.ConversationKey(conv.Key)}, act)
	if err != nil {
		return conv, p, fmt.Errorf("decide access to %s: %w", id, err)
	}
	if !d.Allowed {
		s.log.WarnContext(ctx, "handoff refused: no access now", "person", p.user.Name, "user", p.userID, "conversation", id,
			"action", act, "why", d.Why)
		return conv, p, refuse(http.StatusForbidden, "%s (%s) does not take part in conversation %s: only its participants and the bot's admins may continue it",
			p.user.Name, p.userID, id)
	}
	return conv, p, nil
}
