package agents

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agentbridge/agentbridge/agent"
	"github.com/agentbridge/agentbridge/agent/pool"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/internal/textcut"
	"github.com/agentbridge/agentbridge/store"
)

// This file is the operator view's lists: the live agent processes and
// the warm spares.

// livePool is implemented by pools that can list their processes
// (NewPool's adapter does).
type livePool interface {
	Snapshot() []pool.LiveInfo
}

// Snapshot lists the live processes of the underlying pool.
func (a agentPool) Snapshot() []pool.LiveInfo { return a.p.Snapshot() }

// Conversations finds a conversation by its id (store.Store is one); an
// error wrapping store.ErrNotFound says there is none.
type Conversations interface {
	ConversationByID(ctx context.Context, id string) (store.Conversation, error)
}

// LiveAgents lists the live agent processes of agents with their
// conversations, read from convs; processes that serve no conversation
// (warm spares) are left out. A pool that cannot list its processes
// gives none.
func LiveAgents(ctx context.Context, agents Pool, convs Conversations) ([]bridges.LiveAgent, error) {
	lp, ok := agents.(livePool)
	if !ok {
		return nil, nil
	}
	var out []bridges.LiveAgent
	for _, li := range lp.Snapshot() {
		conv, err := convs.ConversationByID(ctx, li.Key)
		if err != nil {
			if errors.Is(err, store.ErrNotFound) {
				continue // not a conversation (e.g. a process started ahead of time)
			}
			return nil, fmt.Errorf("live agents: %w", err)
		}
		rss, _ := agent.TreeRSS(li.PID) // 0 when it just exited
		out = append(out, bridges.LiveAgent{
			Key: bridges.ConversationKey(conv.Key), ConversationID: li.Key, Profile: li.Profile, PID: li.PID,
			SessionID: li.SessionID, Started: li.Started, LastActive: li.LastActive, Busy: li.Busy, RSSBytes: rss,
			BackgroundTasks: li.BackgroundTasks,
		})
	}
	return out, nil
}

// WarmSpares reports the warm spares of every profile a bot of cfg uses
// that keeps spares, sorted by profile name; none when agents keep no
// spares (not a WarmPool).
func WarmSpares(agents Pool, cfg *config.Config) []bridges.WarmSpareState {
	wp, ok := agents.(WarmPool)
	if !ok {
		return nil
	}
	seen := map[string]bool{}
	var out []bridges.WarmSpareState
	for _, b := range cfg.Bots {
		if b == nil {
			continue
		}
		for _, pn := range b.Profiles() {
			p := cfg.Agents[pn]
			if p == nil || seen[p.Name] || !p.KeepsSpares() {
				continue
			}
			seen[p.Name] = true
			st := wp.SpareStatus(p.Name)
			ws := bridges.WarmSpareState{Profile: p.Name, Auto: st.Auto, Target: st.Want, Max: st.Max,
				Ready: st.Ready, Starting: st.Starting, MemShort: st.MemShort}
			if st.Failures > 0 && st.Ready == 0 {
				ws.Failing = textcut.OneLine(st.LastError, 200)
			}
			out = append(out, ws)
		}
	}
	slices.SortFunc(out, func(a, b bridges.WarmSpareState) int { return strings.Compare(a.Profile, b.Profile) })
	return out
}
