package web

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"time"
)

// Cookie names.
const (
	sessionCookie = "ab_session"
	signinCookie  = "ab_signin" // double-submit CSRF token of the sign-in form
)

// SessionLifetime is how long a sign-in lasts.
const SessionLifetime = 7 * 24 * time.Hour

// session is what a signed-in request carries. Sessions are stateless
// signed cookies: a restart keeps people signed in; changing a user's token
// or deleting SessionKeyFile ends their sessions.
type session struct {
	user  *User
	csrf  string // the CSRF token of this session
	value string // the cookie value
}

type sessionPayload struct {
	User    string `json:"u"`
	Expires int64  `json:"e"`
	Nonce   string `json:"n"`
	Token   []byte `json:"t"` // the user's token fingerprint
}

// sessions signs and checks session cookies with key.
type sessions struct {
	key   []byte
	users *users
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

// issue makes a cookie value for u.
func (s *sessions) issue(u *User) string {
	p, _ := json.Marshal(sessionPayload{User: u.Name, Expires: s.now().Add(SessionLifetime).Unix(), Nonce: randomID(8), Token: u.fingerprint(s.key)})
	body := base64.RawURLEncoding.EncodeToString(p)
	return body + "." + base64.RawURLEncoding.EncodeToString(s.mac("session", body))
}

// check returns the session of a cookie value, or nil when it is forged,
// expired, or its user or token changed.
func (s *sessions) check(value string) *session {
	body, sig, ok := strings.Cut(value, ".")
	if !ok {
		return nil
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(got, s.mac("session", body)) {
		return nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil {
		return nil
	}
	var p sessionPayload
	if json.Unmarshal(raw, &p) != nil || s.now().Unix() >= p.Expires {
		return nil
	}
	u := s.users.byName(p.User)
	if u == nil || !hmac.Equal(p.Token, u.fingerprint(s.key)) {
		return nil
	}
	return &session{user: u, value: value, csrf: s.csrfFor(value)}
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
