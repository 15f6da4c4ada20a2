// Package strangers tells the people who may not talk to a bot so:
// privately, through the platform's Ephemeral ability (silence where it
// has none), at most once per Every per bot and person, never in the
// conversation, naming nobody and nothing of the bot's configuration. Its
// memory of who was told is bounded (MaxRemembered).
package strangers

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/metrics"
)

// Every is how often one person is told, per bot, that they may not
// talk to it: someone chatting in the bot's threads is told once an hour,
// not on every message nor in every conversation.
const Every = time.Hour

// Notice is the private answer to a stranger: polite, and it names
// nobody and nothing of the bot's configuration.
const Notice = "Sorry, you don't have access to this bot."

// MaxRemembered bounds the memory of who was told. When full, entries
// older than Every are forgotten; if that is not enough, the oldest tenth
// (who may then be told once more), counted in
// agentbridge_memory_evictions_total{what="refusals"}.
const MaxRemembered = 10_000

// evictWhat names the bounded state in agentbridge_memory_evictions_total.
const evictWhat = "refusals"

type refusalKey struct {
	bot  string
	user string
}

// Notices remembers who was told. It is safe for concurrent use.
type Notices struct {
	log     *slog.Logger
	now     func() time.Time
	metrics *metrics.Metrics

	mu      sync.Mutex
	refused map[refusalKey]time.Time // last refusal told per bot and user
}

// New remembers nobody yet; it logs to log, reads the time from now and
// counts in m (nil: nothing).
func New(log *slog.Logger, now func() time.Time, m *metrics.Metrics) *Notices {
	return &Notices{log: log, now: now, metrics: m, refused: make(map[refusalKey]time.Time)}
}

// Refuse tells the author of m, who may not talk to the bot, so on p (the
// bot's adapter; nil: nobody is told), privately and at most once per
// Every per bot and user: through the platform's Ephemeral ability where
// it has one, else not at all. Nothing is posted in the conversation.
func (s *Notices) Refuse(ctx context.Context, p bridges.Platform, m bridges.Inbound) {
	now := s.now()
	s.mu.Lock()
	rk := refusalKey{m.Key.Bot, m.UserID}
	last, told := s.refused[rk]
	if p == nil || told && now.Sub(last) < Every {
		s.mu.Unlock()
		return
	}
	s.makeRoomLocked(now)
	s.refused[rk] = now
	s.mu.Unlock()
	eph, ok := p.(bridges.Ephemeral)
	if !ok {
		s.metrics.StrangerNotice(m.Key.Bot, "none")
		return
	}
	if err := eph.PostEphemeral(ctx, m.Key, m.UserID, Notice); err != nil {
		s.log.Warn("private notice to a stranger failed", "key", m.Key, "user", m.UserID, "err", err)
		s.metrics.StrangerNotice(m.Key.Bot, "failed")
		return
	}
	s.metrics.StrangerNotice(m.Key.Bot, "ephemeral")
}

// Len is how many refusals are remembered.
func (s *Notices) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.refused)
}

// makeRoomLocked makes room in s.refused for one more entry when
// it is full (see MaxRemembered); s.mu is held.
func (s *Notices) makeRoomLocked(now time.Time) {
	if len(s.refused) < MaxRemembered {
		return
	}
	maps.DeleteFunc(s.refused, func(_ refusalKey, at time.Time) bool { return now.Sub(at) >= Every })
	if len(s.refused) < MaxRemembered {
		return
	}
	n := evictOldest(s.refused, MaxRemembered/10)
	s.metrics.Evicted(evictWhat, n)
	s.log.Warn("many refused users within the hour: forgetting the oldest refusals, who may be told again",
		"forgotten", n, "limit", MaxRemembered)
}

// evictOldest deletes the n entries of m with the oldest times and returns
// how many it deleted.
func evictOldest[K comparable](m map[K]time.Time, n int) int {
	keys := slices.SortedFunc(maps.Keys(m), func(a, b K) int { return m[a].Compare(m[b]) })
	n = min(n, len(keys))
	for _, k := range keys[:n] {
		delete(m, k)
	}
	return n
}
