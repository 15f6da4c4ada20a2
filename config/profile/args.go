package profile

import (
	"strings"

	"github.com/agentbridge/agentbridge/config/decode"
)

// Flags that agents.*.args must not carry, with what to do instead. They
// change permissions or settings behind the bridge's back, or take over
// what the bridge itself passes to the CLI (the session, the stream-json
// protocol, the permission prompt). Long flags are refused both as
// "--flag value" and as "--flag=value".
var forbiddenArgs = map[string]string{
	"--dangerously-skip-permissions":       "it turns every permission check off; use permission_mode: bypassPermissions with allow_bypass: true",
	"--allow-dangerously-skip-permissions": "it makes bypassing permission checks available; use permission_mode: bypassPermissions with allow_bypass: true",
	"--permission-mode":                    "use permission_mode",
	"--permission-prompt-tool":             "the bridge answers permission prompts itself",
	"--permission-prompts":                 "the bridge answers permission prompts itself",
	"--settings":                           "settings can carry permission rules and hooks the bridge never sees; use rules, allowed_tools and disallowed_tools",
	"--setting-sources":                    "settings can carry permission rules and hooks the bridge never sees; use rules, allowed_tools and disallowed_tools",
	"--allowedTools":                       "use allowed_tools",
	"--allowed-tools":                      "use allowed_tools",
	"--disallowedTools":                    "use disallowed_tools",
	"--disallowed-tools":                   "use disallowed_tools",
	"--add-dir":                            "it lets the agent use more directories without asking; the agent works in workdir",
	"--mcp-config":                         "MCP servers cannot be added through args",
	"--strict-mcp-config":                  "MCP servers cannot be configured through args",
	"--plugin-dir":                         "plugins can carry hooks and permission rules the bridge never sees",
	"--plugin-url":                         "plugins can carry hooks and permission rules the bridge never sees",
	"--session-id":                         "the bridge chooses the session of each conversation",
	"--resume":                             "the bridge resumes each conversation's session itself",
	"--continue":                           "the bridge resumes each conversation's session itself",
	"--fork-session":                       "the bridge manages each conversation's session",
	"--from-pr":                            "the bridge manages each conversation's session",
	"--teleport":                           "the bridge manages each conversation's session",
	"--no-session-persistence":             "the bridge resumes sessions after a restart, which needs them on disk",
	"--model":                              "use model",
	"--append-system-prompt":               "use append_system_prompt",
	"--append-system-prompt-file":          "use append_system_prompt",
	"--system-prompt":                      "replacing the system prompt is not supported; use append_system_prompt",
	"--system-prompt-file":                 "replacing the system prompt is not supported; use append_system_prompt",
	"--max-turns":                          "use max_turns",
	"--input-format":                       "the bridge talks stream-json to the CLI itself",
	"--output-format":                      "the bridge talks stream-json to the CLI itself",
	"--replay-user-messages":               "the bridge talks stream-json to the CLI itself",
	"--print":                              "the bridge runs the CLI in print mode itself",
	"--remote-control":                     "it would expose the session outside the bridge",
	"--cloud":                              "it would run the session outside the bridge",
	"--bg":                                 "the bridge runs the CLI in the foreground and supervises it",
	"--background":                         "the bridge runs the CLI in the foreground and supervises it",
}

// forbiddenShort maps the CLI's one-letter aliases of forbidden flags.
var forbiddenShort = map[byte]string{'p': "--print", 'c': "--continue", 'r': "--resume"}

// forbiddenArg returns the flag that arg is or starts (in its long form)
// and why it is refused, or ok == false when arg is allowed. A cluster of
// short options ("-pc") is refused when any letter is forbidden.
func forbiddenArg(arg string) (flag, why string, ok bool) {
	if strings.HasPrefix(arg, "--") {
		name, _, _ := strings.Cut(arg, "=")
		if why, ok := forbiddenArgs[name]; ok {
			return name, why, true
		}
		if strings.HasPrefix(name, "--dangerously-") {
			return name, "it turns permission checks off", true
		}
		return "", "", false
	}
	if len(arg) < 2 || arg[0] != '-' {
		return "", "", false
	}
	for i := 1; i < len(arg); i++ {
		c := arg[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return "", "", false // not an option cluster, e.g. "-1" as a value
		}
	}
	for i := 1; i < len(arg); i++ {
		if long, ok := forbiddenShort[arg[i]]; ok {
			return "-" + string(arg[i]) + " (" + long + ")", forbiddenArgs[long], true
		}
	}
	return "", "", false
}

// checkArgs reports each forbidden flag in an agent's args at its line.
func checkArgs(d *decode.Decoder, args []string, p string) {
	ap := decode.Child(p, "args")
	if d.IsBad(ap) {
		return
	}
	// strList dropped the items it reported (null or empty), so an item's
	// index in args may be smaller than in the file: skip those indexes.
	j := 0
	for _, a := range args {
		for d.IsBad(decode.Index(ap, j)) {
			j++
		}
		ip := decode.Index(ap, j)
		j++
		if flag, why, bad := forbiddenArg(a); bad {
			d.Addf(d.LineOf(ip), ip, "%s is not allowed in args: %s", flag, why)
		}
	}
}
