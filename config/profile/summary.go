package profile

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/agentbridge/agentbridge/config/decode"
)

// WriteSummary adds profile a's lines to check-config's summary: its main
// settings, its network and its MCP servers. It never writes a secret: of
// env entries only the names appear.
func WriteSummary(b *strings.Builder, a *Agent) {
	if a.Kind == KindACP { // the Claude-only keys mean nothing here
		fmt.Fprintf(b, "  %s: kind=acp command=%s args=%d workdir=%s max_live=%d warm_spares=%s idle_timeout=%s approval_timeout=%s rules=%d sandbox=%s binds=%d worktree=%t env=%s\n",
			a.Name, a.Command, len(a.Args), a.Workdir, a.MaxLive, a.WarmSparesText(), decode.DurOr(a.IdleTimeout, "never"),
			decode.DurOr(a.ApprovalTimeout, "forever"), len(a.Rules), a.Sandbox, len(a.SandboxBinds), a.Worktree, decode.ListOr(envKeys(a.Env), "none"))
		writeNetworkSummary(b, a)
		writeMCPSummary(b, a)
		return
	}
	fmt.Fprintf(b, "  %s: command=%s workdir=%s model=%s permission_mode=%s max_live=%d warm_spares=%s max_turns=%s idle_timeout=%s approval_timeout=%s rules=%d sandbox=%s binds=%d worktree=%t env=%s\n",
		a.Name, a.Command, a.Workdir, cmp.Or(a.Model, "default"), a.PermissionMode, a.MaxLive, a.WarmSparesText(),
		decode.IntOr(a.MaxTurns, "unlimited"), decode.DurOr(a.IdleTimeout, "never"), decode.DurOr(a.ApprovalTimeout, "forever"),
		len(a.Rules), a.Sandbox, len(a.SandboxBinds), a.Worktree, decode.ListOr(envKeys(a.Env), "none"))
	writeNetworkSummary(b, a) // network.go
	writeMCPSummary(b, a)     // mcpservers.go
}
