package spend

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentbridge/agentbridge/bridges/core/render"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/store"
)

// This file enforces the spend limits of config.Config.Limits: before a message
// starts a turn (Gate.Admit), in !cost (Gate.Left), and in metrics.

// Limit scopes and kinds, as they appear in metrics labels and messages.
const (
	scopeUser  = "per_user"
	scopeTotal = "total"

	kindDay   = "usd_per_day"
	kindMonth = "usd_per_month"
	kindHour  = "turns_per_hour"
)

// warnAt is the share of a budget at which a warning is shown (once, until
// the use drops below it again, e.g. in the next window).
const warnAt = 0.8

// maxWarned bounds the limiter's memory of warnings shown: beyond it the
// memory is cleared (a warning may then show once more).
const maxWarned = 10000

// budgetCheck is one budget of a limit, measured now.
type budgetCheck struct {
	scope  string // scopeUser or scopeTotal
	kind   string // kindDay, kindMonth or kindHour
	limit  float64
	used   float64
	resets time.Time // when used starts again from 0 (day, month) or drops below limit (hour)
}

// epsilon absorbs float rounding in sums of costs (a budget of $0.0025
// is used up after 2.5 turns of $0.001, not a hair later).
const epsilon = 1e-9

func (b budgetCheck) exceeded() bool { return b.used >= b.limit-epsilon }
func (b budgetCheck) warns() bool    { return !b.exceeded() && b.used >= warnAt*b.limit-epsilon }

// percent is the share of the budget used, rounded down.
func (b budgetCheck) percent() int { return int(math.Floor(100*b.used/b.limit + epsilon)) }

// limiter remembers which warnings were shown. Safe for concurrent use.
type limiter struct {
	mu     sync.Mutex
	warned map[warnKey]bool
}

type warnKey struct{ bot, scope, user, kind string }

func newLimiter() *limiter { return &limiter{warned: make(map[warnKey]bool)} }

// shouldWarn reports whether the warning for k is due (first time at or
// above warnAt), and re-arms it when use fell below.
func (l *limiter) shouldWarn(k warnKey, warn bool) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !warn {
		delete(l.warned, k)
		return false
	}
	if l.warned[k] {
		return false
	}
	if len(l.warned) >= maxWarned {
		clear(l.warned)
	}
	l.warned[k] = true
	return true
}

// budgetChecks measures every budget of lim for user at now (per_user for
// user, unless user is empty; total for the whole bot). running counts, by
// user ("" for the whole bot), the turns admitted that have not finished
// (nil: none); they count against turns_per_hour.
func budgetChecks(ctx context.Context, st *store.Store, lim *config.Limit, user string, now time.Time, running map[string]int) ([]budgetCheck, error) {
	day, month := calendarStarts(now, lim.Location)
	var out []budgetCheck
	for _, s := range []struct {
		scope, user string
		b           config.Budget
	}{{scopeUser, user, lim.PerUser}, {scopeTotal, "", lim.Total}} {
		if s.b.IsZero() || s.scope == scopeUser && user == "" {
			continue // a message nobody wrote (e.g. scheduled) has no personal budget
		}
		for _, w := range []struct {
			kind          string
			limit         float64
			since, resets time.Time
		}{
			{kindDay, s.b.USDPerDay, day, day.AddDate(0, 0, 1)},
			{kindMonth, s.b.USDPerMonth, month, month.AddDate(0, 1, 0)},
			{kindHour, float64(s.b.TurnsPerHour), now.Add(-time.Hour), time.Time{}},
		} {
			if w.limit <= 0 {
				continue
			}
			q := store.SpendQuery{Bot: lim.Bot, UserID: s.user, Since: w.since}
			sp, err := st.Spend(ctx, q)
			if err != nil {
				return nil, fmt.Errorf("check %s %s limit: %w", s.scope, w.kind, err)
			}
			bc := budgetCheck{scope: s.scope, kind: w.kind, limit: w.limit, used: sp.CostUSD, resets: w.resets}
			if w.kind == kindHour {
				bc.used = float64(sp.Turns + int64(running[s.user]))
				bc.resets = now
				if sp.Turns >= int64(s.b.TurnsPerHour) {
					// Free again when the turn that keeps the count at the limit leaves the hour.
					t, err := st.NthTurnTime(ctx, q, sp.Turns-int64(s.b.TurnsPerHour))
					if err != nil {
						return nil, fmt.Errorf("check %s %s limit: %w", s.scope, w.kind, err)
					}
					bc.resets = t.Add(time.Hour)
				}
			}
			out = append(out, bc)
		}
	}
	return out, nil
}

// calendarStarts returns the start of now's day and month in loc (UTC when
// nil): the windows of usd_per_day and usd_per_month. The next ones start
// a calendar day or month later (AddDate), whatever the day's length.
func calendarStarts(now time.Time, loc *time.Location) (day, month time.Time) {
	if loc == nil {
		loc = time.UTC
	}
	l := now.In(loc)
	return time.Date(l.Year(), l.Month(), l.Day(), 0, 0, 0, 0, loc), time.Date(l.Year(), l.Month(), 1, 0, 0, 0, 0, loc)
}

// Counter counts what the limits did (metrics.Metrics is one; nil-safe).
type Counter interface {
	LimitRefused(bot, scope, kind string)
	LimitWarned(bot, scope, kind string)
}

// Gate enforces the spend limits of a config (worker.SpendGate). Safe for
// concurrent use.
type Gate struct {
	cfg     config.Source // read at each check: a reload's limits apply to the next message
	st      *store.Store
	limits  *limiter
	metrics Counter

	// mu makes a check and the admission it allows one step, so that two
	// messages checked at once cannot both take the last turn.
	mu sync.Mutex
	// admitted are the ledger messages admitted whose turn has not
	// finished (their ledger row is not final yet): their usage is not
	// recorded, so they count against turns_per_hour from here.
	admitted map[string]admission
}

// admission is one message admitted (see Gate.admitted).
type admission struct{ bot, user string }

// New returns the gate of cfg's limits (the config in force at each
// check: a *config.Config or a reloading *config.Live), measuring usage in
// st and counting in metrics (may be nil).
func New(cfg config.Source, st *store.Store, metrics Counter) *Gate {
	return &Gate{cfg: cfg, st: st, limits: newLimiter(), metrics: metrics, admitted: make(map[string]admission)}
}

// exempt reports whether user is not subject to lim: admins, when the
// limit says so.
func exempt(lim *config.Limit, bot *config.Bot, user string) bool {
	return lim.ExemptAdmins && slices.Contains(bot.Access.Admins, user)
}

// Admit decides whether ledger message msgID of user (userName) may go to
// bot's agent at now under the bot's spend limit. It returns ok=false with
// the refusal to post when a budget is used up, and warnings to post for
// budgets at 80 % or more. person says a person wrote it: a schedule's
// firing carries nobody's rights, so an admin's exemption does not follow
// the schedules they made. A store error is returned as is: the caller
// keeps the message pending (nothing unchecked reaches the agent).
//
// Turns are counted from the recorded usage plus the messages admitted
// whose ledger row is not final yet (their turn runs, or waits for its
// agent): a quick second message does not slip past turns_per_hour
// before the first turn's usage is written. (A turn between its result
// and its ledger row's completion counts twice for that moment: the
// limit errs on the side of refusing.)
func (g *Gate) Admit(ctx context.Context, bot *config.Bot, msgID, user, userName string, person bool, now time.Time) (ok bool, notices []string, err error) {
	lim := g.cfg.Current().LimitFor(bot.Name)
	if lim == nil || person && exempt(lim, bot, user) {
		return true, nil, nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	running, err := g.running(ctx, bot.Name, msgID)
	if err != nil {
		return false, nil, err
	}
	checks, err := budgetChecks(ctx, g.st, lim, user, now, running)
	if err != nil {
		return false, nil, err
	}
	who := author{user, userName}
	var over []budgetCheck
	for _, bc := range checks {
		if bc.exceeded() {
			over = append(over, bc)
		}
	}
	if len(over) > 0 {
		for _, bc := range over {
			g.count(func(c Counter) { c.LimitRefused(bot.Name, bc.scope, bc.kind) })
		}
		return false, []string{refusalText(who, over, lim, now)}, nil
	}
	for _, bc := range checks {
		k := warnKey{bot.Name, bc.scope, user, bc.kind}
		if bc.scope == scopeTotal {
			k.user = ""
		}
		if g.limits.shouldWarn(k, bc.warns()) {
			g.count(func(c Counter) { c.LimitWarned(bot.Name, bc.scope, bc.kind) })
			notices = append(notices, warningText(who, bc, lim, now))
		}
	}
	if msgID != "" {
		g.admitted[msgID] = admission{bot.Name, user}
	}
	return true, notices, nil
}

// running forgets the admitted messages whose ledger row is final (or
// gone) and counts the others of bot, but except, by user and in all
// (key ""); g.mu is held.
func (g *Gate) running(ctx context.Context, bot, except string) (map[string]int, error) {
	out := map[string]int{}
	for id, a := range g.admitted {
		m, err := g.st.InboxByID(ctx, id)
		switch {
		case errors.Is(err, store.ErrNotFound):
			delete(g.admitted, id)
			continue
		case err != nil:
			return nil, fmt.Errorf("count the turns running: %w", err)
		case m.State.Final():
			delete(g.admitted, id)
			continue
		}
		if a.bot == bot && id != except {
			out[a.user]++
			out[""]++
		}
	}
	return out, nil
}

func (g *Gate) count(f func(Counter)) {
	if g.metrics != nil {
		f(g.metrics)
	}
}

// Left describes, for !cost, what user has left at now of every budget of
// bot's limit ("" when the bot has none).
func (g *Gate) Left(ctx context.Context, bot *config.Bot, user string, now time.Time) (string, error) {
	lim := g.cfg.Current().LimitFor(bot.Name)
	if lim == nil {
		return "", nil
	}
	g.mu.Lock()
	running, err := g.running(ctx, bot.Name, "")
	g.mu.Unlock()
	if err != nil {
		return "", err
	}
	checks, err := budgetChecks(ctx, g.st, lim, user, now, running)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("📉 Budget left:")
	if exempt(lim, bot, user) {
		b.WriteString(" _(you are an admin: limits do not stop you, and your cost counts in the bot's total)_")
	}
	for _, bc := range checks {
		left := max(bc.limit-bc.used, 0)
		b.WriteString("\n• " + capitalize(budgetPhrase(bc)) + ": ")
		if bc.kind == kindHour {
			fmt.Fprintf(&b, "%d of %d turns left", int(left), int(bc.limit))
			if bc.exceeded() {
				b.WriteString(", free again " + resetPhrase(bc.resets, lim, now))
			}
			continue
		}
		fmt.Fprintf(&b, "%s of %s left, resets %s", render.USD(left), render.USD(bc.limit), resetPhrase(bc.resets, lim, now))
	}
	return b.String(), nil
}
