package acp

import (
	"encoding/json"
	"strings"

	"github.com/agentbridge/agentbridge/agent/streamjson"
)

// What an agent reports of its usage, and how it becomes a turn's:
//
//   - usage_update session updates {used, size, cost?: {amount, currency}}
//     carry the context's size and, optionally, the session's cumulative
//     cost: a turn's CostUSD is the growth of a USD cost since the last
//     turn's. A loaded session starts from Config.BilledCost (the host
//     keeps the figure, OnBilled), or from a cost the agent reports while
//     it replays the history, before any prompt.
//     used and size are the context window, not consumption: not recorded.
//   - the prompt result's "usage" {inputTokens, outputTokens,
//     cachedReadTokens, cachedWriteTokens, thoughtTokens} is the turn's
//     tokens; Gemini CLI reports them instead in its result's
//     _meta.quota.token_count {input_tokens, output_tokens}.
//
// An agent that never reported a cost ends every turn with NoCost, which
// the bridge says instead of a cost of $0.

// usageState is the cost reported in the client's session.
type usageState struct {
	seen   bool    // a USD cost was reported
	cost   float64 // the last cumulative cost reported
	billed float64 // the part already given to a turn's Result
}

// onUsageUpdate records a usage_update; it reports whether the update
// was one. c.mu is held.
func (c *Client) onUsageUpdate(params json.RawMessage) bool {
	var p struct {
		Update struct {
			SessionUpdate string `json:"sessionUpdate"`
			Cost          *struct {
				Amount   float64 `json:"amount"`
				Currency string  `json:"currency"`
			} `json:"cost"`
		} `json:"update"`
	}
	if json.Unmarshal(params, &p) != nil || p.Update.SessionUpdate != "usage_update" {
		return false
	}
	if k := p.Update.Cost; k != nil && (strings.EqualFold(k.Currency, "USD") || k.Currency == "") {
		c.usage.seen, c.usage.cost = true, k.Amount
		if c.prompt == 0 && (c.loading || c.settling) {
			c.usage.billed = k.Amount // the loaded session's earlier turns
		}
	}
	return true
}

// turnUsage fills res with the turn's tokens (from the prompt's result)
// and cost (from usage_update), and marks NoCost when the agent never
// reported a cost. c.mu is held.
func (c *Client) turnUsage(res *streamjson.Result, result json.RawMessage) {
	var r struct {
		Usage *struct {
			InputTokens       int64 `json:"inputTokens"`
			OutputTokens      int64 `json:"outputTokens"`
			ThoughtTokens     int64 `json:"thoughtTokens"`
			CachedReadTokens  int64 `json:"cachedReadTokens"`
			CachedWriteTokens int64 `json:"cachedWriteTokens"`
		} `json:"usage"`
		Meta struct {
			Quota struct {
				TokenCount struct {
					Input  int64 `json:"input_tokens"`
					Output int64 `json:"output_tokens"`
				} `json:"token_count"`
			} `json:"quota"`
		} `json:"_meta"`
	}
	if len(result) > 0 && json.Unmarshal(result, &r) == nil {
		if u := r.Usage; u != nil {
			res.Usage = streamjson.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens + u.ThoughtTokens,
				CacheReadInputTokens: u.CachedReadTokens, CacheCreationInputTokens: u.CachedWriteTokens}
		} else {
			tc := r.Meta.Quota.TokenCount
			res.Usage = streamjson.Usage{InputTokens: tc.Input, OutputTokens: tc.Output}
		}
	}
	if !c.usage.seen {
		res.NoCost = true
		return
	}
	res.CostUSD = max(c.usage.cost-c.usage.billed, 0)
	if res.CostUSD > 0 && c.cfg.OnBilled != nil {
		c.cfg.OnBilled(c.usage.cost)
	}
	c.usage.billed = c.usage.cost
}
