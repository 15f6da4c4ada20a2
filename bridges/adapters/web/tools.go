package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"github.com/agentbridge/agentbridge/bridges/core/access"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/store"
)

// Tool calls expand to their full input and output. The core writes a
// tool line for the console (a bridges.ToolViewer) as a link to
// "tool:ID" and hands the call to ShowTool, which keeps it (web_tools).
// The markdown renderer turns the link into the line followed by a
// Details button (toolButton); the page's script fetches the call from
// /chat/{thread}/tools/{id} when the button is pressed.

// ShowTool implements bridges.ToolViewer.
func (c *Console) ShowTool(ctx context.Context, key bridges.ConversationKey, call bridges.ToolCall) error {
	return c.st.RecordWebTool(ctx, store.WebTool{Key: store.ConversationKey(key), ID: call.ID, Name: call.Name,
		Input: call.Input, Output: call.Output, IsError: call.IsError, Done: call.Done})
}

// toolLinkRE finds the core's tool line links: a code span linked to
// tool:ID. toolMarkRE finds the marks they become while the text goes
// through markdown and the sanitiser (private-use characters, removed from
// the agent's own text first).
var (
	toolLinkRE = regexp.MustCompile("\\[(`[^`\\n][^\\n]*?`)\\]\\(" + regexp.QuoteMeta(bridges.ToolLinkScheme) + `([A-Za-z0-9_-]{1,100})\)`)
	toolMarkRE = regexp.MustCompile("\uE000([A-Za-z0-9_-]{1,100})\uE001")
)

// markToolLinks replaces tool links with their code span and a mark.
func markToolLinks(text string) string {
	text = strings.NewReplacer("\uE000", "", "\uE001", "").Replace(text)
	return toolLinkRE.ReplaceAllString(text, "$1\uE000$2\uE001")
}

// toolButtons turns the marks in sanitised HTML into Details buttons (the
// id is letters, digits, - and _ only).
func toolButtons(html string) string {
	return toolMarkRE.ReplaceAllString(html, ` <button type="button" class="btn small tool-toggle" data-tool="$1" aria-expanded="false">Details</button>`)
}

// toolIDRE matches a tool call id in a URL.
var toolIDRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,100}$`)

// tool serves one tool call of a conversation the person sees, as JSON:
// {"name", "input" (indented JSON), "output", "error", "done"}.
func (c *Console) tool(w http.ResponseWriter, r *http.Request) {
	cv, ok := c.conversationOf(w, r, access.See)
	if !ok {
		return
	}
	id := r.PathValue("id")
	if !cv.exists || !toolIDRE.MatchString(id) {
		http.NotFound(w, r)
		return
	}
	t, err := c.st.WebTool(r.Context(), store.ConversationKey(cv.key), id)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	input := t.Input
	var v any
	if json.Unmarshal([]byte(input), &v) == nil {
		var b strings.Builder // readable: <, > and & as they are, not \u003c
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if enc.Encode(v) == nil {
			input = strings.TrimSuffix(b.String(), "\n")
		}
	}
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(map[string]any{
		"name": t.Name, "input": input, "output": t.Output, "error": t.IsError, "done": t.Done,
	}); err != nil {
		c.log.Warn("send a tool call", "tool", id, "err", fmt.Errorf("encode: %w", err))
	}
}
