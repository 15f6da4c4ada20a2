package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/store"
)

// Operator is the bridge core as the operator pages see it (implemented
// by *bridges.Core). Without one (SetOperator not called) the pages show
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

// SetOperator gives the operator pages the core. Call it before serving.
func (c *Console) SetOperator(op Operator) { c.op = op }

// Operator page sizes.
const (
	auditPageSize    = 200
	usageDays        = 31
	feedbackPageSize = 50
)

// adminRoutes registers the operator pages: admins only, every action a
// CSRF-checked POST that redirects back to its page.
func (c *Console) adminRoutes(mux *http.ServeMux) {
	admin := func(h http.HandlerFunc) http.Handler { return c.RequireRole(config.RoleAdmin, h) }
	post := func(h http.HandlerFunc) http.Handler { return c.RequireRole(config.RoleAdmin, c.csrf(h)) }
	mux.Handle("GET /admin", admin(c.adminBots))
	mux.Handle("GET /admin/agents", admin(c.adminAgents))
	mux.Handle("POST /admin/agents/{conv}/stop", post(c.adminStopAgent))
	mux.Handle("GET /admin/approvals", admin(c.adminApprovals))
	mux.Handle("POST /admin/approvals/{id}", post(c.adminDecide))
	mux.Handle("GET /admin/usage", admin(c.adminUsage))
	mux.Handle("GET /admin/audit", admin(c.adminAudit))
	mux.Handle("GET /admin/config", admin(c.adminConfig))
}

// adminPage is the data of every operator page: the sub-page shown and a
// one-time notice (the outcome of the last action, from the query).
type adminPage struct {
	Tab    string
	Notice string
	Error  bool
	Data   any
}

func (c *Console) renderAdmin(w http.ResponseWriter, r *http.Request, tab string, data any) {
	p := adminPage{Tab: tab, Data: data, Notice: r.URL.Query().Get("done")}
	if e := r.URL.Query().Get("error"); e != "" {
		p.Notice, p.Error = e, true
	}
	c.render(w, r, http.StatusOK, "admin_"+tab, "admin", p)
}

// backTo redirects to page with an outcome for the notice line.
func backTo(w http.ResponseWriter, r *http.Request, page, done string, err error) {
	q := "?done=" + urlQuery(done)
	if err != nil {
		q = "?error=" + urlQuery(err.Error())
	}
	http.Redirect(w, r, page+q, http.StatusSeeOther)
}

// botRow is one bot on the start page.
type botRow struct {
	Name, Platform, Agent string
	State                 string
	Since                 time.Time
	Reason, Hint          string
	Attempt               int // reconnecting: failed attempts in a row
	Failed                bool
	Replies               store.OutboxBotSummary // final replies waiting out an outage or given up lately
}

// adminBots lists the bots with their connection state and their final
// replies waiting out an outage or given up in the last day.
func (c *Console) adminBots(w http.ResponseWriter, r *http.Request) {
	states := map[string]bridges.BotStatus{}
	if c.op != nil {
		for _, s := range c.op.BotStates() {
			states[s.Bot] = s
		}
	}
	replies := map[string]store.OutboxBotSummary{}
	sums, err := c.st.OutboxSummary(r.Context(), time.Now().Add(-core.FailedRepliesWindow))
	if err != nil {
		c.log.Error("read waiting and failed replies", "err", err) // the page still shows the connections
	}
	for _, s := range sums {
		replies[s.Bot] = s
	}
	var rows []botRow
	for _, b := range c.config().Bots {
		row := botRow{Name: b.Name, Platform: b.Platform, Agent: b.Agent, State: "not running", Replies: replies[b.Name]}
		if s, ok := states[b.Name]; ok {
			row.State, row.Since, row.Reason, row.Hint = string(s.State), s.Since, s.Reason, s.Hint
			row.Attempt = s.Attempt
			row.Failed = s.State == bridges.ConnFailed
		}
		rows = append(rows, row)
	}
	c.renderAdmin(w, r, "bots", rows)
}

// agentRow is one live agent.
type agentRow struct {
	bridges.LiveAgent
	Conv      convView
	Age, Idle string
	Memory    string
}

// agentsPage is the live agents page: the processes, and the warm spares
// of each profile that keeps them.
type agentsPage struct {
	Rows   []agentRow
	Spares []bridges.WarmSpareState
}

// adminAgents lists the live agent processes and the warm spares.
func (c *Console) adminAgents(w http.ResponseWriter, r *http.Request) {
	var rows []agentRow
	var spares []bridges.WarmSpareState
	if sr, ok := c.op.(spareReporter); ok {
		spares = sr.WarmSpares()
	}
	if c.op != nil {
		live, err := c.op.LiveAgents(r.Context())
		if err != nil {
			c.log.Error("list live agents", "err", err)
			c.errorPage(w, r, http.StatusInternalServerError, "Could not list the live agents: "+err.Error())
			return
		}
		now := time.Now()
		for _, a := range live {
			rows = append(rows, agentRow{LiveAgent: a, Conv: c.convOf(r.Context(), CurrentUser(r).Name, a.ConversationID, a.Key),
				Age: roundDur(now.Sub(a.Started)), Idle: roundDur(now.Sub(a.LastActive)), Memory: megabytes(a.RSSBytes)})
		}
	}
	c.renderAdmin(w, r, "agents", agentsPage{Rows: rows, Spares: spares})
}

// adminStopAgent stops one live agent.
func (c *Console) adminStopAgent(w http.ResponseWriter, r *http.Request) {
	if c.op == nil {
		backTo(w, r, "/admin/agents", "", errors.New("the bridge core is not running"))
		return
	}
	conv, who := r.PathValue("conv"), CurrentUser(r).Name
	err := c.op.StopAgent(r.Context(), conv, who)
	backTo(w, r, "/admin/agents", "Agent stopped; the conversation resumes with its next message.", err)
}

// approvalRow is one permission request with its conversation.
type approvalRow struct {
	store.Approval
	Key     bridges.ConversationKey
	Conv    convView
	Subject string
	Words   string // what was decided, in words (audit log)
}

// adminApprovals lists open permission requests of every platform.
func (c *Console) adminApprovals(w http.ResponseWriter, r *http.Request) {
	open, err := c.st.OpenApprovals(r.Context())
	if err != nil {
		c.log.Error("list open approvals", "err", err)
		c.errorPage(w, r, http.StatusInternalServerError, "Could not read the open requests: "+err.Error())
		return
	}
	rows := make([]approvalRow, 0, len(open))
	for _, a := range open {
		row := approvalRow{Approval: a, Subject: toolSubject(a.Input)}
		if conv, err := c.st.ConversationByID(r.Context(), a.ConversationID); err == nil {
			row.Key = bridges.ConversationKey(conv.Key)
		}
		row.Conv = c.convOf(r.Context(), CurrentUser(r).Name, a.ConversationID, row.Key)
		rows = append(rows, row)
	}
	c.renderAdmin(w, r, "approvals", rows)
}

// adminDecide allows or denies an open request as the signed-in admin.
func (c *Console) adminDecide(w http.ResponseWriter, r *http.Request) {
	if c.op == nil {
		backTo(w, r, "/admin/approvals", "", errors.New("the bridge core is not running"))
		return
	}
	id, choice, who := r.PathValue("id"), r.PostFormValue("choice"), CurrentUser(r).Name
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	err := c.op.DecideApproval(ctx, id, choice, who)
	if err != nil {
		c.log.Info("operator decision refused", "request", id, "user", who, "err", err)
	}
	verb := map[string]string{bridges.ChoiceAllow: "allowed", bridges.ChoiceDeny: "denied"}[choice]
	backTo(w, r, "/admin/approvals", "Request "+verb+".", err)
}

// feedbackRow is one rating of an answer on the usage page.
type feedbackRow struct {
	store.FeedbackEntry
	Conv convView
}

// adminUsage shows usage and cost per bot and day, and the latest ratings
// of answers (👍/👎 feedback) with their totals.
func (c *Console) adminUsage(w http.ResponseWriter, r *http.Request) {
	since := time.Now().UTC().AddDate(0, 0, -usageDays+1).Truncate(24 * time.Hour)
	days, err := c.st.UsageByBotDay(r.Context(), since)
	if err != nil {
		c.log.Error("read usage", "err", err)
		c.errorPage(w, r, http.StatusInternalServerError, "Could not read usage: "+err.Error())
		return
	}
	var total float64
	for _, d := range days {
		total += d.CostUSD
	}
	ratings, err := c.st.RecentFeedback(r.Context(), feedbackPageSize)
	if err != nil {
		c.log.Error("read feedback", "err", err)
		c.errorPage(w, r, http.StatusInternalServerError, "Could not read the feedback: "+err.Error())
		return
	}
	feedback := make([]feedbackRow, 0, len(ratings))
	good := 0
	for _, f := range ratings {
		if f.Rating == store.RatingGood {
			good++
		}
		feedback = append(feedback, feedbackRow{FeedbackEntry: f, Conv: c.convOf(r.Context(), CurrentUser(r).Name, f.ConversationID, bridges.ConversationKey(f.Key))})
	}
	c.renderAdmin(w, r, "usage", struct {
		Days      []store.DayUsage
		Total     float64
		Since     time.Time
		Feedback  []feedbackRow
		Good, Bad int
	}{days, total, since, feedback, good, len(feedback) - good})
}

// adminAudit shows the latest decided approvals.
func (c *Console) adminAudit(w http.ResponseWriter, r *http.Request) {
	log, err := c.st.DecidedApprovals(r.Context(), auditPageSize)
	if err != nil {
		c.log.Error("read audit log", "err", err)
		c.errorPage(w, r, http.StatusInternalServerError, "Could not read the audit log: "+err.Error())
		return
	}
	rows := make([]approvalRow, 0, len(log))
	for _, e := range log {
		key := bridges.ConversationKey(e.Key)
		rows = append(rows, approvalRow{Approval: e.Approval, Key: key, Conv: c.convOf(r.Context(), CurrentUser(r).Name, e.ConversationID, key),
			Subject: toolSubject(e.Input), Words: decisionWords(e.Approval)})
	}
	c.renderAdmin(w, r, "audit", rows)
}

// adminConfig shows the effective configuration (after ${ENV} expansion
// and defaults) with every secret redacted: the config types' JSON
// encodings redact tokens and agent env values.
func (c *Console) adminConfig(w http.ResponseWriter, r *http.Request) {
	cfg := c.config()
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		c.errorPage(w, r, http.StatusInternalServerError, "Could not show the configuration: "+err.Error())
		return
	}
	var st ConfigStatus
	if c.configStatus != nil {
		st = c.configStatus()
	}
	c.renderAdmin(w, r, "config", struct {
		Path, JSON, Summary string
		Status              ConfigStatus
	}{cfg.Path, string(b), cfg.Summary(), st})
}

// toolSubject is the short form of a tool input for a table cell: a Bash
// command, a file path or URL, a question, else the JSON.
func toolSubject(input []byte) string {
	var m map[string]any
	if json.Unmarshal(input, &m) == nil {
		if qs, ok := m["questions"].([]any); ok {
			var texts []string
			for _, q := range qs {
				if q, ok := q.(map[string]any); ok {
					if s, ok := q["question"].(string); ok {
						texts = append(texts, s)
					}
				}
			}
			if len(texts) > 0 {
				return truncate(strings.Join(texts, " · "), 300)
			}
		}
		if plan, ok := m["plan"].(string); ok {
			return truncate(oneLine(plan, 300), 300)
		}
		for _, k := range []string{"command", "file_path", "path", "url", "pattern"} {
			if s, ok := m[k].(string); ok {
				return truncate(s, 300)
			}
		}
	}
	return truncate(string(input), 300)
}

// roundDur renders d to the second (to the minute past an hour).
func roundDur(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	if d >= time.Hour {
		return d.Round(time.Minute).String()
	}
	return d.Round(time.Second).String()
}

// megabytes renders a byte count as MB, "?" when unknown.
func megabytes(n int64) string {
	if n <= 0 {
		return "?"
	}
	return fmt.Sprintf("%.0f MB", float64(n)/1e6)
}

// urlQuery escapes s (truncated) for a query value.
func urlQuery(s string) string { return url.QueryEscape(truncate(s, 300)) }

// convView is a conversation as the operator pages name it: by what it is
// about, where it is, and a link to it when the admin can open it.
type convView struct {
	Title string // the first message a person wrote, cut; "" when unknown
	Where string // bot · channel (· thread)
	Link  string // the admin's own web chat; "" elsewhere
}

// convOf describes the conversation id with key for the signed-in user.
// A web conversation is named by its title and linked when the user sees
// it (their own or shared with them); other platforms' permalinks are not
// known.
func (c *Console) convOf(ctx context.Context, user, id string, key bridges.ConversationKey) convView {
	v := convView{Where: key.Bot + " · " + key.Channel}
	if key.Thread != "" {
		v.Where += " · " + shortID(key.Thread)
	}
	if id != "" {
		title, err := c.st.ConversationTitle(ctx, id)
		if err != nil {
			c.log.Warn("read conversation title", "conversation", id, "err", err)
		}
		v.Title = oneLine(title, 80)
	}
	if bot := c.bot.Load(); bot != nil && key.Bot == bot.Name && threadRE.MatchString(key.Thread) {
		// A web conversation: by its title, linked when the admin sees it
		// (their own, or shared with them).
		if th, err := c.st.WebThreadFor(ctx, key.Bot, key.Thread, user); err == nil && th.Owner == key.Channel {
			if t := titleOf(th); t != "" {
				v.Title = t
			}
			if th.Role != "" {
				v.Link = "/chat/" + key.Thread
			}
		}
	}
	return v
}

// shortID cuts a long thread id (a uuid, a Slack ts is short enough).
func shortID(s string) string {
	if len(s) > 20 {
		return s[:8] + "…"
	}
	return s
}

// decisionWords says in words what was decided on a request: a question's
// answer ("answered: Postgres"), a plan approved or rejected, a tool call
// allowed once, always, denied, or closed without a decision.
func decisionWords(a store.Approval) string {
	allowed := a.Decision == store.DecisionAllow || a.Decision == store.DecisionAlways
	switch {
	case a.ToolName == "AskUserQuestion" && allowed:
		var answers map[string]string
		if json.Unmarshal([]byte(a.Message), &answers) == nil && len(answers) > 0 {
			vals := make([]string, 0, len(answers))
			for _, q := range slices.Sorted(maps.Keys(answers)) {
				vals = append(vals, answers[q])
			}
			return "answered: " + truncate(strings.Join(vals, "; "), 200)
		}
		return "answered"
	case a.ToolName == "ExitPlanMode" && allowed:
		return "plan approved"
	case a.ToolName == "ExitPlanMode" && a.Decision == store.DecisionDeny:
		return "plan rejected"
	}
	switch a.Decision {
	case store.DecisionAllow:
		return "allowed once"
	case store.DecisionAlways:
		return "always allowed (a rule for the conversation)"
	case store.DecisionDeny:
		return "denied"
	case store.DecisionTimeout:
		return "denied: nobody answered in time"
	case store.DecisionCancelled:
		return "withdrawn by the agent"
	case store.DecisionRuleAllow:
		return "allowed by a policy rule"
	case store.DecisionRuleDeny:
		return "denied by a policy rule"
	case store.DecisionGrant:
		return "allowed by an earlier “always allow”"
	case store.DecisionExpired:
		return "closed: the agent stopped"
	}
	return string(a.Decision)
}
