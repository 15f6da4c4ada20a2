package profile

import (
	"cmp"
	"path/filepath"
	"strings"

	"github.com/agentbridge/agentbridge/config/decode"
	"github.com/agentbridge/agentbridge/config/policy"
)

// Finish fills the defaults that depend on other keys, checks every key
// of profile a (at path p, e.g. "agents.coder") and resolves its relative
// paths against baseDir, the config file's directory. Problems go to d.
func Finish(d *decode.Decoder, a *Agent, p, baseDir string) {
	if a.Name == "" {
		d.Addf(d.LineOf(p), p, "agent name must not be empty")
	}
	finishMCPServers(d, a, p)
	a.Kind = cmp.Or(a.Kind, KindClaude)
	acp := a.Kind == KindACP
	if d.OneOf(decode.Child(p, "kind"), a.Kind, "kind", KindClaude, KindACP) && acp {
		checkACP(d, a, p)
	}
	if !acp {
		a.Command = cmp.Or(a.Command, DefaultCommand)
	}
	if strings.ContainsRune(a.Command, '/') || strings.ContainsRune(a.Command, filepath.Separator) {
		a.Command = decode.ResolvePath(baseDir, a.Command)
	}
	a.Workdir = decode.ResolvePath(baseDir, cmp.Or(a.Workdir, DefaultWorkdir))
	if a.Home != "" {
		a.Home = decode.ResolvePath(baseDir, a.Home)
	}
	a.PermissionMode = cmp.Or(a.PermissionMode, DefaultPermissionMode)
	mp := decode.Child(p, "permission_mode")
	if d.OneOf(mp, a.PermissionMode, "permission_mode", ModeDefault, ModeAcceptEdits, ModePlan, ModeBypass) &&
		a.PermissionMode == ModeBypass && !a.AllowBypass {
		d.Addf(d.LineOf(mp), mp, "bypassPermissions requires allow_bypass: true in the same agent")
	}
	if !acp { // the refused flags are the Claude Code CLI's
		checkArgs(d, a.Args, p)
	}
	if tp := decode.Child(p, "max_turns"); a.MaxTurns < 0 {
		d.Addf(d.LineOf(tp), tp, "must not be negative (0 = unlimited)")
	}
	if lp := decode.Child(p, "max_live"); a.MaxLive < 1 {
		d.Addf(d.LineOf(lp), lp, "must be at least 1")
	}
	checkSpares(d, a, p)
	a.Sandbox = cmp.Or(a.Sandbox, DefaultSandbox())
	d.OneOf(decode.Child(p, "sandbox"), a.Sandbox, "sandbox", SandboxBwrap, SandboxNone)
	for i := range a.SandboxBinds {
		bp := decode.Index(decode.Child(p, "sandbox_binds"), i)
		b := &a.SandboxBinds[i]
		switch {
		case d.IsBad(bp):
		case b.Path == "":
			d.Required(decode.Child(bp, "path"), "path is required (a file or directory the agent may see)")
		default:
			b.Path = decode.ResolvePath(baseDir, b.Path)
			if b.Path == "/" {
				d.Addf(d.LineOf(decode.Child(bp, "path")), decode.Child(bp, "path"), `"/" would show the whole machine: bind the directories the agent needs`)
			}
		}
	}
	checkContainment(d, a, p)
	for i, r := range a.Rules {
		rp := decode.Index(decode.Child(p, "rules"), i)
		if !d.IsBad(rp) {
			checkRule(d, r, rp)
		}
	}
}

func checkRule(d *decode.Decoder, r policy.Rule, rp string) {
	tp, mp, ap := decode.Child(rp, "tool"), decode.Child(rp, "match"), decode.Child(rp, "action")
	switch {
	case r.Tool == "":
		d.Required(tp, "tool is required (a tool name such as Bash, Edit or mcp__server__*)")
	default:
		if err := policy.CheckGlob(r.Tool); err != nil {
			d.Addf(d.LineOf(tp), tp, "bad pattern %s: %v", d.Show(tp, r.Tool), err)
		}
	}
	bash := r.Tool != "" && policy.CheckGlob(r.Tool) == nil && r.AppliesTo("Bash")
	if r.Tool != "Bash" { // for other tools match is a glob over the subject
		if err := policy.CheckGlob(r.Match); err != nil {
			d.Addf(d.LineOf(mp), mp, "bad pattern %s: %v", d.Show(mp, r.Match), err)
		}
	}
	if bash && !d.IsBad(mp) { // for Bash, match is a command pattern
		if err := policy.CheckBashPattern(r.Match); err != nil {
			why := err.Error()
			if _, expanded := d.Raw(mp); expanded {
				why = "not a valid command pattern" // the parser's message may quote the expanded value
			}
			d.Addf(d.LineOf(mp), mp, "bad pattern %s: %s (a Bash command pattern, see docs/rules.md)", d.Show(mp, r.Match), why)
		}
	}
	if r.Action == "" {
		d.Required(ap, "action is required (allow, deny or ask)")
	} else {
		d.OneOf(ap, r.Action, "action", policy.ActionAllow, policy.ActionDeny, policy.ActionAsk)
	}
}
