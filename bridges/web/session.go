package web

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

// Cookie names.
const (
	sessionCookie = "ab_session"
	signinCookie  = "ab_signin" // double-submit CSRF token of the sign-in form
)

// SessionLifetime is how long a sign-in lasts.
const SessionLifetime = 7 * 24 * time.Hour

// sessionsPerUser is how many sessions a user keeps at most: signing in
// once more ends the oldest.
const sessionsPerUser = 20

// session is what a signed-in request carries. A session cookie is signed
// and names a random secret; the session itself is kept on the server (in
// the store's web_sessions, under the secret's SHA-256), so that signing
// out ends it for every copy of the cookie. Changing a user's token ends
// their sessions (deleted at the next start, refused until then), and
// deleting SessionKeyFile ends everybody's.
type session struct {
	user  *User
	csrf  string // the CSRF token of this session
	value string // the cookie value
}

type sessionPayload struct {
	User    string `json:"u"`
	Expires int64  `json:"e"`
	Secret  string `json:"n"` // random; its SHA-256 keys the session on the server
	Token   []byte `json:"t"` // the user's token fingerprint
}

// sessions signs and checks session cookies with key and keeps the
// sessions in st.
type sessions struct {
	key   []byte
	users *users
	st    *store.Store
	log   *slog.Logger
	now   func() time.Time
}

func (s *sessions) mac(parts ...string) []byte {
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

// issue starts a session for u and returns its cookie value.
func (s *sessions) issue(ctx context.Context, u *User) (string, error) {
	now := s.now()
	secret := randomID(32)
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
func (s *sessions) payload(value string) (sessionPayload, *User, bool) {
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
	u := s.users.byName(p.User)
	if u == nil || !hmac.Equal(p.Token, u.fingerprint(s.key)) {
		return sessionPayload{}, nil, false
	}
	return p, u, true
}

// check returns the session of a cookie value, or nil when it is forged,
// expired, ended on the server (signed out), or its user or token changed.
// A store error counts as no session.
func (s *sessions) check(ctx context.Context, value string) *session {
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
	return &session{user: u, value: value, csrf: s.csrfFor(value)}
}

// end ends the session of a cookie value on the server: no copy of the
// cookie opens the console any more.
func (s *sessions) end(ctx context.Context, value string) error {
	p, _, ok := s.payload(value)
	if !ok {
		return nil // not a session of ours: nothing to end
	}
	if err := s.st.DeleteWebSession(ctx, sessionID(p.Secret)); err != nil {
		return fmt.Errorf("end the session of %s: %w", p.User, err)
	}
	return nil
}

// endStale deletes the sessions of users no longer configured, or whose
// token changed since they signed in, and returns how many it deleted.
func (s *sessions) endStale(ctx context.Context) (int, error) {
	list := s.users.snapshot()
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
func (s *sessions) csrfFor(value string) string {
	return base64.RawURLEncoding.EncodeToString(s.mac("csrf", value)[:18])
}

type ctxKey struct{}

// withSession stores sess in ctx.
func withSession(ctx context.Context, sess *session) context.Context {
	return context.WithValue(ctx, ctxKey{}, sess)
}

// sessionOf returns the request's session, or nil when not signed in.
func sessionOf(r *http.Request) *session {
	s, _ := r.Context().Value(ctxKey{}).(*session)
	return s
}

// CurrentUser returns the signed-in user of r, or nil.
func CurrentUser(r *http.Request) *User {
	if s := sessionOf(r); s != nil {
		return s.user
	}
	return nil
}

// CSRFToken returns the token forms of r's session must send back (field
// "csrf" or header X-CSRF-Token), or "" when not signed in.
func CSRFToken(r *http.Request) string {
	if s := sessionOf(r); s != nil {
		return s.csrf
	}
	return ""
}

// csrfOK reports whether r carries the session's CSRF token.
func csrfOK(r *http.Request, want string) bool {
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

// setCookie sets an HttpOnly, SameSite=Strict cookie on path "/" (Secure
// over https); maxAge < 0 deletes it.
func setCookie(w http.ResponseWriter, r *http.Request, name, value string, maxAge time.Duration) {
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
