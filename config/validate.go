package config

import (
	"maps"
	"net"
	"net/url"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentbridge/agentbridge/config/policy"
)

// finish fills defaults, checks every cross-field rule and resolves
// relative paths against baseDir. Problems go to d.
func (d *decoder) finish(c *Config, baseDir string) {
	d.finishTop(c, baseDir)
	for _, name := range slices.Sorted(maps.Keys(c.Agents)) {
		d.finishAgent(c.Agents[name], child("agents", name), baseDir)
	}
	seen := map[string]int{}
	for i, b := range c.Bots {
		if b != nil {
			d.finishBot(c, b, index("bots", i), seen, i)
		}
	}
	d.finishWeb(c)
	d.finishLimits(c)
	c.Bots = slices.DeleteFunc(c.Bots, func(b *Bot) bool { return b == nil })
	d.finishSchedules(c)
}

func (d *decoder) finishTop(c *Config, baseDir string) {
	c.DataDir = resolvePath(baseDir, orDefault(c.DataDir, DefaultDataDir))
	d.finishRetention(c)
	d.finishStatusDelay(c)
	d.finishDelivery(c)
	d.finishStore(c)
	d.finishReplicas(c)
	d.finishTranscription(c)
	c.Log.Level = orDefault(c.Log.Level, DefaultLogLevel)
	c.Log.Format = orDefault(c.Log.Format, DefaultLogFormat)
	d.oneOf("log.level", c.Log.Level, "log level", "debug", "info", "warn", "error")
	d.oneOf("log.format", c.Log.Format, "log format", "text", "json")

	if !d.set["http.listen"] && !d.bad["http.listen"] {
		c.HTTP.Listen = DefaultHTTPListen
	}
	if l := c.HTTP.Listen; l != "" {
		if _, port, err := net.SplitHostPort(l); err != nil || port == "" {
			d.addf(d.lineOf("http.listen"), "http.listen", `want host:port (e.g. "127.0.0.1:9464", or "" to disable), got %s`, d.show("http.listen", l))
		}
	}
	if len(c.Bots) == 0 && !d.bad["bots"] {
		d.addf(d.lineOf("bots"), "bots", "at least one bot is required")
	}
}

func (d *decoder) finishAgent(a *Agent, p, baseDir string) {
	if a.Name == "" {
		d.addf(d.lineOf(p), p, "agent name must not be empty")
	}
	d.finishMCPServers(a, p)
	a.Command = orDefault(a.Command, DefaultCommand)
	if strings.ContainsRune(a.Command, '/') || strings.ContainsRune(a.Command, filepath.Separator) {
		a.Command = resolvePath(baseDir, a.Command)
	}
	a.Workdir = resolvePath(baseDir, orDefault(a.Workdir, DefaultWorkdir))
	if a.Home != "" {
		a.Home = resolvePath(baseDir, a.Home)
	}
	a.PermissionMode = orDefault(a.PermissionMode, DefaultPermissionMode)
	mp := child(p, "permission_mode")
	if d.oneOf(mp, a.PermissionMode, "permission_mode", ModeDefault, ModeAcceptEdits, ModePlan, ModeBypass) &&
		a.PermissionMode == ModeBypass && !a.AllowBypass {
		d.addf(d.lineOf(mp), mp, "bypassPermissions requires allow_bypass: true in the same agent")
	}
	d.checkArgs(a.Args, p)
	if tp := child(p, "max_turns"); a.MaxTurns < 0 {
		d.addf(d.lineOf(tp), tp, "must not be negative (0 = unlimited)")
	}
	if lp := child(p, "max_live"); a.MaxLive < 1 {
		d.addf(d.lineOf(lp), lp, "must be at least 1")
	}
	d.checkSpares(a, p)
	a.Sandbox = orDefault(a.Sandbox, DefaultSandbox())
	d.oneOf(child(p, "sandbox"), a.Sandbox, "sandbox", SandboxBwrap, SandboxNone)
	for i := range a.SandboxBinds {
		bp := index(child(p, "sandbox_binds"), i)
		b := &a.SandboxBinds[i]
		switch {
		case d.bad[bp]:
		case b.Path == "":
			d.required(child(bp, "path"), "path is required (a file or directory the agent may see)")
		default:
			b.Path = resolvePath(baseDir, b.Path)
			if b.Path == "/" {
				d.addf(d.lineOf(child(bp, "path")), child(bp, "path"), `"/" would show the whole machine: bind the directories the agent needs`)
			}
		}
	}
	d.checkContainment(a, p)
	for i, r := range a.Rules {
		rp := index(child(p, "rules"), i)
		if !d.bad[rp] {
			d.checkRule(r, rp)
		}
	}
}

func (d *decoder) checkRule(r policy.Rule, rp string) {
	tp, mp, ap := child(rp, "tool"), child(rp, "match"), child(rp, "action")
	switch {
	case r.Tool == "":
		d.required(tp, "tool is required (a tool name such as Bash, Edit or mcp__server__*)")
	default:
		if err := policy.CheckGlob(r.Tool); err != nil {
			d.addf(d.lineOf(tp), tp, "bad pattern %s: %v", d.show(tp, r.Tool), err)
		}
	}
	bash := r.Tool != "" && policy.CheckGlob(r.Tool) == nil && r.AppliesTo("Bash")
	if r.Tool != "Bash" { // for other tools match is a glob over the subject
		if err := policy.CheckGlob(r.Match); err != nil {
			d.addf(d.lineOf(mp), mp, "bad pattern %s: %v", d.show(mp, r.Match), err)
		}
	}
	if bash && !d.bad[mp] { // for Bash, match is a command pattern
		if err := policy.CheckBashPattern(r.Match); err != nil {
			why := err.Error()
			if _, expanded := d.raw[mp]; expanded {
				why = "not a valid command pattern" // the parser's message may quote the expanded value
			}
			d.addf(d.lineOf(mp), mp, "bad pattern %s: %s (a Bash command pattern, see docs/rules.md)", d.show(mp, r.Match), why)
		}
	}
	if r.Action == "" {
		d.required(ap, "action is required (allow, deny or ask)")
	} else {
		d.oneOf(ap, r.Action, "action", policy.ActionAllow, policy.ActionDeny, policy.ActionAsk)
	}
}

func (d *decoder) finishBot(c *Config, b *Bot, p string, seen map[string]int, i int) {
	np := child(p, "name")
	switch first, dup := seen[b.Name]; {
	case b.Name == "":
		d.required(np, "bot name is required")
	case dup:
		d.addf(d.lineOf(np), np, "duplicate bot name %s (also used by bots[%d] at line %d)", d.show(np, b.Name), first, d.lineOf(child(index("bots", first), "name")))
	default:
		seen[b.Name] = i
	}

	ap := child(p, "agent")
	switch {
	case b.Agent == "":
		d.required(ap, "agent is required (a key under agents)")
	case c.Agents[b.Agent] == nil:
		d.addf(d.lineOf(ap), ap, "agent %s is not defined", d.show(ap, b.Agent))
	}

	b.Verbosity = orDefault(b.Verbosity, DefaultVerbosity)
	d.oneOf(child(p, "verbosity"), b.Verbosity, "verbosity", VerbosityQuiet, VerbosityCompact, VerbosityFull)

	// Settings mappings of other platforms are decoded (strict keys, types,
	// ${VAR}) but never checked: they are reported as misplaced below.
	for _, pl := range d.platforms {
		if n := d.settingsNode(p, pl.Name); n != nil && pl.Settings != nil && pl.Name != b.Platform {
			pl.Settings(&Section{d: d, c: c, bot: b, index: i, platform: pl.Name, node: n})
		}
	}
	pp := child(p, "platform")
	names := platformNames(d.platforms)
	own := findPlatform(d.platforms, b.Platform)
	switch {
	case b.Platform == "":
		d.required(pp, "platform is required ("+orList(names)+")")
		return
	case own == nil:
		d.oneOf(pp, b.Platform, "platform", names...)
		return
	}
	for _, pl := range d.platforms {
		if d.settingsNode(p, pl.Name) != nil && pl.Settings != nil && pl.Name != b.Platform {
			sp := child(p, pl.Name)
			d.addf(d.lineOf(sp), sp, "%s settings given for a %s bot (platform: %s)", pl.Name, b.Platform, b.Platform)
		}
	}
	if own.Settings != nil {
		b.Settings = own.Settings(&Section{d: d, c: c, bot: b, index: i, platform: own.Name, node: d.settingsNode(p, own.Name), own: true})
	}
}

// token reports a missing or empty secret without ever printing it.
func (d *decoder) token(path, value, platform string) {
	if value != "" || d.bad[path] {
		return
	}
	if r, ok := d.raw[path]; ok {
		d.addf(d.lineOf(path), path, "is empty (from %q); required for a %s bot", r, platform)
		return
	}
	d.required(path, "required for a "+platform+" bot")
}

// apiURL checks an api_url override and returns it with a trailing "/",
// or def when it is empty.
func (d *decoder) apiURL(path, value, def string) string {
	if value == "" {
		return def
	}
	u, err := url.Parse(value)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		d.addf(d.lineOf(path), path, "want an http(s) URL such as %q, got %s", def, d.show(path, value))
		return value
	}
	if !strings.HasSuffix(value, "/") {
		value += "/"
	}
	return value
}

// required reports a missing value at path unless a problem is already
// recorded there (e.g. an unset ${VAR}).
func (d *decoder) required(path, msg string) {
	if !d.bad[path] {
		d.addf(d.lineOf(path), path, "%s", msg)
	}
}

// oneOf reports value at path unless it is one of allowed.
func (d *decoder) oneOf(path, value, what string, allowed ...string) bool {
	if slices.Contains(allowed, value) {
		return true
	}
	if !d.bad[path] {
		d.addf(d.lineOf(path), path, "unknown %s %s (want %s)", what, d.show(path, value), orList(allowed))
	}
	return false
}

// orList formats "a, b or c".
func orList(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// resolvePath makes p absolute relative to base (itself absolute).
func resolvePath(base, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(base, p)
}
