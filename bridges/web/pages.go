package web

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"
)

//go:embed templates
var templatesFS embed.FS

//go:embed static
var staticFS embed.FS

// page is what every template gets: the layout reads User, CSRF, Demo and
// Pending; the page's own "content" reads Data.
type page struct {
	User    *User
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

// parsePages parses each templates/*.html page together with the layout
// and the partials, keyed by file name without ".html".
func parsePages() (map[string]*template.Template, error) {
	base, err := template.New("").Funcs(templateFuncs).ParseFS(templatesFS, "templates/layout.html", "templates/partials/*.html")
	if err != nil {
		return nil, fmt.Errorf("parse layout: %w", err)
	}
	files, err := fs.Glob(templatesFS, "templates/*.html")
	if err != nil {
		return nil, fmt.Errorf("list templates: %w", err)
	}
	pages := make(map[string]*template.Template, len(files))
	for _, f := range files {
		name := strings.TrimSuffix(path.Base(f), ".html")
		if name == "layout" {
			continue
		}
		t, err := base.Clone()
		if err != nil {
			return nil, fmt.Errorf("template %s: %w", name, err)
		}
		if t, err = t.ParseFS(templatesFS, f); err != nil {
			return nil, fmt.Errorf("parse template %s: %w", name, err)
		}
		pages[name] = t
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
	p := page{User: CurrentUser(r), CSRF: CSRFToken(r), Demo: c.demo, Nav: nav, Data: data}
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

// staticHandler serves the embedded static/ files under /static/, and
// /static/code.css, the colours of highlighted code (highlight.go).
func staticHandler() http.Handler {
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
