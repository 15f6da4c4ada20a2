package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"
)

// mcpServer is one entry of the mcpServers of session/new and
// session/load (ACP's McpServerStdio).
type mcpServer struct {
	Name    string   `json:"name"`
	Command string   `json:"command"`
	Args    []string `json:"args"`
	Env     []struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	} `json:"env"`
}

// keepMCPServers remembers the mcpServers of a session/new or
// session/load.
func (a *agent) keepMCPServers(params json.RawMessage) {
	var p struct {
		MCPServers []mcpServer `json:"mcpServers"`
	}
	_ = json.Unmarshal(params, &p)
	a.mu.Lock()
	a.mcp = p.MCPServers
	a.mu.Unlock()
}

// mcpTimeout bounds the whole exchange with the MCP server.
const mcpTimeout = 60 * time.Second

// callMCP is the "mcp[:NAME] [TOOL ARGS]" script: it starts the MCP server
// named name (the first when "") as an agent does (the command with its args, its env on top of the
// agent's own), runs initialize, notifications/initialized, tools/list
// and, with a tool, tools/call; it returns what it got, or what failed.
func (a *agent) callMCP(name, rest string) string {
	a.mu.Lock()
	servers := a.mcp
	a.mu.Unlock()
	if len(servers) == 0 {
		return "mcp: no MCP servers offered"
	}
	srv := servers[0]
	if name != "" {
		i := slices.IndexFunc(servers, func(s mcpServer) bool { return s.Name == name })
		if i < 0 {
			var names []string
			for _, s := range servers {
				names = append(names, s.Name)
			}
			return fmt.Sprintf("mcp: no server %s among %s", name, strings.Join(names, ", "))
		}
		srv = servers[i]
	}
	cmd := exec.Command(srv.Command, srv.Args...)
	cmd.Env = os.Environ()
	for _, e := range srv.Env {
		cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return "mcp: " + err.Error()
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "mcp: " + err.Error()
	}
	if err := cmd.Start(); err != nil {
		return "mcp: start " + srv.Name + ": " + err.Error()
	}
	defer func() {
		in.Close() // the relay exits with its stdin
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}()
	c := &mcpClient{in: in, out: bufio.NewReader(out)}
	var got []string
	if _, err := c.call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]string{"name": "fakeacp", "version": "1"}}); err != nil {
		return fmt.Sprintf("mcp %s: initialize: %v (stderr %q)", srv.Name, err, stderr.String())
	}
	_ = c.notify("notifications/initialized")
	list, err := c.call("tools/list", map[string]any{})
	if err != nil {
		return fmt.Sprintf("mcp %s: tools/list: %v", srv.Name, err)
	}
	var tools struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	_ = json.Unmarshal(list, &tools)
	var names []string
	for _, t := range tools.Tools {
		names = append(names, t.Name)
	}
	got = append(got, fmt.Sprintf("mcp %s tools: %s", srv.Name, strings.Join(names, ", ")))
	if tool, args, ok := strings.Cut(strings.TrimSpace(rest), " "); tool != "" {
		if !ok {
			args = "{}"
		}
		res, err := c.call("tools/call", map[string]any{"name": tool, "arguments": json.RawMessage(args)})
		if err != nil {
			got = append(got, fmt.Sprintf("call %s: %v", tool, err))
		} else {
			var r struct {
				IsError bool `json:"isError"`
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			}
			_ = json.Unmarshal(res, &r)
			var texts []string
			for _, c := range r.Content {
				texts = append(texts, c.Text)
			}
			got = append(got, fmt.Sprintf("call %s (error %v): %s", tool, r.IsError, strings.Join(texts, " ")))
		}
	}
	return strings.Join(got, "; ")
}

// mcpClient speaks newline-delimited JSON-RPC with an MCP server.
type mcpClient struct {
	in     io.Writer
	out    *bufio.Reader
	nextID int
}

func (c *mcpClient) notify(method string) error {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method})
	_, err := c.in.Write(append(b, '\n'))
	return err
}

// call sends a request and returns its result, skipping other lines;
// it gives up after mcpTimeout.
func (c *mcpClient) call(method string, params any) (json.RawMessage, error) {
	c.nextID++
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.nextID, "method": method, "params": params})
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		return nil, err
	}
	type answer struct {
		ID     int             `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	got := make(chan answer, 1)
	failed := make(chan error, 1)
	go func() {
		for {
			line, err := c.out.ReadBytes('\n')
			if err != nil {
				failed <- fmt.Errorf("read: %w", err)
				return
			}
			var a answer
			if json.Unmarshal(line, &a) == nil && a.ID == c.nextID {
				got <- a
				return
			}
		}
	}()
	select {
	case a := <-got:
		if len(a.Error) > 0 {
			return nil, fmt.Errorf("error %s", a.Error)
		}
		return a.Result, nil
	case err := <-failed:
		return nil, err
	case <-time.After(mcpTimeout):
		return nil, fmt.Errorf("no answer in %s", mcpTimeout)
	}
}
