package web

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/agentbridge/agentbridge/config"
)

// maxBody caps a POST body: an image upload (maxUploadBytes) and its form.
const maxBody = maxUploadBytes + 64<<10

// contentSecurityPolicy allows scripts, styles, images and connections from
// this origin only: even markup that slipped past the sanitiser could not
// run inline script or load anything from elsewhere.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// routes builds the console's handler: security headers, cross-origin
// protection and the session around every route.
func (c *Console) routes() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /static/", c.static)
	mux.HandleFunc("GET /signin", c.signinPage)
	mux.Handle("POST /signin", http.HandlerFunc(c.signin))
	mux.Handle("POST /signout", c.requireUser(c.csrf(http.HandlerFunc(c.signout))))

	mux.Handle("GET /{$}", c.requireUser(http.HandlerFunc(c.home)))
	mux.Handle("GET /new", c.requireUser(http.HandlerFunc(c.newConversation)))
	mux.Handle("GET /chat/{thread}", c.requireUser(http.HandlerFunc(c.chatPage)))
	mux.Handle("GET /chat/{thread}/events", c.requireUser(http.HandlerFunc(c.events)))
	mux.Handle("POST /chat/{thread}/send", c.requireUser(c.csrf(http.HandlerFunc(c.send))))
	mux.Handle("POST /chat/{thread}/action", c.requireUser(c.csrf(http.HandlerFunc(c.action))))
	mux.Handle("POST /chat/{thread}/stop", c.requireUser(c.csrf(http.HandlerFunc(c.stop))))
	mux.Handle("GET /files/{id}", c.requireUser(http.HandlerFunc(c.file)))

	// Operator pages: admins only.
	c.adminRoutes(mux)

	return securityHeaders(http.NewCrossOriginProtection().Handler(c.withSession(limitBody(mux))))
}

// securityHeaders sets headers every response gets.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		if !strings.HasPrefix(r.URL.Path, "/static/") {
			h.Set("Cache-Control", "no-store")
		}
		next.ServeHTTP(w, r)
	})
}

// limitBody caps request bodies at maxBody.
func limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		}
		next.ServeHTTP(w, r)
	})
}

// withSession attaches the session of a valid cookie to the request.
func (c *Console) withSession(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ck, err := r.Cookie(sessionCookie); err == nil {
			if s := c.sess.check(r.Context(), ck.Value); s != nil {
				r = r.WithContext(withSession(r.Context(), s))
			}
		}
		next.ServeHTTP(w, r)
	})
}

// requireUser lets signed-in people through; others are sent to the
// sign-in page (GET) or refused with 401.
func (c *Console) requireUser(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if CurrentUser(r) != nil {
			next.ServeHTTP(w, r)
			return
		}
		if r.Method == http.MethodGet && r.Header.Get("Accept") != "text/event-stream" {
			http.Redirect(w, r, "/signin?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
			return
		}
		http.Error(w, "sign in first", http.StatusUnauthorized)
	})
}

// RequireRole lets through signed-in people with role (config.RoleAdmin
// or config.RoleUser, which every signed-in person has) and answers 403
// to the others; people not signed in go to the sign-in page.
func (c *Console) RequireRole(role string, next http.Handler) http.Handler {
	return c.requireUser(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u := CurrentUser(r); role == config.RoleAdmin && !u.Admin() {
			c.log.Info("admin page refused", "user", u.Name, "path", r.URL.Path)
			c.errorPage(w, r, http.StatusForbidden, "This page is for admins only.")
			return
		}
		next.ServeHTTP(w, r)
	}))
}

// csrf refuses a POST that lacks the session's CSRF token (form field
// "csrf" or header X-CSRF-Token). It wraps handlers behind requireUser.
func (c *Console) csrf(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data") {
			if err := r.ParseMultipartForm(maxBody); err != nil {
				http.Error(w, "bad form: "+err.Error(), http.StatusBadRequest)
				return
			}
		}
		if !csrfOK(r, CSRFToken(r)) {
			c.log.Warn("request refused: missing or wrong CSRF token", "user", CurrentUser(r).Name, "path", r.URL.Path)
			http.Error(w, "missing or wrong CSRF token: reload the page", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// wantsJSON reports a request made by the page's script (fetch), which
// wants a status rather than a redirect.
func wantsJSON(r *http.Request) bool {
	return r.Header.Get("X-Requested-With") == "fetch"
}
