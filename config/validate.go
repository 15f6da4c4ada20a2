package config

import (
	"cmp"
	"maps"
	"net"
	"net/url"
	"slices"
	"strings"

	"github.com/agentbridge/agentbridge/config/decode"
	"github.com/agentbridge/agentbridge/config/profile"
)

// finish fills defaults, checks every cross-field rule and resolves
// relative paths against baseDir. Problems go to d.
func (d *decoder) finish(c *Config, baseDir string) {
	d.finishTop(c, baseDir)
	for _, name := range slices.Sorted(maps.Keys(c.Agents)) {
		profile.Finish(d.Decoder, c.Agents[name], decode.Child("agents", name), baseDir)
	}
	seen := map[string]int{}
	for i, b := range c.Bots {
		if b != nil {
			d.finishBot(c, b, decode.Index("bots", i), seen, i)
		}
	}
	d.finishWeb(c)
	d.finishLimits(c)
	c.Bots = slices.DeleteFunc(c.Bots, func(b *Bot) bool { return b == nil })
	d.finishSchedules(c)
	d.finishHandoff(c)
}

func (d *decoder) finishTop(c *Config, baseDir string) {
	c.DataDir = decode.ResolvePath(baseDir, cmp.Or(c.DataDir, DefaultDataDir))
	d.finishRetention(c)
	d.finishStatusDelay(c)
	d.finishDelivery(c)
	d.finishStore(c)
	d.finishReplicas(c)
	d.finishTranscription(c)
	c.Log.Level = cmp.Or(c.Log.Level, DefaultLogLevel)
	c.Log.Format = cmp.Or(c.Log.Format, DefaultLogFormat)
	d.OneOf("log.level", c.Log.Level, "log level", "debug", "info", "warn", "error")
	d.OneOf("log.format", c.Log.Format, "log format", "text", "json")

	if !d.IsSet("http.listen") && !d.IsBad("http.listen") {
		c.HTTP.Listen = DefaultHTTPListen
	}
	if l := c.HTTP.Listen; l != "" {
		if _, port, err := net.SplitHostPort(l); err != nil || port == "" {
			d.Addf(d.LineOf("http.listen"), "http.listen", `want host:port (e.g. "127.0.0.1:9464", or "" to disable), got %s`, d.Show("http.listen", l))
		}
	}
	if len(c.Bots) == 0 && !d.IsBad("bots") {
		d.Addf(d.LineOf("bots"), "bots", "at least one bot is required")
	}
}

func (d *decoder) finishBot(c *Config, b *Bot, p string, seen map[string]int, i int) {
	np := decode.Child(p, "name")
	switch first, dup := seen[b.Name]; {
	case b.Name == "":
		d.Required(np, "bot name is required")
	case dup:
		d.Addf(d.LineOf(np), np, "duplicate bot name %s (also used by bots[%d] at line %d)", d.Show(np, b.Name), first, d.LineOf(decode.Child(decode.Index("bots", first), "name")))
	default:
		seen[b.Name] = i
	}

	ap := decode.Child(p, "agent")
	switch {
	case b.Agent == "":
		d.Required(ap, "agent is required (a key under agents)")
	case c.Agents[b.Agent] == nil:
		d.Addf(d.LineOf(ap), ap, "agent %s is not defined", d.Show(ap, b.Agent))
	}

	for j, name := range b.Agents {
		np := decode.Index(decode.Child(p, "agents"), j)
		switch {
		case c.Agents[name] == nil:
			d.Addf(d.LineOf(np), np, "agent %s is not defined (bots[].agents lists keys under agents)", d.Show(np, name))
		case slices.Index(b.Agents, name) < j:
			d.Addf(d.LineOf(np), np, "agent %s is listed twice", d.Show(np, name))
		}
	}

	b.Verbosity = cmp.Or(b.Verbosity, DefaultVerbosity)
	d.OneOf(decode.Child(p, "verbosity"), b.Verbosity, "verbosity", VerbosityQuiet, VerbosityCompact, VerbosityFull)

	// Settings mappings of other platforms are decoded (strict keys, types,
	// ${VAR}) but never checked: they are reported as misplaced below.
	for _, pl := range d.platforms {
		if n := d.settingsNode(p, pl.Name); n != nil && pl.Settings != nil && pl.Name != b.Platform {
			pl.Settings(&Section{d: d, c: c, bot: b, index: i, platform: pl.Name, node: n})
		}
	}
	pp := decode.Child(p, "platform")
	names := platformNames(d.platforms)
	own := findPlatform(d.platforms, b.Platform)
	switch {
	case b.Platform == "":
		d.Required(pp, "platform is required ("+decode.OrList(names)+")")
		return
	case own == nil:
		d.OneOf(pp, b.Platform, "platform", names...)
		return
	}
	for _, pl := range d.platforms {
		if d.settingsNode(p, pl.Name) != nil && pl.Settings != nil && pl.Name != b.Platform {
			sp := decode.Child(p, pl.Name)
			d.Addf(d.LineOf(sp), sp, "%s settings given for a %s bot (platform: %s)", pl.Name, b.Platform, b.Platform)
		}
	}
	if own.Settings != nil {
		b.Settings = own.Settings(&Section{d: d, c: c, bot: b, index: i, platform: own.Name, node: d.settingsNode(p, own.Name), own: true})
	}
}

// token reports a missing or empty secret without ever printing it.
func (d *decoder) token(path, value, platform string) {
	if value != "" || d.IsBad(path) {
		return
	}
	if r, ok := d.Raw(path); ok {
		d.Addf(d.LineOf(path), path, "is empty (from %q); required for a %s bot", r, platform)
		return
	}
	d.Required(path, "required for a "+platform+" bot")
}

// apiURL checks an api_url override and returns it with a trailing "/",
// or def when it is empty.
func (d *decoder) apiURL(path, value, def string) string {
	if value == "" {
		return def
	}
	u, err := url.Parse(value)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		d.Addf(d.LineOf(path), path, "want an http(s) URL such as %q, got %s", def, d.Show(path, value))
		return value
	}
	if !strings.HasSuffix(value, "/") {
		value += "/"
	}
	return value
}
