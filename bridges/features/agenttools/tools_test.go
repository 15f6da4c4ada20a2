package agenttools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/agents"
	"github.com/agentbridge/agentbridge/bridges/core/toolconv"
	"github.com/agentbridge/agentbridge/bridges/core/worker"
	"github.com/agentbridge/agentbridge/bridges/features/agenttools"
)

// The server is the core's WorkdirMover and New's tools its AgentTools.
var (
	_ agents.WorkdirMover = (*agenttools.Server)(nil)
	_ worker.AgentTools   = agenttools.New()
)

// recordingConv is a Conversation that records what the tools did
// through it; uploads is false for a chat that takes no files.
type recordingConv struct {
	benchConv
	uploads bool
	posts   []string
	files   []bridges.Upload
	calls   []string // tool:outcome
}

func (c *recordingConv) UploadLimit() (int64, bool) { return 0, c.uploads }
func (c *recordingConv) PostText(_ context.Context, text string) (int, error) {
	c.posts = append(c.posts, text)
	return 1, nil
}
func (c *recordingConv) Upload(_ context.Context, u bridges.Upload) error {
	c.files = append(c.files, u)
	return nil
}
func (c *recordingConv) ToolCalled(tool, outcome string) { c.calls = append(c.calls, tool+":"+outcome) }

// call runs one tools/call on srv and returns the result's text,
// "ERROR: "-prefixed for a tool error.
func call(t *testing.T, srv interface {
	HandleMCP(context.Context, json.RawMessage) json.RawMessage
}, tool string, args map[string]any) string {
	t.Helper()
	params, err := json.Marshal(map[string]any{"name": tool, "arguments": args})
	if err != nil {
		t.Fatal(err)
	}
	resp := srv.HandleMCP(context.Background(), json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":`+string(params)+`}`))
	var r struct {
		Result struct {
			Content []struct{ Text string } `json:"content"`
			IsError bool                    `json:"isError"`
		} `json:"result"`
	}
	if err := json.Unmarshal(resp, &r); err != nil || len(r.Result.Content) == 0 {
		t.Fatalf("tools/call %s answered %s (%v)", tool, resp, err)
	}
	if r.Result.IsError {
		return "ERROR: " + r.Result.Content[0].Text
	}
	return r.Result.Content[0].Text
}

// TestToolsActThroughTheConversation: the tools reach the chat only
// through toolconv.Conversation: send_file uploads where the chat takes
// files and posts a snippet where it does not; refusals are counted as
// refused and read without their sentinel.
func TestToolsActThroughTheConversation(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.go"), []byte("package x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, uploads := range []bool{true, false} {
		t.Run(fmt.Sprintf("uploads=%v", uploads), func(t *testing.T) {
			conv := &recordingConv{benchConv: benchConv{workdir: dir}, uploads: uploads}
			srv := agenttools.New().Server(conv)
			got := call(t, srv, toolconv.ToolSendFile, map[string]any{"path": "notes.go", "comment": "here"})
			switch {
			case uploads && (len(conv.files) != 1 || conv.files[0].Name != "notes.go" || conv.files[0].Comment != "here" || len(conv.posts) != 0):
				t.Errorf("uploaded %+v, posted %q; want one attachment", conv.files, conv.posts)
			case !uploads && (len(conv.files) != 0 || len(conv.posts) != 1 || !strings.Contains(conv.posts[0], "```go\npackage x")):
				t.Errorf("uploaded %+v, posted %q; want one snippet", conv.files, conv.posts)
			}
			if strings.HasPrefix(got, "ERROR") {
				t.Errorf("send_file answered %q", got)
			}
			if got := call(t, srv, toolconv.ToolSendFile, map[string]any{"path": "../outside"}); got != "ERROR: ../outside is outside the working directory" {
				t.Errorf("send_file outside answered %q", got)
			}
			if got := call(t, srv, toolconv.ToolSendMessage, map[string]any{"text": " "}); got != "ERROR: text is required" {
				t.Errorf("empty send_message answered %q", got)
			}
			want := []string{"send_file:ok", "send_file:refused", "send_message:refused"}
			if strings.Join(conv.calls, " ") != strings.Join(want, " ") {
				t.Errorf("counted %v, want %v", conv.calls, want)
			}
		})
	}
}
