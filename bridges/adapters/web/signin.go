package web

import (
	"crypto/subtle"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/agentbridge/agentbridge/bridges/adapters/web/auth"
)

// signinTokenRE matches a sign-in form token (randomID(16)).
var signinTokenRE = regexp.MustCompile(`^[0-9a-f]{32}$`)

// signinFormLifetime bounds how long a sign-in form stays usable.
const signinFormLifetime = time.Hour

// signinPage shows the token form. Its CSRF token is a random value also
// set as a cookie (double submit): a form posted from elsewhere lacks it.
// The sign-in link printed on the terminal carries the token in the URL
// fragment (#token=…), which browsers never send: the page's script fills
// the form with it and submits.
func (c *Console) signinPage(w http.ResponseWriter, r *http.Request) {
	if auth.CurrentUser(r) != nil {
		http.Redirect(w, r, safeNext(r.URL.Query().Get("next")), http.StatusSeeOther)
		return
	}
	c.showSignin(w, r, http.StatusOK, signinNotice{})
}

// signinNotice is what the sign-in page says above the form.
type signinNotice struct {
	Expired      bool // the form was too old (or from another browser session): sign in again
	Failed       bool // the token was wrong
	RetryMinutes int  // > 0: too many failed sign-ins; try again in this many minutes
}

func (c *Console) showSignin(w http.ResponseWriter, r *http.Request, status int, notice signinNotice) {
	// One form token per browser: a second sign-in tab reuses the first's,
	// so that both forms work (each page used to replace the cookie, and
	// the older tab's form was refused).
	tok := randomID(16)
	if ck, err := r.Cookie(auth.SigninCookie); err == nil && signinTokenRE.MatchString(ck.Value) {
		tok = ck.Value
	}
	auth.SetCookie(w, r, auth.SigninCookie, tok, signinFormLifetime)
	next := r.URL.Query().Get("next")
	if r.Method == http.MethodPost {
		next = r.PostFormValue("next")
	}
	c.render(w, r, status, "signin", "", struct {
		CSRF, Next string
		signinNotice
	}{tok, safeNext(next), notice})
}

// signin checks the posted token and starts a session. Past the limits of
// failed sign-ins (signinLimiter) the token is not even looked at: the
// answer is 429 with Retry-After.
func (c *Console) signin(w http.ResponseWriter, r *http.Request) {
	ck, err := r.Cookie(auth.SigninCookie)
	if err != nil || ck.Value == "" || subtle.ConstantTimeCompare([]byte(ck.Value), []byte(r.PostFormValue("csrf"))) != 1 {
		if auth.CurrentUser(r) != nil { // signed in meanwhile (in another tab)
			http.Redirect(w, r, safeNext(r.PostFormValue("next")), http.StatusSeeOther)
			return
		}
		// An old form (its cookie expired or was ended by a sign-in in
		// another tab): a fresh form, never an error page. The token is not
		// looked at, so this is no way around the limit on failed sign-ins.
		c.showSignin(w, r, http.StatusForbidden, signinNotice{Expired: true})
		return
	}
	addr := auth.ClientAddr(r, c.trusted)
	if ok, wait := c.limit.Allow(addr); !ok {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
		c.log.Debug("web sign-in refused: too many failed sign-ins", "addr", addr, "remote", r.RemoteAddr, "retry_after", wait.Round(time.Second))
		c.showSignin(w, r, http.StatusTooManyRequests, signinNotice{RetryMinutes: int(math.Ceil(wait.Minutes()))})
		return
	}
	u := c.users.ByToken(strings.TrimSpace(r.PostFormValue("token")))
	if u == nil {
		c.limit.Failed(addr)
		c.log.Warn("web sign-in failed: unknown token", "addr", addr, "remote", r.RemoteAddr)
		c.showSignin(w, r, http.StatusUnauthorized, signinNotice{Failed: true})
		return
	}
	value, err := c.sess.Issue(r.Context(), u)
	if err != nil {
		c.log.Error("web sign-in: no session", "user", u.Name, "err", err)
		c.errorPage(w, r, http.StatusInternalServerError, "Signing in failed: the bridge could not record the session. Try again.")
		return
	}
	auth.SetCookie(w, r, auth.SigninCookie, "", -1)
	auth.SetCookie(w, r, auth.SessionCookie, value, auth.SessionLifetime)
	c.log.Info("web sign-in", "user", u.Name, "role", u.Role, "remote", r.RemoteAddr)
	http.Redirect(w, r, safeNext(r.PostFormValue("next")), http.StatusSeeOther)
}

// signout ends the browser's session on the server (so that a copy of the
// cookie stops working too) and deletes the cookie.
func (c *Console) signout(w http.ResponseWriter, r *http.Request) {
	if err := c.sess.End(r.Context(), auth.SessionOf(r).Value); err != nil {
		c.log.Error("web sign-out failed", "user", auth.CurrentUser(r).Name, "err", err)
		c.errorPage(w, r, http.StatusInternalServerError, "Signing out failed: the session could not be ended. Try again.")
		return
	}
	c.access.Changed() // the session's open streams end
	auth.SetCookie(w, r, auth.SessionCookie, "", -1)
	http.Redirect(w, r, "/signin", http.StatusSeeOther)
}

// safeNext keeps a post-sign-in redirect on this site: next is returned
// unchanged when it is a path of this site (sitePath), else "/" — never a
// URL with a scheme or host, never "//host", "/\host" or a path a
// browser would turn into one by dropping a tab or newline.
func safeNext(next string) string {
	if !sitePath(next) {
		return "/"
	}
	return next
}

// maxNextLen bounds a next path: longer ones go to the default page.
const maxNextLen = 2048

// sitePath reports whether p is an absolute path (with an optional query)
// on this site. p itself must be printable ASCII — no control character
// such as tab, CR or LF (browsers drop them from a Location, so "/\t/evil"
// becomes "//evil"), no space, no non-ASCII — and contain no backslash
// (browsers read it as a slash). It must parse with no scheme, host, user
// or opaque part, and its path must start with one slash, not two. Its
// path decoded again and again (up to a few levels; deeper encodings are
// refused) must do the same and hold no control character or backslash,
// so "/%2F%2Fevil", "/%09/evil" and "/%255Cevil" are refused too.
func sitePath(p string) bool {
	if len(p) > maxNextLen || !strings.HasPrefix(p, "/") {
		return false
	}
	for i := 0; i < len(p); i++ {
		if c := p[i]; c <= ' ' || c >= 0x7f || c == '\\' {
			return false
		}
	}
	u, err := url.Parse(p)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" {
		return false
	}
	path := u.EscapedPath()
	for range 4 {
		dec, err := url.PathUnescape(path)
		if err != nil || !strings.HasPrefix(dec, "/") || strings.HasPrefix(dec, "//") || strings.ContainsRune(dec, '\\') {
			return false
		}
		for _, r := range dec {
			if unicode.IsControl(r) || r == utf8.RuneError {
				return false
			}
		}
		if dec == path {
			return true
		}
		path = dec
	}
	return false
}
