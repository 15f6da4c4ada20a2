// Package admin is the web console's operator pages, for admins only:
// the bots and their connections, the live agents and warm spares, the
// open approvals (decided here as the signed-in admin), usage and
// feedback, the audit log (decided approvals and terminal hand-offs), and
// the effective configuration with its reloads.
//
// The pages read the store through Store, act on the core through
// Operator, and are served and rendered by the console (Host): package web
// mounts them (Routes) behind its admin check and CSRF check, and renders
// their templates (Templates) inside its layout.
package admin

import (
	"context"
	"embed"
	"io/fs"
	"log/slog"
	"net/http"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/store"
)

// Operator is the bridge core as the operator pages see it (implemented
// by *core.Core). Without one (SetOperator not called) the pages show
// what the store and the config know.
type Operator interface {
	BotStates() []bridges.BotStatus
	LiveAgents(ctx context.Context) ([]bridges.LiveAgent, error)
	StopAgent(ctx context.Context, conversationID, by string) error
	DecideApproval(ctx context.Context, id, choice, by string) error
}

var _ Operator = (*core.Core)(nil)

// spareReporter is an Operator that also reports warm spares (the live
// agents page shows them when it does).
type spareReporter interface {
	WarmSpares() []bridges.WarmSpareState
}

var _ spareReporter = (*core.Core)(nil)

// ConfigStatus is what the operator view shows about the config in force
// and the last reload the bridge refused (see bridges/app's reloader).
type ConfigStatus struct {
	Generation uint64
	At         time.Time // when the generation took effect
	Trigger    string    // start, signal, file, request
	Changed    []string  // the keys the generation changed (never values)
	// Refused are the problems of the last refused reload, each with its
	// line ("bridge.yaml:12: bots[0].agent: ..."); empty when the last
	// reload succeeded or none was refused.
	Refused   []string
	RefusedAt time.Time
	// CheckedAt is when the bridge last read the file for a reload, with
	// any outcome (applied, refused, unchanged): `bridge reload` knows by it
	// that its signal was handled even when nothing changed.
	CheckedAt time.Time
}

// Store is what the operator pages read of the bridge's store
// (implemented by *store.Store).
type Store interface {
	OutboxSummary(ctx context.Context, since time.Time) ([]store.OutboxBotSummary, error)
	OpenApprovals(ctx context.Context) ([]store.Approval, error)
	ConversationByID(ctx context.Context, id string) (store.Conversation, error)
	UsageByBotDay(ctx context.Context, since time.Time) ([]store.DayUsage, error)
	RecentFeedback(ctx context.Context, limit int) ([]store.FeedbackEntry, error)
	DecidedApprovals(ctx context.Context, limit int) ([]store.AuditEntry, error)
	HandoffAudit(ctx context.Context, limit int) ([]store.HandoffEvent, error)
}

var _ Store = (*store.Store)(nil)

// Host is the console that serves the pages (implemented by package web).
type Host interface {
	// Render writes the page template name inside the console's layout
	// with status; nav names the active navigation entry.
	Render(w http.ResponseWriter, r *http.Request, status int, name, nav string, data any)
	// ErrorPage shows msg with status in the layout.
	ErrorPage(w http.ResponseWriter, r *http.Request, status int, msg string)
	// Config is the config in force.
	Config() *config.Config
	// Conversation names the conversation id with key for the signed-in
	// user (see ConvView).
	Conversation(ctx context.Context, user, id string, key bridges.ConversationKey) ConvView
	// Starting lists the conversations whose agent is starting (a message
	// accepted, no turn running yet), with since when.
	Starting() map[bridges.ConversationKey]time.Time
}

// ConvView is a conversation as the operator pages name it: by what it is
// about, where it is, and a link to it when the admin can open it.
type ConvView struct {
	Title string // the first message a person wrote, cut; "" when unknown
	Where string // bot · channel (· thread)
	Link  string // the admin's own web chat; "" elsewhere
}

//go:embed templates
var templatesFS embed.FS

// Templates are the pages' templates: templates/admin_*.html (each
// defining "title" and "content") and templates/partials/*.html.
func Templates() fs.FS { return templatesFS }

// Pages serves the operator pages. Create it with New; call SetOperator
// and SetConfigStatus before serving.
type Pages struct {
	host         Host
	st           Store
	log          *slog.Logger
	op           Operator
	configStatus func() ConfigStatus
	replicas     func(context.Context) (ReplicaStatus, error) // nil: one bridge (replicas.go)
}

// New returns the operator pages of host, reading st.
func New(host Host, st Store, log *slog.Logger) *Pages {
	return &Pages{host: host, st: st, log: log}
}

// SetOperator gives the pages the core. Call it before serving.
func (p *Pages) SetOperator(op Operator) { p.op = op }

// SetConfigStatus gives the pages the reloads' state. Call it before
// serving.
func (p *Pages) SetConfigStatus(f func() ConfigStatus) { p.configStatus = f }

// Operator page sizes.
const (
	auditPageSize    = 200
	usageDays        = 31
	feedbackPageSize = 50
)

// Routes registers the operator pages on mux: each GET wrapped in admin
// (admins only), each action a POST wrapped in post (admins only, CSRF
// checked) that redirects back to its page.
func (p *Pages) Routes(mux *http.ServeMux, admin, post func(http.Handler) http.Handler) {
	mux.Handle("GET /admin", admin(http.HandlerFunc(p.bots)))
	mux.Handle("GET /admin/agents", admin(http.HandlerFunc(p.agents)))
	mux.Handle("POST /admin/agents/{conv}/stop", post(http.HandlerFunc(p.stopAgent)))
	mux.Handle("GET /admin/approvals", admin(http.HandlerFunc(p.approvals)))
	mux.Handle("POST /admin/approvals/{id}", post(http.HandlerFunc(p.decide)))
	mux.Handle("GET /admin/usage", admin(http.HandlerFunc(p.usage)))
	mux.Handle("GET /admin/audit", admin(http.HandlerFunc(p.audit)))
	mux.Handle("GET /admin/config", admin(http.HandlerFunc(p.configPage)))
}

// adminPage is the data of every operator page: the sub-page shown and a
// one-time notice (the outcome of the last action, from the query).
type adminPage struct {
	Tab    string
	Notice string
	Error  bool
	Data   any
}

// render shows the operator page of tab.
func (p *Pages) render(w http.ResponseWriter, r *http.Request, tab string, data any) {
	page := adminPage{Tab: tab, Data: data, Notice: r.URL.Query().Get("done")}
	if e := r.URL.Query().Get("error"); e != "" {
		page.Notice, page.Error = e, true
	}
	p.host.Render(w, r, http.StatusOK, "admin_"+tab, "admin", page)
}

// backTo redirects to page with an outcome for the notice line.
func backTo(w http.ResponseWriter, r *http.Request, page, done string, err error) {
	q := "?done=" + urlQuery(done)
	if err != nil {
		q = "?error=" + urlQuery(err.Error())
	}
	http.Redirect(w, r, page+q, http.StatusSeeOther)
}
