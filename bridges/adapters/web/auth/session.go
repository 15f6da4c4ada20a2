package auth

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/agentbridge/agentbridge/store"
)

// Cookie names: the session, and the sign-in form's double-submit token.
const (
	SessionCookie = "ab_session"
	SigninCookie  = "ab_signin" // double-submit CSRF token of the sign-in form
)

// SessionLifetime is how long a sign-in lasts.
const SessionLifetime = 7 * 24 * time.Hour

// sessionsPerUser is how many sessions a user keeps at most: signing in
// once more ends the oldest.
const sessionsPerUser = 20

// Session is what a signed-in request carries. A session cookie is signed
// and names a random secret; the session itself is kept on the server (in
// the store's web_sessions, under the secret's SHA-256), so that signing
// out ends it for every copy of the cookie. Changing a user's token ends
// their sessions (deleted at the next start, refused until then), and
// a new session key (LoadSessionKey) ends everybody's.
type Session struct {
	User  *User
	CSRF  string // the CSRF token of this session
	Value string // the cookie value
}

type sessionPayload struct {
	User    string `json:"u"`
	Expires int64  `json:"e"`
	Secret  string `json:"n"` // random; its SHA-256 keys the session on the server
	Token   []byte `json:"t"` // the user's token fingerprint
}

// Store keeps the sessions on the server (implemented by *store.Store:
// the web_sessions table). Sessions needs nothing else of the store.
type Store interface {
	// AddWebSession records s, ending the user's oldest sessions beyond
	// keep.
	AddWebSession(ctx context.Context, s store.WebSession, keep int) error
	// WebSession returns the session with id, or an error wrapping
	// store.ErrNotFound.
	WebSession(ctx context.Context, id []byte) (store.WebSession, error)
	// DeleteWebSession ends the session with id (none: no error).
	DeleteWebSession(ctx context.Context, id []byte) error
	// KeepWebSessions deletes every session whose user is not in current
	// or whose token fingerprint differs, and says how many it deleted.
	KeepWebSessions(ctx context.Context, current map[string][]byte) (int, error)
}

var (
	_ Store    = (*store.Store)(nil)
	_ KeyStore = (*store.Store)(nil)
)

// Sessions signs and checks session cookies with its key and keeps the
// sessions in its Store. Safe for concurrent use.
type Sessions struct {
	key   []byte
	users *Users
	st    Store
	log   *slog.Logger
	now   func() time.Time
}

// NewSessions returns the sessions of users, signed with key (at least 32
// bytes), kept in st, on the clock now.
func NewSessions(key []byte, users *Users, st Store, log *slog.Logger, now func() time.Time) *Sessions {
	return &Sessions{key: key, users: users, st: st, log: log, now: now}
}

func (s *Sessions) mac(parts ...string) []byte {
	m := hmac.New(sha256.New, s.key)
	for _, p := range parts {
		m.Write([]byte(p))
		m.Write([]byte{0})
	}
	return m.Sum(nil)
}

// sessionID is the server-side key of the session whose secret is secret.
func sessionID(secret string) []byte {
	sum := sha256.Sum256([]byte(secret))
	return sum[:]
}

// Issue starts a session for u and returns its cookie value.
func (s *Sessions) Issue(ctx context.Context, u *User) (string, error) {
	now := s.now()
	secret := randomHex(32)
	exp := now.Add(SessionLifetime)
	fp := u.fingerprint(s.key)
	ws := store.WebSession{ID: sessionID(secret), User: u.Name, TokenFP: fp, Created: now, Expires: exp}
	if err := s.st.AddWebSession(ctx, ws, sessionsPerUser); err != nil {
		return "", fmt.Errorf("start a session for %s: %w", u.Name, err)
	}
	p, _ := json.Marshal(sessionPayload{User: u.Name, Expires: exp.Unix(), Secret: secret, Token: fp})
	body := base64.RawURLEncoding.EncodeToString(p)
	return body + "." + base64.RawURLEncoding.EncodeToString(s.mac("session", body)), nil
}

// payload returns the signed payload of a cookie value, or false when it is
// forged or expired, or its user or token changed.
func (s *Sessions) payload(value string) (sessionPayload, *User, bool) {
	body, sig, ok := strings.Cut(value, ".")
	if !ok {
		return sessionPayload{}, nil, false
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(got, s.mac("session", body)) {
		return sessionPayload{}, nil, false
	}
	raw, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil {
		return sessionPayload{}, nil, false
	}
	var p sessionPayload
	if json.Unmarshal(raw, &p) != nil || s.now().Unix() >= p.Expires || p.Secret == "" {
		return sessionPayload{}, nil, false
	}
	u := s.users.ByName(p.User)
	if u == nil || !hmac.Equal(p.Token, u.fingerprint(s.key)) {
		return sessionPayload{}, nil, false
	}
	return p, u, true
}

// Check returns the session of a cookie value, or nil when it is forged,
// expired, ended on the server (signed out), or its user or token changed.
// A store error counts as no session.
func (s *Sessions) Check(ctx context.Context, value string) *Session {
	p, u, ok := s.payload(value)
	if !ok {
		return nil
	}
	ws, err := s.st.WebSession(ctx, sessionID(p.Secret))
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			s.log.Error("web session lookup failed: treated as signed out", "err", err)
		}
		return nil
	}
	if ws.User != u.Name || !hmac.Equal(ws.TokenFP, p.Token) || !s.now().Before(ws.Expires) {
		return nil
	}
	return &Session{User: u, Value: value, CSRF: s.csrfFor(value)}
}

// End ends the session of a cookie value on the server: no copy of the
// cookie opens the console any more.
func (s *Sessions) End(ctx context.Context, value string) error {
	p, _, ok := s.payload(value)
	if !ok {
		return nil // not a session of ours: nothing to end
	}
	if err := s.st.DeleteWebSession(ctx, sessionID(p.Secret)); err != nil {
		return fmt.Errorf("end the session of %s: %w", p.User, err)
	}
	return nil
}

// EndStale deletes the sessions of users no longer configured, or whose
// token changed since they signed in, and returns how many it deleted.
func (s *Sessions) EndStale(ctx context.Context) (int, error) {
	list := s.users.Snapshot()
	current := make(map[string][]byte, len(list))
	for _, u := range list {
		current[u.Name] = u.fingerprint(s.key)
	}
	n, err := s.st.KeepWebSessions(ctx, current)
	if err != nil {
		return 0, fmt.Errorf("end stale web sessions: %w", err)
	}
	return n, nil
}

// csrfFor is the CSRF token bound to a cookie value.
func (s *Sessions) csrfFor(value string) string {
	return base64.RawURLEncoding.EncodeToString(s.mac("csrf", value)[:18])
}

type ctxKey struct{}

// WithSession stores sess in ctx.
func WithSession(ctx context.Context, sess *Session) context.Context {
	return context.WithValue(ctx, ctxKey{}, sess)
}

// SessionOf returns the request's session, or nil when not signed in.
func SessionOf(r *http.Request) *Session {
	s, _ := r.Context().Value(ctxKey{}).(*Session)
	return s
}

// CurrentUser returns the signed-in user of r, or nil.
func CurrentUser(r *http.Request) *User {
	if s := SessionOf(r); s != nil {
		return s.User
	}
	return nil
}

// CSRFToken returns the token forms of r's session must send back (field
// "csrf" or header X-CSRF-Token), or "" when not signed in.
func CSRFToken(r *http.Request) string {
	if s := SessionOf(r); s != nil {
		return s.CSRF
	}
	return ""
}

// CSRFOK reports whether r carries the session's CSRF token.
func CSRFOK(r *http.Request, want string) bool {
	got := r.Header.Get("X-CSRF-Token")
	if got == "" {
		got = r.PostFormValue("csrf")
	}
	return want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// secureRequest reports whether the browser reached us over https: TLS
// here, or a reverse proxy saying so. Cookies are then marked Secure.
func secureRequest(r *http.Request) bool {
	return r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
}

// SetCookie sets an HttpOnly, SameSite=Strict cookie on path "/" (Secure
// over https); maxAge < 0 deletes it.
func SetCookie(w http.ResponseWriter, r *http.Request, name, value string, maxAge time.Duration) {
	c := &http.Cookie{
		Name: name, Value: value, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: secureRequest(r),
	}
	if maxAge < 0 {
		c.MaxAge = -1
	} else {
		c.MaxAge = int(maxAge.Seconds())
	}
	http.SetCookie(w, c)
}
