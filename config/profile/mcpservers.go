package profile

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/agentbridge/agentbridge/config/decode"
)

// MCPServer is a stdio MCP server the profile's agents get (yaml
// agents.NAME.mcp_servers.SERVER): the CLI starts Command inside the
// agent's sandbox, and its tools appear to the model as
// mcp__SERVER__TOOL (asked for like any tool unless allowed_tools names
// them). A server may ask the user for input (MCP elicitation): the
// bridge shows that as a card.
type MCPServer struct {
	Name    string            // the map key
	Command string            // yaml command: the executable, as the sandbox sees it; required
	Args    []string          // yaml args
	Env     map[string]string // yaml env: extra environment for the server; values are secrets
}

// mcpServerName is what a server name may look like: it becomes part of
// tool names (mcp__NAME__TOOL).
var mcpServerName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// ReservedMCPServer is the name of the bridge's own tool server.
const ReservedMCPServer = "bridge"

// mcpServersSection decodes agents.NAME.mcp_servers.
func mcpServersSection(d *decode.Decoder, dst *map[string]MCPServer) decode.Field {
	return func(v *yaml.Node, p string) {
		*dst = map[string]MCPServer{}
		d.Pairs(v, p, func(name string, k, v *yaml.Node) {
			sp := decode.Child(p, name)
			d.SetLine(sp, k.Line)
			s := MCPServer{Name: name}
			d.Fields(v, sp, map[string]decode.Field{
				"command": d.Str(&s.Command),
				"args":    d.StrList(&s.Args),
				"env": func(v *yaml.Node, ep string) {
					s.Env = map[string]string{}
					d.Pairs(v, ep, func(key string, k, v *yaml.Node) {
						kp := decode.Child(ep, key)
						d.SetLine(kp, k.Line)
						if !decode.ValidEnvName(key) {
							d.Addf(k.Line, kp, "bad environment variable name")
							return
						}
						if str, ok := d.Scalar(v, kp, "a string"); ok {
							s.Env[key] = str
						}
					})
				},
			})
			(*dst)[name] = s
		})
	}
}

// finishMCPServers checks a profile's mcp_servers: names fit tool names
// and are not the bridge's own, every server has a command.
func finishMCPServers(d *decode.Decoder, a *Agent, p string) {
	for _, name := range slices.Sorted(maps.Keys(a.MCPServers)) {
		s := a.MCPServers[name]
		sp := decode.Child(decode.Child(p, "mcp_servers"), name)
		switch {
		case d.IsBad(sp):
		case name == ReservedMCPServer:
			d.Addf(d.LineOf(sp), sp, "the MCP server name %q is the bridge's own (its tools for the agent); pick another", name)
		case !mcpServerName.MatchString(name):
			d.Addf(d.LineOf(sp), sp, "bad MCP server name %q: use letters, digits, '_' and '-' (at most 64)", name)
		case strings.TrimSpace(s.Command) == "" && !d.IsBad(decode.Child(sp, "command")):
			d.Addf(d.LineOf(sp), decode.Child(sp, "command"), "an MCP server needs a command (the executable the agent's CLI starts)")
		}
	}
}

// writeMCPSummary adds a profile's MCP servers to a Summary (nothing when
// it has none): names and commands, never env values.
func writeMCPSummary(b *strings.Builder, a *Agent) {
	if len(a.MCPServers) == 0 {
		return
	}
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(a.MCPServers)) {
		s := a.MCPServers[name]
		parts = append(parts, fmt.Sprintf("%s(command=%s env=%s)", name, s.Command, decode.ListOr(envKeys(s.Env), "none")))
	}
	fmt.Fprintf(b, "    mcp_servers: %s\n", strings.Join(parts, " "))
}
