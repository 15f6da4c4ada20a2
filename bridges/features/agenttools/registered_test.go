package agenttools_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/agentbridge/agentbridge/bridges/core/toolconv"
	"github.com/agentbridge/agentbridge/bridges/features/agenttools"
)

// errOwn is a feature's own refusal sentinel.
var errOwn = toolconv.NewRefusal("echo refused")

// echoTool is a tool a feature registers: it answers its input, refusing
// an empty one with the feature's own sentinel.
var echoTool = agenttools.Tool{
	Name: "echo",
	Define: func(toolconv.Conversation) mcp.Tool {
		return mcp.NewTool("echo", mcp.WithString("say", mcp.Required()))
	},
	Handle: func(_ context.Context, conv toolconv.Conversation, req mcp.CallToolRequest) (string, error) {
		say := req.GetString("say", "")
		if say == "" {
			return "", fmt.Errorf("%w: nothing to say", errOwn)
		}
		return conv.ConvID() + ": " + say, nil
	},
	Detail: func(in map[string]any, _ string) string { return fmt.Sprint(in["say"]) },
}

// TestRegisteredToolServedListedAndCounted: a tool a feature registers is
// served after the built-in ones, listed in that order for
// --allowed-tools, shown on the tool line by its own detail, and its
// feature's refusals are counted and read like the built-in ones.
func TestRegisteredToolServedListedAndCounted(t *testing.T) {
	tools := agenttools.New(echoTool)
	want := []string{"mcp__bridge__send_message", "mcp__bridge__send_file", "mcp__bridge__echo"}
	if got := tools.List().Allowed(); !slices.Equal(got, want) {
		t.Errorf("Allowed = %v, want %v", got, want)
	}
	if short, d, ok := tools.List().Detail("mcp__bridge__echo", map[string]any{"say": "hi"}, ""); short != "echo" || d != "hi" || !ok {
		t.Errorf("Detail = %q %q %v", short, d, ok)
	}
	conv := &recordingConv{benchConv: benchConv{workdir: t.TempDir()}}
	srv := tools.Server(conv)
	if got := call(t, srv, "echo", map[string]any{"say": "hi"}); got != "conv-1: hi" {
		t.Errorf("echo answered %q", got)
	}
	if got := call(t, srv, "echo", map[string]any{}); got != "ERROR: nothing to say" {
		t.Errorf("empty echo answered %q", got)
	}
	if want := []string{"echo:ok", "echo:refused"}; !slices.Equal(conv.calls, want) {
		t.Errorf("counted %v, want %v", conv.calls, want)
	}
	if !errors.Is(fmt.Errorf("x: %w", errOwn), toolconv.ErrRefused) {
		t.Error("a feature's refusal is not a refusal")
	}
}
