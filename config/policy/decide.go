package policy

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Verdict is what the policy rules say about one permission request.
type Verdict struct {
	// Action is ActionAllow, ActionDeny, ActionAsk, or "" when no rule
	// applies (the bridge then shows a card, as for ask).
	Action string
	// Rule is the rule that decided; the zero Rule when none did (no rule
	// applies, or a Bash command that is not understood is asked).
	Rule Rule
	// Why is a short reason for people: which command was denied, allowed
	// or not understood.
	Why string
}

// Decide applies rules, in order, to a request for tool with the given
// subject (the command for Bash, the file path for Read/Edit/Write, the
// URL for WebFetch; see Rule.Match).
//
// For tool Bash the command is parsed and every simple command in it is
// decided on its own, the first rule that matches it winning (see
// docs/rules.md): any simple command denied → deny; every one allowed →
// allow; a command that does not parse or that the policy does not
// understand → ask, never allow; else ask if an ask rule matched one,
// else "" (no rule). Rule lists can be concatenated (profile rules, then
// per-conversation grants): an earlier rule always wins.
//
// For other tools the first rule whose Tool and Match globs match (see
// Rule.Matches) decides.
func Decide(rules []Rule, tool, subject string) Verdict {
	if tool == "Bash" {
		return decideBash(rules, subject)
	}
	for _, r := range rules {
		if knownAction(r.Action) && r.Matches(tool, subject) {
			why := "rule " + r.describe() + " matches"
			if subject != "" {
				why = fmt.Sprintf("`%s` matches rule %s", shorten(subject), r.describe())
			}
			return Verdict{Action: r.Action, Rule: r, Why: why}
		}
	}
	return Verdict{}
}

// shorten puts s on one line and cuts it to 80 characters, for messages.
func shorten(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= 80 {
		return s
	}
	return string([]rune(s)[:79]) + "…"
}

func knownAction(a string) bool {
	return a == ActionAllow || a == ActionDeny || a == ActionAsk
}

// describe names a rule for messages: `Bash "rm -rf *"`.
func (r Rule) describe() string {
	if r.Match == "" {
		return r.Tool
	}
	return fmt.Sprintf("%s %q", r.Tool, r.Match)
}

type bashRule struct {
	Rule
	pat *bashPattern
}

// bashRules returns the rules that apply to Bash with their patterns. A
// rule whose pattern does not compile (Load rejects it) matches nothing.
func bashRules(rules []Rule) []bashRule {
	var out []bashRule
	for _, r := range rules {
		if r.Tool == "" || !knownAction(r.Action) || !globMatch(r.Tool, "Bash") {
			continue
		}
		if p, err := compileBashPattern(r.Match); err == nil {
			out = append(out, bashRule{Rule: r, pat: p})
		}
	}
	return out
}

// decideOne returns the first rule that matches c: an allow rule when it
// surely describes c, a deny or ask rule when it may.
func decideOne(rules []bashRule, c *shCmd) (bashRule, bool) {
	for _, r := range rules {
		if r.Action == ActionAllow && r.pat.allows(c) || r.Action != ActionAllow && r.pat.mayMatch(c) {
			return r, true
		}
	}
	return bashRule{}, false
}

func decideBash(rules []Rule, command string) Verdict {
	brs := bashRules(rules)
	cmds, parseErr := analyzeBash(command)
	var askRule *bashRule
	var unknown, unruled *shCmd
	var allowed []string // why each command is allowed
	var allowRule *Rule  // the first allow rule that decided
	for i := range cmds {
		c := &cmds[i]
		r, ok := decideOne(brs, c)
		switch {
		case ok && r.Action == ActionDeny:
			return Verdict{Action: ActionDeny, Rule: r.Rule, Why: fmt.Sprintf("`%s` matches rule %s", c.display(), r.describe())}
		case c.unknown != "":
			if unknown == nil {
				unknown = c
			}
		case c.wrapper:
			// Needs no allow rule: it is checked through the command it
			// runs (its deny rules were applied above, its ask rules below).
		case !ok:
			if unruled == nil {
				unruled = c
			}
		case r.Action == ActionAllow:
			allowed = append(allowed, fmt.Sprintf("`%s` by %s", c.display(), r.describe()))
			if allowRule == nil {
				allowRule = &r.Rule
			}
		}
		if ok && r.Action == ActionAsk && askRule == nil {
			askRule = &r
		}
	}
	if parseErr != nil {
		// Only rules that match every command apply to text that does not
		// parse; it is never allowed.
		for _, r := range brs {
			if r.pat.any && r.Action == ActionDeny {
				return Verdict{Action: ActionDeny, Rule: r.Rule, Why: "the command does not parse; rule " + r.describe()}
			}
		}
		return Verdict{Action: ActionAsk, Why: "the command does not parse: " + shortErr(parseErr)}
	}
	ask := func(why string) Verdict {
		v := Verdict{Action: ActionAsk, Why: why}
		if askRule != nil {
			v.Rule = askRule.Rule
		}
		return v
	}
	switch {
	case unknown != nil:
		return ask(fmt.Sprintf("`%s` is not understood: %s", unknown.display(), unknown.unknown))
	case askRule != nil:
		return ask("a command matches rule " + askRule.describe())
	case unruled != nil:
		return Verdict{Why: fmt.Sprintf("no rule allows `%s`", unruled.display())}
	case allowRule == nil:
		return Verdict{Why: "no command to decide"}
	}
	if n := len(allowed); n > 3 {
		allowed = append(allowed[:3], fmt.Sprintf("and %d more", n-3))
	}
	return Verdict{Action: ActionAllow, Rule: *allowRule, Why: "allowed: " + strings.Join(allowed, "; ")}
}

// shortErr keeps the first line of a parse error.
func shortErr(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}
