// Package web is the built-in web console: a chat platform (the bot with
// `platform: web`) and the pages around it, served on the bridge's HTTP
// listener (http.listen) next to /healthz and /metrics.
//
// # Shape
//
// Console is both the bridges.Platform of the web bot and the HTTP handler
// of every page. People sign in with the token of their web.users entry
// (or the admin token generated into data_dir when there is none); failed
// sign-ins are limited per client address and in total (package auth).
// A session is a signed cookie (HttpOnly, SameSite=Strict, Secure over
// https) naming a session kept in the store (web_sessions), which signing
// out deletes. Every POST carries the session's CSRF token and passes Go's
// cross-origin protection. Pages are html/template files under templates/
// rendered inside one layout; the little JS and CSS live in static/ (no
// build step). Nothing is inline, so the Content-Security-Policy allows
// scripts and styles from this origin only.
//
// A web conversation's key is {bot, the user's name, a random thread id}:
// people see their own conversations only. Every message shown (the user's
// and the bridge's, with its buttons) is kept in the store (web_messages),
// so a reload or a reconnect shows the conversation as it is, open cards
// included; a page follows changes over server-sent events and catches up
// by version after a reconnect.
//
// # Adding pages
//
// A page is a template file (templates/NAME.html defining "title" and
// "content") and a handler that calls Console.render. Register it in
// routes (routes.go) wrapped in requireUser. Operator pages live in
// package admin (handler, template in admin/templates) and are mounted
// behind RequireRole(config.RoleAdmin, …), which answers 403 to everyone
// else.
// POST handlers go through csrf; forms include {{template "csrf" .}}.
//
// # Files
//
// Every adapter has the same files for the same roles (bridges/adapters/slack,
// bridges/adapters/discord), and tests each file in the _test.go file of the same
// name (helpers_test.go holds the test kit).
//
// files:
//
//   - bridge.go: Console, Options, New, Limits, the abilities offered, and
//     where the console listens (BaseURL, Announce).
//   - run.go: Run, which lends the pages the core's Handler while it runs.
//   - inbound.go: a page's message, Stop and button click to the core
//     (send, stop, action).
//   - outbound.go: Post, Edit and PostEphemeral: stored and pushed to the
//     open pages; the console's own notices.
//   - format.go: CommonMark to safe HTML, code highlighted on the server.
//   - emoji.go: the bridge's emoji in those messages drawn as the
//     console's SVG icons (templates/partials/icons.html).
//   - split.go: cutting text to one line or a length. Messages are not
//     split: the core splits to Limits.MaxMessageRunes.
//   - typing.go: SetTyping and the start of a turn: the pages' "Starting the agent…" and "working"
//     states and Stop button.
//   - files.go: uploads (images, PDFs, text and code) in (readUpload,
//     FetchFile) and served back.
//   - errors.go: sentinel errors.
//   - tools.go: tool calls kept in full (ShowTool) and expanded on request.
//
// Files only the web console needs (it serves its own pages):
//
//   - config.go: the platform entry (a web bot has no settings node).
//   - routes.go: the routes, the middleware (security headers, session,
//     roles, CSRF) and the templates and static files.
//   - chat.go: the chat pages (conversation list and conversation view).
//   - snippet.go: the part of a matching message a search result shows.
//   - access.go: which conversation a request names and what the bridge's
//     one access decision (bridges/core/access) says the signed-in person may
//     do there now (owner, participant, viewer); open streams ask it again
//     (events.go) and end with an "ended" event when access ends.
//   - threads.go: managing a conversation (rename, archive, delete,
//     share) and the live conversation list.
//   - events.go: the server-sent event stream of a conversation's page,
//     and Fanout, which runs the live updates across replicas.
//   - signin.go: the sign-in form, signing in and out.
//   - admin.go: the host of the operator pages (package admin): their
//     routes, rendering, the config, how conversations are named.
//
// Sub-packages:
//
//   - auth: who may sign in (web.users, the generated admin token),
//     signed session cookies kept in the store (through auth.Store), CSRF
//     tokens, the limit on failed sign-ins.
//   - live: live updates: the hub that fans changes out to the open
//     pages by topic, the same across replicas (Fanout, on the store's
//     signals), and the server-sent events' wire format.
//   - admin: the operator pages (bots, agents, approvals, usage, audit,
//     config) and their templates, reading the store through admin.Store
//     and acting on the core through admin.Operator.
package web

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/adapters/web/admin"
	"github.com/agentbridge/agentbridge/bridges/adapters/web/auth"
	"github.com/agentbridge/agentbridge/bridges/adapters/web/feed"
	"github.com/agentbridge/agentbridge/bridges/core/access"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/store"
)

// Options configure a Console.
type Options struct {
	Config *config.Config // required: the web bot, web.users, data_dir, http.listen
	Store  *store.Store   // required: chat history, uploads and sessions
	Logger *slog.Logger   // default discards
	// Demo labels every page "Demo — scripted model, not Claude" (bridge
	// run -demo).
	Demo bool
	// Now is the clock for sessions; default time.Now.
	Now func() time.Time
	// Access is the bridge's one access decision (shared with the
	// hand-off server and the core); default: one over Config as the
	// console reloads it and Store.
	Access *access.Authority
}

// Console is the web console. Create it with New; serve Handler on the
// bridge's HTTP listener; when the config has a web bot, give the Console
// to the core as that bot's Platform.
type Console struct {
	cfg   atomic.Pointer[config.Config] // the config in force (ReloadUsers replaces it)
	bot   atomic.Pointer[config.Bot]    // nil: no web bot (sign-in and admin pages only); a reload sets it (reload.go)
	st    *store.Store
	log   *slog.Logger
	demo  bool
	users *auth.Users
	sess  *auth.Sessions
	limit *auth.Limiter // failed sign-ins
	// trusted are the reverse proxies whose X-Forwarded-For names the
	// client (web.trusted_proxies).
	trusted []netip.Prefix
	pages   map[string]*template.Template
	md      *markdown
	hub     *feed.Hub // the open pages' live updates (package feed)
	// maxUpload caps one attached file (web.max_upload).
	maxUpload int64
	mux       http.Handler
	static    http.Handler

	// generatedToken is the admin token written into data_dir by this
	// start (first run without users), shown once by Announce.
	generatedToken string

	access *access.Authority // who may do what in a conversation, now

	op    admin.Operator // the core, to stop a conversation's agent (SetOperator)
	admin *admin.Pages   // the operator pages (admin.go)

	mu        sync.Mutex
	handler   bridges.Handler                       // set while Run runs
	announced bool                                  // Announce ran: the bridge is starting (run.go)
	running   chan struct{}                         // closed when Run first runs
	ran       sync.Once                             // closes running
	turns     map[bridges.ConversationKey]turnState // turns running or starting, for pages that (re)connect (typing.go)
	now       func() time.Time
}

var (
	_ bridges.Platform    = (*Console)(nil)
	_ bridges.Editor      = (*Console)(nil)
	_ bridges.Typer       = (*Console)(nil)
	_ bridges.FileFetcher = (*Console)(nil)
	_ bridges.Ephemeral   = (*Console)(nil)
	_ bridges.ToolViewer  = (*Console)(nil)
)

// New loads the users (generating the admin token into data_dir when
// web.users is empty), the session key (data_dir/web-session.key, made on
// first use; with replicas the key every replica shares in the store, see
// auth.LoadSessionKey) and the templates.
func New(opts Options) (*Console, error) {
	if opts.Config == nil || opts.Store == nil {
		return nil, errors.New("web console: Config and Store are required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	us, generated, err := auth.NewUsers(opts.Config.Web.Users, opts.Config.DataDir)
	if err != nil {
		return nil, fmt.Errorf("web console: %w", err)
	}
	log := opts.Logger.With("component", "web")
	var shared auth.KeyStore // replicas share the key through the store
	if opts.Config.Replicas.Enabled {
		shared = opts.Store
		if len(opts.Config.Web.Users) == 0 {
			log.Warn("with replicas, configure web.users: the generated admin token is kept in each replica's data_dir, " +
				"so each replica has an admin of its own and its start ends the other admins' sessions (docs/scaling.md)")
		}
	}
	key, err := auth.LoadSessionKey(context.Background(), opts.Config.DataDir, shared, log)
	if err != nil {
		return nil, fmt.Errorf("web console: session key: %w", err)
	}
	pages, err := parsePages()
	if err != nil {
		return nil, fmt.Errorf("web console: %w", err)
	}
	var trusted []netip.Prefix
	for _, p := range opts.Config.Web.TrustedProxies {
		pre, err := config.ParseTrustedProxy(p)
		if err != nil {
			return nil, fmt.Errorf("web console: %w", err)
		}
		trusted = append(trusted, pre)
	}
	sess := auth.NewSessions(key, us, opts.Store, log, opts.Now)
	if n, err := sess.EndStale(context.Background()); err != nil {
		return nil, fmt.Errorf("web console: %w", err)
	} else if n > 0 {
		log.Info("web sessions ended: their user was removed or has a new token", "sessions", n)
	}
	c := &Console{
		running:        make(chan struct{}),
		st:             opts.Store,
		log:            log,
		demo:           opts.Demo,
		users:          us,
		sess:           sess,
		limit:          auth.NewLimiter(opts.Now),
		trusted:        trusted,
		pages:          pages,
		md:             newMarkdown(),
		hub:            feed.New(log),
		maxUpload:      cmp.Or(opts.Config.Web.MaxUpload, config.DefaultWebMaxUpload),
		turns:          make(map[bridges.ConversationKey]turnState),
		now:            opts.Now,
		generatedToken: generated,
	}
	c.cfg.Store(opts.Config)
	c.access = opts.Access
	if c.access == nil {
		c.access = access.New(consoleConfig{c}, opts.Store)
	}
	c.admin = admin.New(adminHost{c}, opts.Store, log)
	c.bot.Store(opts.Config.WebBot())
	icons, err := iconFiles(pages)
	if err != nil {
		return nil, fmt.Errorf("web console icons: %w", err)
	}
	c.static = staticHandler(icons)
	c.mux = c.routes()
	return c, nil
}

// Handler serves every console page; mount it at "/".
func (c *Console) Handler() http.Handler { return c.mux }

// Shutdown ends every open event stream, so that the HTTP server's
// graceful shutdown does not wait for them (register it with
// http.Server.RegisterOnShutdown).
func (c *Console) Shutdown() { c.hub.Close() }

// BaseURL is the console's address as configured in http.listen (a
// wildcard host shows as 127.0.0.1), e.g. "http://127.0.0.1:9464".
func (c *Console) BaseURL() string { return ConsoleURL(c.config().HTTP.Listen) }

// invokedAs is how to run this binary again from where it was started:
// the path it was started by (bin/bridge under make run), or "bridge" when
// it was found on PATH. ("bridge" alone may be iproute2's on Debian.)
func invokedAs(arg0 string) string {
	if strings.ContainsRune(arg0, filepath.Separator) {
		return arg0
	}
	return "bridge"
}

// Announce tells the operator on w (the terminal, not the log) where the
// console is. Without web.users it prints the sign-in link with the
// generated admin token on every start until somebody has signed in;
// then it names the token's file. It also logs a warning when the listener
// is reachable from other machines over plain HTTP.
// From then on a request acting through the core waits for it (StartWait).
func (c *Console) Announce(w io.Writer) {
	c.mu.Lock()
	c.announced = true
	c.mu.Unlock()
	tokenFile := filepath.Join(c.config().DataDir, auth.AdminTokenFile)
	token := c.generatedToken
	if token == "" && len(c.config().Web.Users) == 0 {
		token = c.unusedAdminToken()
	}
	switch {
	case token != "":
		// Set apart from the log lines around it: a blank line, a label,
		// the link alone on its indented line.
		fmt.Fprintf(w, "\n=== Web console: sign in as %s with this link ===\n\n    %s/signin#token=%s\n\n(The token is saved in %s; keep it secret.)\n\n",
			auth.GeneratedAdmin, c.BaseURL(), token, tokenFile)
	case len(c.config().Web.Users) == 0:
		fmt.Fprintf(w, "Web console: %s/ (sign in as %s with the token in %s, or run `%s web-link -config %s` for a sign-in link)\n",
			c.BaseURL(), auth.GeneratedAdmin, tokenFile, invokedAs(os.Args[0]), cmp.Or(c.config().Path, "bridge.yaml"))
	default:
		fmt.Fprintf(w, "Web console: %s/\n", c.BaseURL())
	}
	if !loopbackListen(c.config().HTTP.Listen) {
		c.log.Warn("the web console listens on a non-loopback address over plain HTTP: tokens and cookies can be read on the network. "+
			"Listen on 127.0.0.1 behind an HTTPS reverse proxy (docs/web.md)", "listen", c.config().HTTP.Listen)
	}
}

// unusedAdminToken is the generated admin token while nobody is signed in
// (no session), else "": the link is printed until it has been used.
func (c *Console) unusedAdminToken() string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if signedIn, err := c.st.AnyWebSession(ctx); err != nil || signedIn {
		if err != nil {
			c.log.Warn("check for web sessions", "err", err)
		}
		return ""
	}
	raw, err := os.ReadFile(filepath.Join(c.config().DataDir, auth.AdminTokenFile))
	if err != nil {
		c.log.Warn("read the admin token for the sign-in link", "err", err)
		return ""
	}
	return strings.TrimSpace(string(raw))
}

// loopbackListen reports whether a host:port only accepts local
// connections.
func loopbackListen(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// randomID is n bytes from crypto/rand in lowercase hex: the ids of
// messages, files and conversations, and the sign-in form's token.
func randomID(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go ≥ 1.24)
	return hex.EncodeToString(b)
}

// Platform limits of the web console: long messages, buttons, and quick
// edits (a browser shows every edit; each one is one small database write).
const (
	maxMessageRunes = 12000
	editInterval    = 250 * time.Millisecond
)

// Limits implements bridges.Platform.
func (c *Console) Limits() bridges.Limits {
	return bridges.Limits{Title: "web console", MaxMessageRunes: maxMessageRunes, CanButtons: true, EditInterval: editInterval,
		FreeTyping: true} // the pages' "working" costs no platform call: no status_delay
}
