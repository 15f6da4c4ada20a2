package profile

import (
	"strings"

	"github.com/agentbridge/agentbridge/config/decode"
)

// ClaudeOnlyKeys are the profile keys only the Claude Code CLI understands
// (they become its flags or its MCP configuration); a profile of kind acp
// refuses them rather than ignore them: the agent would not do what they
// say.
var ClaudeOnlyKeys = []string{"model", "permission_mode", "allow_bypass", "allowed_tools", "disallowed_tools",
	"append_system_prompt", "max_turns"}

// checkACP checks what a profile of kind acp needs: a command (there is
// no default agent) and none of ClaudeOnlyKeys.
func checkACP(d *decode.Decoder, a *Agent, p string) {
	if strings.TrimSpace(a.Command) == "" {
		cp := decode.Child(p, "command")
		if !d.IsBad(cp) {
			d.Required(cp, "kind acp needs command: the agent's executable, e.g. codex-acp, or gemini with args [--experimental-acp]")
		}
	}
	for _, key := range ClaudeOnlyKeys {
		kp := decode.Child(p, key)
		if d.HasLine(kp) && !d.IsBad(kp) {
			d.Addf(d.LineOf(kp), kp, "%s is a Claude Code setting: an agent of kind acp does not take it (configure the agent itself; rules and approvals apply to every kind)", key)
		}
	}
}
