package admin

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/adapters/web/auth"
	"github.com/agentbridge/agentbridge/bridges/core/delivery"
	"github.com/agentbridge/agentbridge/store"
)

// botRow is one bot on the start page.
type botRow struct {
	Name, Platform, Agent string
	State                 string
	Since                 time.Time
	Reason, Hint          string
	Attempt               int // reconnecting: failed attempts in a row
	Failed                bool
	Replies               store.OutboxBotSummary // final replies waiting out an outage or given up lately
	HeldBy                string                 // with replicas: the replica holding its connection
}

// botsPage is the start page: the bots, and with replicas this replica's
// share.
type botsPage struct {
	Rows    []botRow
	Replica *replicaView // nil: one bridge
}

// bots lists the bots with their connection state and their final
// replies waiting out an outage or given up in the last day.
func (p *Pages) bots(w http.ResponseWriter, r *http.Request) {
	states := map[string]bridges.BotStatus{}
	if p.op != nil {
		for _, s := range p.op.BotStates() {
			states[s.Bot] = s
		}
	}
	replies := map[string]store.OutboxBotSummary{}
	sums, err := p.st.OutboxSummary(r.Context(), time.Now().Add(-delivery.FailedRepliesWindow))
	if err != nil {
		p.log.Error("read waiting and failed replies", "err", err) // the page still shows the connections
	}
	for _, s := range sums {
		replies[s.Bot] = s
	}
	replica, holders := p.replicaSection(r) // replicas.go
	var rows []botRow
	for _, b := range p.host.Config().Bots {
		row := botRow{Name: b.Name, Platform: b.Platform, Agent: b.Agent, State: "not running", Replies: replies[b.Name],
			HeldBy: holders[b.Name]}
		if s, ok := states[b.Name]; ok {
			row.State, row.Since, row.Reason, row.Hint = string(s.State), s.Since, s.Reason, s.Hint
			row.Attempt = s.Attempt
			row.Failed = s.State == bridges.ConnFailed
		}
		rows = append(rows, row)
	}
	p.render(w, r, "bots", botsPage{Rows: rows, Replica: replica})
}

// agentRow is one live agent.
type agentRow struct {
	bridges.LiveAgent
	Conv      ConvView
	Age, Idle string
	Memory    string
	State     string // in the chat's words: "Starting the agent…", "Working…", "Waiting for ana’s approval", "Idle"
}

// startingWords is what a conversation's page and this page say while its
// agent starts.
const startingWords = "Starting the agent…"

// agentState says what a live agent does in the words its conversation's
// page uses: waiting for a decision on a card (whose: the person whose
// message started the turn), starting (a message accepted, its turn not
// running yet — also when the message was already written to an agent
// process that has not begun it, as the page says), working, or idle.
func agentState(a bridges.LiveAgent, waiting map[string]store.Approval, starting bool, viewer string) string {
	if ap, ok := waiting[a.ConversationID]; ok {
		who, what := ap.RequestedBy+"’s", "approval"
		if ap.RequestedBy == "" || ap.RequestedBy == viewer {
			who = "your"
		}
		if ap.ToolName == "AskUserQuestion" {
			what = "answer"
		}
		return "Waiting for " + who + " " + what
	}
	if starting {
		return startingWords
	}
	if a.Busy {
		return "Working…"
	}
	return "Idle"
}

// agentsPage is the live agents page: the processes, and the warm spares
// of each profile that keeps them.
type agentsPage struct {
	Rows   []agentRow
	Spares []bridges.WarmSpareState
}

// agents lists the live agent processes and the warm spares.
func (p *Pages) agents(w http.ResponseWriter, r *http.Request) {
	var rows []agentRow
	var spares []bridges.WarmSpareState
	if sr, ok := p.op.(spareReporter); ok {
		spares = sr.WarmSpares()
	}
	if p.op != nil {
		live, err := p.op.LiveAgents(r.Context())
		if err != nil {
			p.log.Error("list live agents", "err", err)
			p.host.ErrorPage(w, r, http.StatusInternalServerError, "Could not list the live agents: "+err.Error())
			return
		}
		waiting := map[string]store.Approval{} // conversation → its oldest open card
		open, err := p.st.OpenApprovals(r.Context())
		if err != nil {
			p.log.Warn("list open approvals for the live agents", "err", err)
		}
		for _, ap := range open {
			if _, ok := waiting[ap.ConversationID]; !ok {
				waiting[ap.ConversationID] = ap
			}
		}
		now, viewer, starting := time.Now(), auth.CurrentUser(r).Name, p.host.Starting()
		for _, a := range live {
			_, starts := starting[a.Key]
			delete(starting, a.Key)
			rows = append(rows, agentRow{LiveAgent: a, Conv: p.host.Conversation(r.Context(), viewer, a.ConversationID, a.Key),
				Age: roundDur(now.Sub(a.Started)), Idle: roundDur(now.Sub(a.LastActive)), Memory: megabytes(a.RSSBytes),
				State: agentState(a, waiting, starts, viewer)})
		}
		// Agents still starting have no process listed yet: a row each,
		// without a PID or Stop.
		for _, k := range slices.SortedFunc(maps.Keys(starting), func(a, b bridges.ConversationKey) int {
			return starting[a].Compare(starting[b])
		}) {
			rows = append(rows, agentRow{LiveAgent: bridges.LiveAgent{Key: k, Started: starting[k]},
				Conv: p.host.Conversation(r.Context(), viewer, "", k), Age: roundDur(now.Sub(starting[k])), State: startingWords})
		}
	}
	p.render(w, r, "agents", agentsPage{Rows: rows, Spares: spares})
}

// stopAgent stops one live agent.
func (p *Pages) stopAgent(w http.ResponseWriter, r *http.Request) {
	if p.op == nil {
		backTo(w, r, "/admin/agents", "", errors.New("the bridge core is not running"))
		return
	}
	conv, who := r.PathValue("conv"), auth.CurrentUser(r).Name
	err := p.op.StopAgent(r.Context(), conv, who)
	backTo(w, r, "/admin/agents", "Agent stopped; the conversation resumes with its next message.", err)
}

// approvalRow is one permission request with its conversation.
type approvalRow struct {
	store.Approval
	Key     bridges.ConversationKey
	Conv    ConvView
	Subject string
	Words   string // what was decided, in words (audit log)
}

// approvals lists open permission requests of every platform.
func (p *Pages) approvals(w http.ResponseWriter, r *http.Request) {
	open, err := p.st.OpenApprovals(r.Context())
	if err != nil {
		p.log.Error("list open approvals", "err", err)
		p.host.ErrorPage(w, r, http.StatusInternalServerError, "Could not read the open requests: "+err.Error())
		return
	}
	rows := make([]approvalRow, 0, len(open))
	for _, a := range open {
		row := approvalRow{Approval: a, Subject: toolSubject(a.Input)}
		if conv, err := p.st.ConversationByID(r.Context(), a.ConversationID); err == nil {
			row.Key = bridges.ConversationKey(conv.Key)
		}
		row.Conv = p.host.Conversation(r.Context(), auth.CurrentUser(r).Name, a.ConversationID, row.Key)
		rows = append(rows, row)
	}
	p.render(w, r, "approvals", rows)
}

// decide allows or denies an open request as the signed-in admin.
func (p *Pages) decide(w http.ResponseWriter, r *http.Request) {
	if p.op == nil {
		backTo(w, r, "/admin/approvals", "", errors.New("the bridge core is not running"))
		return
	}
	id, choice, who := r.PathValue("id"), r.PostFormValue("choice"), auth.CurrentUser(r).Name
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	err := p.op.DecideApproval(ctx, id, choice, who)
	if err != nil {
		p.log.Info("operator decision refused", "request", id, "user", who, "err", err)
	}
	verb := map[string]string{bridges.ChoiceAllow: "allowed", bridges.ChoiceDeny: "denied"}[choice]
	backTo(w, r, "/admin/approvals", "Request "+verb+".", err)
}

// feedbackRow is one rating of an answer on the usage page.
type feedbackRow struct {
	store.FeedbackEntry
	Conv ConvView
}

// usage shows usage and cost per bot and day, and the latest ratings
// of answers (👍/👎 feedback) with their totals.
func (p *Pages) usage(w http.ResponseWriter, r *http.Request) {
	since := time.Now().UTC().AddDate(0, 0, -usageDays+1).Truncate(24 * time.Hour)
	days, err := p.st.UsageByBotDay(r.Context(), since)
	if err != nil {
		p.log.Error("read usage", "err", err)
		p.host.ErrorPage(w, r, http.StatusInternalServerError, "Could not read usage: "+err.Error())
		return
	}
	var total float64
	for _, d := range days {
		total += d.CostUSD
	}
	ratings, err := p.st.RecentFeedback(r.Context(), feedbackPageSize)
	if err != nil {
		p.log.Error("read feedback", "err", err)
		p.host.ErrorPage(w, r, http.StatusInternalServerError, "Could not read the feedback: "+err.Error())
		return
	}
	feedback := make([]feedbackRow, 0, len(ratings))
	good := 0
	for _, f := range ratings {
		if f.Rating == store.RatingGood {
			good++
		}
		feedback = append(feedback, feedbackRow{FeedbackEntry: f, Conv: p.host.Conversation(r.Context(), auth.CurrentUser(r).Name, f.ConversationID, bridges.ConversationKey(f.Key))})
	}
	p.render(w, r, "usage", struct {
		Days      []store.DayUsage
		Total     float64
		Since     time.Time
		Feedback  []feedbackRow
		Good, Bad int
	}{days, total, since, feedback, good, len(feedback) - good})
}

// handoffRow is one hand-off event (bridge attach, export, import, or a
// refused request) with its conversation.
type handoffRow struct {
	store.HandoffEvent
	Conv  ConvView // zero when the event names no conversation
	Where string   // bot · channel where no conversation is named (a refused import)
}

// auditPage is the audit log: decided approvals, then hand-off events.
type auditPage struct {
	Approvals []approvalRow
	Handoff   []handoffRow
}

// audit shows the latest decided approvals and the latest hand-off
// events.
func (p *Pages) audit(w http.ResponseWriter, r *http.Request) {
	log, err := p.st.DecidedApprovals(r.Context(), auditPageSize)
	if err != nil {
		p.log.Error("read audit log", "err", err)
		p.host.ErrorPage(w, r, http.StatusInternalServerError, "Could not read the audit log: "+err.Error())
		return
	}
	events, err := p.st.HandoffAudit(r.Context(), auditPageSize)
	if err != nil {
		p.log.Error("read hand-off audit log", "err", err)
		p.host.ErrorPage(w, r, http.StatusInternalServerError, "Could not read the hand-off audit log: "+err.Error())
		return
	}
	user := auth.CurrentUser(r).Name
	page := auditPage{Approvals: make([]approvalRow, 0, len(log)), Handoff: make([]handoffRow, 0, len(events))}
	for _, e := range log {
		key := bridges.ConversationKey(e.Key)
		page.Approvals = append(page.Approvals, approvalRow{Approval: e.Approval, Key: key, Conv: p.host.Conversation(r.Context(), user, e.ConversationID, key),
			Subject: toolSubject(e.Input), Words: decisionWords(e.Approval)})
	}
	for _, e := range events {
		row := handoffRow{HandoffEvent: e}
		if e.ConversationID != "" {
			row.Conv = p.host.Conversation(r.Context(), user, e.ConversationID, bridges.ConversationKey(e.Key))
		} else if e.Key.Bot != "" {
			row.Where = e.Key.Bot + " · " + e.Key.Channel
		}
		page.Handoff = append(page.Handoff, row)
	}
	p.render(w, r, "audit", page)
}

// configPage shows the effective configuration (after ${ENV} expansion
// and defaults) with every secret redacted: the config types' JSON
// encodings redact tokens and agent env values.
func (p *Pages) configPage(w http.ResponseWriter, r *http.Request) {
	cfg := p.host.Config()
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		p.host.ErrorPage(w, r, http.StatusInternalServerError, "Could not show the configuration: "+err.Error())
		return
	}
	var st ConfigStatus
	if p.configStatus != nil {
		st = p.configStatus()
	}
	p.render(w, r, "config", struct {
		Path, JSON, Summary string
		Status              ConfigStatus
	}{cfg.Path, string(b), cfg.Summary(), st})
}
