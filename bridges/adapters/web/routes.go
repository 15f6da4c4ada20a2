package web

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/agentbridge/agentbridge/bridges/adapters/web/admin"
	"github.com/agentbridge/agentbridge/bridges/adapters/web/auth"
	"github.com/agentbridge/agentbridge/config"
)

// maxBody caps a POST body: an upload (web.max_upload) and its form.
func (c *Console) maxBody() int64 { return c.maxUpload + 64<<10 }

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
	mux.Handle("GET /threads", c.requireUser(http.HandlerFunc(c.threads)))
	mux.Handle("GET /events", c.requireUser(http.HandlerFunc(c.listEvents)))
	mux.Handle("POST /chat/{thread}/rename", c.requireUser(c.csrf(http.HandlerFunc(c.rename))))
	mux.Handle("POST /chat/{thread}/archive", c.requireUser(c.csrf(http.HandlerFunc(c.archive))))
	mux.Handle("POST /chat/{thread}/delete", c.afterStart(c.requireUser(c.csrf(http.HandlerFunc(c.deleteConversation)))))
	mux.Handle("POST /chat/{thread}/share", c.requireUser(c.csrf(http.HandlerFunc(c.share))))
	mux.Handle("GET /new", c.requireUser(http.HandlerFunc(c.newConversation)))
	mux.Handle("GET /chat/{thread}", c.requireUser(http.HandlerFunc(c.chatPage)))
	mux.Handle("GET /chat/{thread}/events", c.requireUser(http.HandlerFunc(c.events)))
	mux.Handle("POST /chat/{thread}/send", c.afterStart(c.requireUser(c.csrf(http.HandlerFunc(c.send)))))
	mux.Handle("POST /chat/{thread}/action", c.afterStart(c.requireUser(c.csrf(http.HandlerFunc(c.action)))))
	mux.Handle("POST /chat/{thread}/stop", c.afterStart(c.requireUser(c.csrf(http.HandlerFunc(c.stop)))))
	mux.Handle("GET /chat/{thread}/tools/{id}", c.requireUser(http.HandlerFunc(c.tool)))
	mux.Handle("GET /files/{id}", c.requireUser(http.HandlerFunc(c.file)))

	// Operator pages: admins only.
	c.adminRoutes(mux)
	// Any other page: a 404 in the console's own style, not Go's plain text.
	mux.HandleFunc("GET /", func(w http.ResponseWriter, r *http.Request) {
		c.errorPage(w, r, http.StatusNotFound, "There is no page at this address.")
	})

	return securityHeaders(http.NewCrossOriginProtection().Handler(c.withSession(c.limitBody(mux))))
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
func (c *Console) limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, c.maxBody())
		}
		next.ServeHTTP(w, r)
	})
}

// withSession attaches the session of a valid cookie to the request.
func (c *Console) withSession(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ck, err := r.Cookie(auth.SessionCookie); err == nil {
			if s := c.sess.Check(r.Context(), ck.Value); s != nil {
				r = r.WithContext(auth.WithSession(r.Context(), s))
			}
		}
		next.ServeHTTP(w, r)
	})
}

// requireUser lets signed-in people through; others are sent to the
// sign-in page (GET) or refused with 401.
func (c *Console) requireUser(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if auth.CurrentUser(r) != nil {
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
		if u := auth.CurrentUser(r); role == config.RoleAdmin && !u.Admin() {
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
			if err := r.ParseMultipartForm(c.maxBody()); err != nil {
				http.Error(w, "bad form: "+err.Error(), http.StatusBadRequest)
				return
			}
		}
		if !auth.CSRFOK(r, auth.CSRFToken(r)) {
			c.log.Warn("request refused: missing or wrong CSRF token", "user", auth.CurrentUser(r).Name, "path", r.URL.Path)
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

//go:embed templates
var templatesFS embed.FS

//go:embed static
var staticFS embed.FS

// page is what every template gets: the layout reads User, CSRF, Demo and
// Pending; the page's own "content" reads Data.
type page struct {
	User    *auth.User
	CSRF    string
	Demo    bool
	Nav     string // the active navigation entry: "chat" or "admin"
	Pending int    // open approvals, for an admin's header badge
	Data    any
}

// templateFuncs are available to every template.
var templateFuncs = template.FuncMap{
	"when": timeTag,
}

// timeTag renders t as <time datetime="…"> with the UTC time as its text;
// the page's script shows it in the viewer's own zone.
func timeTag(t time.Time) template.HTML {
	if t.IsZero() {
		return ""
	}
	u := t.UTC()
	return template.HTML(`<time datetime="` + u.Format(time.RFC3339) + `">` + u.Format("2006-01-02 15:04:05") + ` UTC</time>`) //nolint:gosec // digits and punctuation only
}

// parsePages parses each templates/*.html page, the console's and the
// operator pages' (admin.Templates), together with the layout and the
// partials of both, keyed by file name without ".html".
func parsePages() (map[string]*template.Template, error) {
	base, err := template.New("").Funcs(templateFuncs).ParseFS(templatesFS, "templates/layout.html", "templates/partials/*.html")
	if err != nil {
		return nil, fmt.Errorf("parse layout: %w", err)
	}
	if base, err = base.ParseFS(admin.Templates(), "templates/partials/*.html"); err != nil {
		return nil, fmt.Errorf("parse operator partials: %w", err)
	}
	pages := map[string]*template.Template{}
	for _, fsys := range []fs.FS{templatesFS, admin.Templates()} {
		files, err := fs.Glob(fsys, "templates/*.html")
		if err != nil {
			return nil, fmt.Errorf("list templates: %w", err)
		}
		for _, f := range files {
			name := strings.TrimSuffix(path.Base(f), ".html")
			if name == "layout" {
				continue
			}
			t, err := base.Clone()
			if err != nil {
				return nil, fmt.Errorf("template %s: %w", name, err)
			}
			if t, err = t.ParseFS(fsys, f); err != nil {
				return nil, fmt.Errorf("parse template %s: %w", name, err)
			}
			pages[name] = t
		}
	}
	return pages, nil
}

// render writes page name (templates/name.html) inside the layout with
// status. nav names the active navigation entry.
func (c *Console) render(w http.ResponseWriter, r *http.Request, status int, name, nav string, data any) {
	t := c.pages[name]
	if t == nil {
		c.log.Error("no such page template", "page", name)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	var buf bytes.Buffer
	p := page{User: auth.CurrentUser(r), CSRF: auth.CSRFToken(r), Demo: c.demo, Nav: nav, Data: data}
	if p.User.Admin() {
		p.Pending = c.pendingApprovals(r)
	}
	if err := t.ExecuteTemplate(&buf, "layout", p); err != nil {
		c.log.Error("render page", "page", name, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = buf.WriteTo(w)
}

// errorPage shows msg with status in the layout.
func (c *Console) errorPage(w http.ResponseWriter, r *http.Request, status int, msg string) {
	c.render(w, r, status, "error", "", struct {
		Status int
		Text   string
		Msg    string
	}{status, http.StatusText(status), msg})
}

// staticHandler serves the embedded static/ files under /static/,
// /static/code.css, the colours of highlighted code (format.go), and
// /static/icons/NAME.svg, the icons drawn for emoji (emoji.go).
func staticHandler(icons map[string][]byte) http.Handler {
	sub, err := fs.Sub(staticFS, "static")
	if err != nil {
		panic(err) // the embedded tree always has static/
	}
	css, err := codeCSS()
	if err != nil {
		panic(err) // the styles are compiled into chroma
	}
	fsrv := http.StripPrefix("/static/", http.FileServerFS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		if r.URL.Path == "/static/code.css" {
			w.Header().Set("Content-Type", "text/css; charset=utf-8")
			_, _ = w.Write(css)
			return
		}
		if name, ok := strings.CutPrefix(r.URL.Path, "/static/icons/"); ok {
			svg, found := icons[strings.TrimSuffix(name, ".svg")]
			if !found || !strings.HasSuffix(name, ".svg") {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("Content-Type", "image/svg+xml")
			_, _ = w.Write(svg)
			return
		}
		fsrv.ServeHTTP(w, r)
	})
}

// pendingApprovals counts the open approvals of every bot (0 when they
// cannot be read: the badge is a hint, the page still renders).
func (c *Console) pendingApprovals(r *http.Request) int {
	open, err := c.st.OpenApprovals(r.Context())
	if err != nil {
		c.log.Warn("count open approvals", "err", err)
		return 0
	}
	return len(open)
}
