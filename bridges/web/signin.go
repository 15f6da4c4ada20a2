package web

import (
	"crypto/subtle"
	"net/http"
	"strings"
	"time"
)

// signinFormLifetime bounds how long a sign-in form stays usable.
const signinFormLifetime = time.Hour

// signinPage shows the token form. Its CSRF token is a random value also
// set as a cookie (double submit): a form posted from elsewhere lacks it.
// The sign-in link printed on the terminal carries the token in the URL
// fragment (#token=…), which browsers never send: the page's script fills
// the form with it and submits.
func (c *Console) signinPage(w http.ResponseWriter, r *http.Request) {
	if CurrentUser(r) != nil {
		http.Redirect(w, r, safeNext(r.URL.Query().Get("next")), http.StatusSeeOther)
		return
	}
	c.showSignin(w, r, http.StatusOK, false)
}

func (c *Console) showSignin(w http.ResponseWriter, r *http.Request, status int, failed bool) {
	tok := randomID(16)
	setCookie(w, r, signinCookie, tok, signinFormLifetime)
	next := r.URL.Query().Get("next")
	if r.Method == http.MethodPost {
		next = r.PostFormValue("next")
	}
	c.render(w, r, status, "signin", "", struct {
		CSRF, Next string
		Failed     bool
	}{tok, safeNext(next), failed})
}

// signin checks the posted token and starts a session.
func (c *Console) signin(w http.ResponseWriter, r *http.Request) {
	ck, err := r.Cookie(signinCookie)
	if err != nil || ck.Value == "" || subtle.ConstantTimeCompare([]byte(ck.Value), []byte(r.PostFormValue("csrf"))) != 1 {
		http.Error(w, "missing or wrong CSRF token: reload the sign-in page", http.StatusForbidden)
		return
	}
	u := c.users.byToken(strings.TrimSpace(r.PostFormValue("token")))
	if u == nil {
		c.log.Warn("web sign-in failed: unknown token", "remote", r.RemoteAddr)
		c.showSignin(w, r, http.StatusUnauthorized, true)
		return
	}
	setCookie(w, r, signinCookie, "", -1)
	setCookie(w, r, sessionCookie, c.sess.issue(u), SessionLifetime)
	c.log.Info("web sign-in", "user", u.Name, "role", u.Role, "remote", r.RemoteAddr)
	http.Redirect(w, r, safeNext(r.PostFormValue("next")), http.StatusSeeOther)
}

// signout ends the browser's session.
func (c *Console) signout(w http.ResponseWriter, r *http.Request) {
	setCookie(w, r, sessionCookie, "", -1)
	http.Redirect(w, r, "/signin", http.StatusSeeOther)
}

// safeNext keeps a post-sign-in redirect on this site: a path, never
// "//host" or a URL.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") || strings.ContainsAny(next, "\r\n") {
		return "/"
	}
	return next
}
