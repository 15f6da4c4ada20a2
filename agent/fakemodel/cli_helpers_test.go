package fakemodel

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/internal/testkit"
	"github.com/google/uuid"
)

// cliMsg is one decoded stdout line of the CLI.
type cliMsg struct {
	Raw  string
	Type string
	Sub  string
	M    map[string]any
}

// cliProc is a running claude CLI in stream-json mode, pointed at a fake.
type cliProc struct {
	t         *testing.T
	cmd       *exec.Cmd
	stdin     io.WriteCloser
	lines     chan cliMsg
	done      chan struct{} // closed when stdout hit EOF
	Workdir   string
	Home      string
	SessionID string
}

// cliOptions tune startCLI.
type cliOptions struct {
	Home, Workdir string   // reuse directories (for --resume); "" = fresh temp dirs
	Args          []string // replaces "--session-id <new uuid>"
}

// startCLI launches the CLI against srv with the documented flags and a
// fresh HOME, TMPDIR and working directory. The process is killed at test
// cleanup if still running.
func startCLI(t *testing.T, srv *Server, opt cliOptions) *cliProc {
	t.Helper()
	bin := testkit.RequireClaude(t)
	p := &cliProc{t: t, lines: make(chan cliMsg, 1024), done: make(chan struct{}), Home: opt.Home, Workdir: opt.Workdir}
	if p.Home == "" {
		p.Home = t.TempDir()
	}
	if p.Workdir == "" {
		p.Workdir = filepath.Join(t.TempDir(), "work")
		if err := os.MkdirAll(p.Workdir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tmp := t.TempDir()
	args := []string{"-p", "--output-format", "stream-json", "--input-format", "stream-json", "--verbose",
		"--permission-prompt-tool", "stdio", "--include-partial-messages"}
	if opt.Args != nil {
		args = append(args, opt.Args...)
	} else {
		p.SessionID = uuid.NewString()
		args = append(args, "--session-id", p.SessionID)
	}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Dir = p.Workdir
	p.cmd.Env = append(srv.Env(), "HOME="+p.Home, "TMPDIR="+tmp, "PATH="+os.Getenv("PATH"))
	stdin, err := p.cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	p.stdin = stdin
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	p.cmd.Stderr = &stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start claude: %v", err)
	}
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			m := cliMsg{Raw: sc.Text()}
			if err := json.Unmarshal(sc.Bytes(), &m.M); err == nil {
				m.Type, _ = m.M["type"].(string)
				m.Sub, _ = m.M["subtype"].(string)
			}
			p.lines <- m
		}
	}()
	t.Cleanup(func() {
		_ = p.stdin.Close()
		waited := make(chan struct{})
		go func() { _ = p.cmd.Wait(); close(waited) }()
		select {
		case <-waited:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
			<-waited
		}
		if t.Failed() && stderr.Len() > 0 {
			t.Logf("claude stderr:\n%s", stderr.String())
		}
	})
	return p
}

// send writes one JSON line to the CLI's stdin.
func (p *cliProc) send(v any) {
	p.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		p.t.Fatal(err)
	}
	if _, err := p.stdin.Write(append(b, '\n')); err != nil {
		p.t.Fatalf("write to claude stdin: %v", err)
	}
}

// sendUser writes a user message and returns its uuid.
func (p *cliProc) sendUser(text string) string {
	p.t.Helper()
	id := uuid.NewString()
	p.send(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": text}, "uuid": id})
	return id
}

// allow answers a can_use_tool control request with the original input.
func (p *cliProc) allow(req cliMsg) {
	p.t.Helper()
	r, _ := req.M["request"].(map[string]any)
	p.send(map[string]any{"type": "control_response", "response": map[string]any{
		"subtype": "success", "request_id": req.M["request_id"],
		"response": map[string]any{"behavior": "allow", "updatedInput": r["input"]},
	}})
}

// next returns the next stdout line, failing the test after timeout.
func (p *cliProc) next(timeout time.Duration) cliMsg {
	p.t.Helper()
	select {
	case m := <-p.lines:
		return m
	case <-p.done:
		select {
		case m := <-p.lines:
			return m
		default:
		}
		p.t.Fatalf("claude stdout closed")
	case <-time.After(timeout):
		p.t.Fatalf("no output from claude within %v", timeout)
	}
	return cliMsg{}
}

// waitFor consumes lines until match returns true, failing after timeout.
func (p *cliProc) waitFor(timeout time.Duration, what string, match func(cliMsg) bool) cliMsg {
	p.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			p.t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		m := p.next(left)
		if match(m) {
			return m
		}
	}
}

// waitResult waits for the next result line.
func (p *cliProc) waitResult(timeout time.Duration) cliMsg {
	p.t.Helper()
	return p.waitFor(timeout, "result", func(m cliMsg) bool { return m.Type == "result" })
}

// str reads a string field of m (dotted path through objects).
func (m cliMsg) str(path string) string {
	var cur any = m.M
	for _, k := range strings.Split(path, ".") {
		obj, ok := cur.(map[string]any)
		if !ok {
			return ""
		}
		cur = obj[k]
	}
	s, _ := cur.(string)
	return s
}
