package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentbridge/agentbridge/bridges/adapters/web"
	"github.com/agentbridge/agentbridge/bridges/adapters/web/admin"
	"github.com/agentbridge/agentbridge/bridges/core"
	"github.com/agentbridge/agentbridge/bridges/core/access"
	"github.com/agentbridge/agentbridge/bridges/core/agents"
	"github.com/agentbridge/agentbridge/bridges/features/reload"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/store"
)

// Triggers of a reload, as audited and shown.
const (
	triggerSignal = "signal" // SIGHUP (systemctl reload, bridge reload)
	triggerForce  = "signal -now"
	triggerFile   = "file" // the config file changed
)

// reloader re-reads the config file of a running bridge and applies it
// all or nothing: the new file is validated like check-config, compared
// with the config in force (config.Compare), refused whole when invalid or
// when it changes what needs a restart, and otherwise made current in one
// step (config.Live) and handed to the core, the web console and the bots.
// Every attempt is logged and audited (store.ConfigReload); the last
// refusal is shown by /healthz and the operator view until a reload
// succeeds. Reloads run one at a time.
type reloader struct {
	path      string
	lookupEnv func(string) (string, bool)
	force     os.Signal // the signal that reloads with force (watch)
	live      *config.Live
	core      *core.Core
	console   *web.Console      // nil without a web console
	access    *access.Authority // told after each reload: open streams ask again (nil in tests)
	bots      *botSet
	contain   *containment // builds the sandboxes and networks of new or changed profiles
	// adjust, when set, changes each config read before it is compared:
	// demo mode's (Options.Adjust), so that a reload keeps what -demo set.
	adjust func(*config.Config) error
	// retention, when set, is told that retention changed (the pruner
	// restarts with it); it never blocks.
	retention func()
	// replicas, when set, records the file each applied generation was
	// read from (replica_config.go).
	replicas *replicaConfigs
	st       *store.Store
	log      *slog.Logger
	now      func() time.Time

	run sync.Mutex // one reload at a time

	mu        sync.Mutex // guards the fields below
	changed   []string   // what the generation in force changed
	refused   []string   // problems of the last refused reload, if it came after the last applied one
	refusedAt time.Time
	checkedAt time.Time // when a reload last read the file, whatever came of it
}

// errUnchanged is reload's answer when the file says what is in force.
var errUnchanged = errors.New("config unchanged")

// reload loads the file and applies it. force replaces agents of changed
// profiles even while a background task runs. A refusal is returned as an
// error listing its problems (one per line); nothing changes then.
func (r *reloader) reload(ctx context.Context, trigger string, force bool) error {
	r.run.Lock()
	defer r.run.Unlock()
	if !r.core.Running() {
		return r.refuse(ctx, trigger, []string{"the bridge is starting or stopping: reload again once it runs"})
	}
	old := r.live.Current()
	sum := fileSum(r.path)
	cfg, err := LoadConfig(r.path, r.lookupEnv)
	if err == nil && r.adjust != nil {
		err = r.adjust(cfg)
	}
	if err != nil {
		return r.refuse(ctx, trigger, problemLines(err))
	}
	d := config.Compare(old, cfg)
	if d.Empty() {
		r.log.Info("config reload: nothing changed", "trigger", trigger, "generation", r.live.Generation().Number)
		r.checked(r.now())
		return errUnchanged
	}
	if len(d.Restart) > 0 {
		var ps []string
		for _, k := range d.Restart {
			ps = append(ps, fmt.Sprintf("%s: %s changed: this needs a restart of the bridge", r.path, k))
		}
		return r.refuse(ctx, trigger, ps)
	}
	// Everything that can fail comes before the new config is made current.
	var confined *agents.Containment
	if len(d.Containment) > 0 {
		ct, err := r.contain.build(ctx, cfg)
		if err != nil {
			return r.refuse(ctx, trigger, []string{fmt.Sprintf("%s: %v", r.path, err)})
		}
		confined = &ct
	}
	if b := cfg.WebBot(); b != nil && slices.Contains(d.BotsAdded, b.Name) && r.console == nil {
		return r.refuse(ctx, trigger, []string{fmt.Sprintf("%s: bots[%s] added: a web bot needs the web console, which starts with the bridge "+
			"when http.listen is set and the config has a web bot or web users: this needs a restart of the bridge", r.path, b.Name)})
	}
	opened, err := r.bots.open(ctx, cfg, botsNamed(cfg, d.BotsAdded, d.BotsRestarted))
	if err != nil {
		return r.refuse(ctx, trigger, []string{fmt.Sprintf("%s: %v", r.path, err)})
	}
	if b := cfg.WebBot(); b != nil && slices.Contains(d.BotsAdded, b.Name) {
		opened[b.Name] = r.console // the console is the web bot's adapter (opened with the bridge)
	}
	var applyUsers func(context.Context) error
	if r.console != nil {
		if applyUsers, err = r.console.PrepareUsers(cfg); err != nil {
			for _, p := range opened {
				r.bots.released("", p)
			}
			return r.refuse(ctx, trigger, []string{fmt.Sprintf("%s: %v", r.path, err)})
		}
	}

	gen := r.live.Set(cfg, r.now(), trigger)
	r.mu.Lock()
	r.changed, r.refused, r.refusedAt, r.checkedAt = d.Keys, nil, time.Time{}, gen.At
	r.mu.Unlock()
	if applyUsers != nil {
		if err := applyUsers(ctx); err != nil {
			r.log.Error("config reload: end the sessions of removed web users", "err", err)
		}
	}
	if r.access != nil {
		r.access.Changed() // web.users, handoff.users, access lists: open streams ask again
	}
	if err := reload.Apply(ctx, r.core, reload.Reload{Diff: d, Started: opened, Stopped: r.bots.released, Force: force,
		Containment: confined}); err != nil {
		r.log.Error("config reload: apply", "generation", gen.Number, "err", err)
	}
	if r.retention != nil && slices.Contains(d.Keys, "retention") {
		r.retention()
	}
	if r.replicas != nil {
		r.replicas.set(sum, gen)
		r.replicas.beat(ctx)
	}
	r.log.Info("config reloaded", "generation", gen.Number, "trigger", trigger, "changed", strings.Join(d.Keys, ", "),
		"bots_added", d.BotsAdded, "bots_removed", d.BotsRemoved, "bots_restarted", d.BotsRestarted,
		"agents_replaced_when_idle", d.ProfilesRespawn, "force", force)
	r.audit(ctx, store.ConfigReload{At: gen.At, Trigger: trigger, Generation: gen.Number, Applied: true, Changed: d.Keys})
	return nil
}

// refuse logs and records a refused reload; the config in force stays.
func (r *reloader) refuse(ctx context.Context, trigger string, problems []string) error {
	now := r.now()
	r.mu.Lock()
	r.refused, r.refusedAt, r.checkedAt = problems, now, now
	r.mu.Unlock()
	gen := r.live.Generation().Number
	for _, p := range problems {
		r.log.Error("config reload refused", "problem", p, "trigger", trigger, "generation", gen)
	}
	r.audit(ctx, store.ConfigReload{At: now, Trigger: trigger, Problems: problems})
	return fmt.Errorf("config reload refused; generation %d stays in force:\n%s", gen, strings.Join(problems, "\n"))
}

// checked notes that a reload read the file at t and changed nothing.
func (r *reloader) checked(t time.Time) {
	r.mu.Lock()
	r.checkedAt = t
	r.mu.Unlock()
}

func (r *reloader) audit(ctx context.Context, rec store.ConfigReload) {
	if err := r.st.AddConfigReload(ctx, rec); err != nil {
		r.log.Error("config reload: audit record", "err", err)
	}
}

// status is what /healthz and the operator view show.
func (r *reloader) status() admin.ConfigStatus {
	g := r.live.Generation()
	r.mu.Lock()
	defer r.mu.Unlock()
	return admin.ConfigStatus{Generation: g.Number, At: g.At, Trigger: g.Trigger, Changed: r.changed,
		Refused: r.refused, RefusedAt: r.refusedAt, CheckedAt: r.checkedAt}
}

// problemLines are a load error's lines: a *config.ValidationError's
// problems as check-config prints them ("file:12: path: message"), else
// the error (an unreadable file).
func problemLines(err error) []string {
	var ve *config.ValidationError
	if errors.As(err, &ve) {
		return strings.Split(ve.Error(), "\n")
	}
	return []string{err.Error()}
}

// botsNamed returns cfg's bots of the given name lists.
func botsNamed(cfg *config.Config, lists ...[]string) []*config.Bot {
	var out []*config.Bot
	for _, names := range lists {
		for _, n := range names {
			if b := cfg.Bot(n); b != nil {
				out = append(out, b)
			}
		}
	}
	return out
}
