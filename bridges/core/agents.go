package core

import (
	"maps"
	"slices"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/agents"
	"github.com/agentbridge/agentbridge/bridges/core/worker"
)

// This file is how the core has agents spawned (bridges/core/agents holds
// the pool and how a profile's agent is spawned): the containment in
// force and the warm spares.

// spawner is how agents are spawned now: CoreOptions.Spawner with the
// containment SetContainment set last.
func (c *Core) spawner() agents.Spawner {
	s := c.opts.Spawner
	if ct := c.contain.Load(); ct != nil {
		s.Containment = *ct
	}
	return s
}

// keepSpares keeps the warm spares of every profile a bot of platforms
// uses (agents.Spawner.KeepSpares), with the agent tools every
// conversation has, and returns a function that stops keeping them.
func (c *Core) keepSpares(platforms map[string]bridges.Platform) (stop func()) {
	tools := worker.SpareTools(c.host, platforms)
	return c.spawner().KeepSpares(c.pool, c.cfg(), slices.Collect(maps.Keys(platforms)), tools, c.log)
}
