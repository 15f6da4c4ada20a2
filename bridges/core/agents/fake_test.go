package agents_test

import (
	"context"
	"errors"
	"sync"

	"github.com/agentbridge/agentbridge/agent"
	"github.com/agentbridge/agentbridge/agent/pool"
	"github.com/agentbridge/agentbridge/bridges/core/agents"
)

// plainPool is an agents.Pool without any optional ability.
type plainPool struct{}

func (plainPool) Acquire(context.Context, string, pool.Limit, agent.Options) (agents.Session, error) {
	return nil, errors.New("plainPool spawns nothing")
}

func (plainPool) Remove(context.Context, string) error { return nil }

// warmPool is an agents.WarmPool that records the spares it is asked to
// keep and reports status for every profile.
type warmPool struct {
	plainPool
	mu     sync.Mutex
	kept   []pool.SpareConfig
	status pool.SpareStatus
}

var _ agents.WarmPool = (*warmPool)(nil)

func (p *warmPool) KeepSpares(cfg pool.SpareConfig) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.kept = append(p.kept, cfg)
}

func (p *warmPool) AcquireNew(context.Context, string, pool.Limit, agent.Options) (agents.Session, string, error) {
	return nil, "", errors.New("warmPool spawns nothing")
}

func (p *warmPool) SpareStatus(string) pool.SpareStatus {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.status
}

func (p *warmPool) setStatus(st pool.SpareStatus) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.status = st
}

// countedPool is a warm pool that counts its processes.
type countedPool struct {
	*warmPool
	n int
}

func (p countedPool) Len() int { return p.n }
