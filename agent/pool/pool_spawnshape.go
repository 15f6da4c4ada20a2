package pool

import (
	"reflect"

	"github.com/agentbridge/agentbridge/agent"
)

// sameSpawn reports whether a spare spawned with template serves a new
// session wanting opts: everything but the session's own id, state
// directory and resume flag must be equal, so anything decided at spawn
// that differs (model, permission mode, workdir, flags, environment,
// sandbox) means a cold spawn.
func sameSpawn(template, opts agent.Options) bool {
	a, errA := template.Normalized()
	b, errB := opts.Normalized()
	if errA != nil || errB != nil {
		return false
	}
	return reflect.DeepEqual(spawnShape(a), spawnShape(b))
}

// spawnShape blanks what differs per session and treats empty and nil
// collections alike.
func spawnShape(o agent.Options) agent.Options {
	o.SessionID, o.Resume, o.StateDir, o.ResumeStamp = "", false, "", ""
	o.Prepare = nil // a hook of the profile, applied at every spawn (Options.Prepare)
	o.StartCPU = 0  // how a spare boots, not what it runs as
	// MCP servers are per session (a spare's are bound at hand-over): only
	// their names are decided at spawn.
	names := make(map[string]agent.MCPServer, len(o.MCPServers))
	for n := range o.MCPServers {
		names[n] = nil
	}
	o.MCPServers = names
	if len(names) == 0 {
		o.MCPServers = nil
	}
	if len(o.Args) == 0 {
		o.Args = nil
	}
	if len(o.AllowedTools) == 0 {
		o.AllowedTools = nil
	}
	if len(o.DisallowedTools) == 0 {
		o.DisallowedTools = nil
	}
	if len(o.Env) == 0 {
		o.Env = nil
	}
	if len(o.Binds) == 0 {
		o.Binds = nil
	}
	if len(o.Hide) == 0 {
		o.Hide = nil
	}
	return o
}
