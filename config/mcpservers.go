package config

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
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
func (d *decoder) mcpServersSection(dst *map[string]MCPServer) field {
	return func(v *yaml.Node, p string) {
		*dst = map[string]MCPServer{}
		d.pairs(v, p, func(name string, k, v *yaml.Node) {
			sp := child(p, name)
			d.lines[sp] = k.Line
			s := MCPServer{Name: name}
			d.fields(v, sp, map[string]field{
				"command": d.str(&s.Command),
				"args":    d.strList(&s.Args),
				"env": func(v *yaml.Node, ep string) {
					s.Env = map[string]string{}
					d.pairs(v, ep, func(key string, k, v *yaml.Node) {
						kp := child(ep, key)
						d.lines[kp] = k.Line
						if !validEnvName(key) {
							d.addf(k.Line, kp, "bad environment variable name")
							return
						}
						if str, ok := d.scalar(v, kp, "a string"); ok {
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
func (d *decoder) finishMCPServers(a *Agent, p string) {
	for _, name := range slices.Sorted(maps.Keys(a.MCPServers)) {
		s := a.MCPServers[name]
		sp := child(child(p, "mcp_servers"), name)
		switch {
		case d.bad[sp]:
		case name == ReservedMCPServer:
			d.addf(d.lineOf(sp), sp, "the MCP server name %q is the bridge's own (its tools for the agent); pick another", name)
		case !mcpServerName.MatchString(name):
			d.addf(d.lineOf(sp), sp, "bad MCP server name %q: use letters, digits, '_' and '-' (at most 64)", name)
		case strings.TrimSpace(s.Command) == "" && !d.bad[child(sp, "command")]:
			d.addf(d.lineOf(sp), child(sp, "command"), "an MCP server needs a command (the executable the agent's CLI starts)")
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
		parts = append(parts, fmt.Sprintf("%s(command=%s env=%s)", name, s.Command, listOr(envKeys(s.Env), "none")))
	}
	fmt.Fprintf(b, "    mcp_servers: %s\n", strings.Join(parts, " "))
}
