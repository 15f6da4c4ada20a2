package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
)

// waitTimeout bounds every wait for a frame of the CLI.
const waitTimeout = 90 * time.Second

// driver runs one claude process in stream-json mode against the fake
// model and records every line both ways as a transcript
// ({"t","dir","msg"}, the format of the stored captures).
type driver struct {
	bin, home, work, tmp string
	env                  []string
	start                time.Time
	cmd                  *exec.Cmd
	stdin                io.WriteCloser
	lines                chan map[string]any
	done                 chan struct{}
	stderr               strings.Builder
	mu                   sync.Mutex
	out                  []string // transcript lines
	rewrite              *strings.Replacer
	seq                  int
	sid                  string   // the session id of the first spawn
	extraEnv             []string // added to the next spawns' environment
}

// spawn starts the CLI with the flags the bridge uses plus extra.
func (d *driver) spawn(extra ...string) error {
	args := append([]string{"-p", "--output-format", "stream-json", "--input-format", "stream-json", "--verbose",
		"--permission-prompt-tool", "stdio", "--include-partial-messages"}, extra...)
	d.cmd = exec.Command(d.bin, args...)
	d.cmd.Dir = d.work
	d.cmd.Env = append(append(append([]string{}, d.env...), d.extraEnv...), "HOME="+d.home, "TMPDIR="+d.tmp, "PATH="+os.Getenv("PATH"))
	d.cmd.Stderr = &d.stderr
	var err error
	if d.stdin, err = d.cmd.StdinPipe(); err != nil {
		return fmt.Errorf("spawn: %w", err)
	}
	stdout, err := d.cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("spawn: %w", err)
	}
	d.record("note", map[string]any{"spawn": append([]string{"claude"}, args...), "env": d.extraEnv})
	if err := d.cmd.Start(); err != nil {
		return fmt.Errorf("spawn %s: %w", d.bin, err)
	}
	d.lines, d.done = make(chan map[string]any, 4096), make(chan struct{})
	go func() {
		defer close(d.done)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				d.recordRaw("cli->host", json.RawMessage(mustJSON(sc.Text())))
				continue
			}
			d.recordRaw("cli->host", json.RawMessage(sc.Bytes()))
			d.lines <- m
		}
	}()
	return nil
}

// stop closes stdin and waits for the process to exit (killing it after a
// bound).
func (d *driver) stop() {
	if d.cmd == nil {
		return
	}
	_ = d.stdin.Close()
	waited := make(chan struct{})
	go func() { _ = d.cmd.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(20 * time.Second):
		_ = d.cmd.Process.Kill()
		<-waited
	}
	<-d.done
	d.record("note", map[string]any{"exit": d.cmd.ProcessState.ExitCode()})
	for _, l := range strings.Split(strings.TrimSpace(d.stderr.String()), "\n") {
		if l != "" {
			d.record("stderr", l)
		}
	}
	d.stderr.Reset()
	d.cmd = nil
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only strings and maps of plain values are marshalled here
	}
	return b
}

func (d *driver) record(dir string, v any) { d.recordRaw(dir, json.RawMessage(mustJSON(v))) }

func (d *driver) recordRaw(dir string, msg json.RawMessage) {
	d.mu.Lock()
	defer d.mu.Unlock()
	t := time.Since(d.start).Seconds()
	line := fmt.Sprintf(`{"t": %.4f, "dir": %q, "msg": %s}`, t, dir, d.rewrite.Replace(string(msg)))
	d.out = append(d.out, line)
}

// send writes one frame to the CLI.
func (d *driver) send(v map[string]any) error {
	b := mustJSON(v)
	d.recordRaw("host->cli", b)
	if _, err := d.stdin.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("write to claude: %w", err)
	}
	return nil
}

// user sends a user message with a fresh uuid.
func (d *driver) user(text string) error {
	return d.send(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": text}, "uuid": uuid.NewString()})
}

// control sends a control request and returns its id.
func (d *driver) control(req map[string]any) (string, error) {
	d.seq++
	id := fmt.Sprintf("host-%d", d.seq)
	return id, d.send(map[string]any{"type": "control_request", "request_id": id, "request": req})
}

// waitFor reads frames until one of kind (FrameKind) arrives.
func (d *driver) waitFor(kind string) (map[string]any, error) {
	deadline := time.After(waitTimeout)
	for {
		select {
		case m := <-d.lines:
			if FrameKind(m) == kind {
				return m, nil
			}
			if m["type"] == "result" {
				return nil, fmt.Errorf("the turn ended before a %s", kind)
			}
		case <-d.done:
			select {
			case m := <-d.lines:
				if FrameKind(m) == kind {
					return m, nil
				}
				continue
			default:
			}
			return nil, fmt.Errorf("claude exited while waiting for %s (its stderr is in the transcript)", kind)
		case <-deadline:
			return nil, fmt.Errorf("no %s from claude within %v", kind, waitTimeout)
		}
	}
}

// waitResult waits for the next result frame.
func (d *driver) waitResult() (map[string]any, error) {
	deadline := time.After(waitTimeout)
	for {
		select {
		case m := <-d.lines:
			if m["type"] == "result" {
				return m, nil
			}
		case <-d.done:
			return nil, errors.New("claude exited while waiting for a result (its stderr is in the transcript)")
		case <-deadline:
			return nil, fmt.Errorf("no result from claude within %v", waitTimeout)
		}
	}
}

// answer replies to a can_use_tool request: allow with input (nil = the
// request's own), or deny with msg.
func (d *driver) answer(req map[string]any, allow bool, input any, msg string) error {
	r, _ := req["request"].(map[string]any)
	resp := map[string]any{"behavior": "deny", "message": msg}
	if allow {
		if input == nil {
			input = r["input"]
		}
		resp = map[string]any{"behavior": "allow", "updatedInput": input}
	}
	return d.send(map[string]any{"type": "control_response", "response": map[string]any{
		"subtype": "success", "request_id": req["request_id"], "response": resp}})
}

// scenario is one scripted conversation; run drives d (already spawned
// with a fresh --session-id).
type scenario struct {
	name string
	run  func(d *driver) error
}

func turn(d *driver, text string) error {
	if err := d.user(text); err != nil {
		return err
	}
	_, err := d.waitResult()
	return err
}

// scenarios are the main conversations of the bridge: a first reply, a
// follow-up with history, a tool allowed and denied, a question, an
// interrupt, back-to-back messages, an API error, a background task, an
// unknown control request and a resume.
var scenarios = []scenario{
	{"hello", func(d *driver) error {
		if _, err := d.control(map[string]any{"subtype": "initialize"}); err != nil {
			return err
		}
		if _, err := d.waitFor("control_response/success"); err != nil {
			return err
		}
		return turn(d, "hello")
	}},
	{"followup", func(d *driver) error {
		if err := turn(d, "remember the word kiwi"); err != nil {
			return err
		}
		return turn(d, "[echo-history]")
	}},
	{"allow", func(d *driver) error { return toolTurn(d, "[bash touch allowed.txt]", true) }},
	{"deny", func(d *driver) error { return toolTurn(d, "[bash touch denied.txt]", false) }},
	{"ask", func(d *driver) error {
		if err := d.user("[ask Pick one | Apple | Pear]"); err != nil {
			return err
		}
		req, err := d.waitFor("control_request/can_use_tool")
		if err != nil {
			return err
		}
		in, _ := req["request"].(map[string]any)["input"].(map[string]any)
		if in == nil {
			return errors.New("ask: the permission request has no input")
		}
		in["answers"] = map[string]any{"Pick one": "Apple"}
		if err := d.answer(req, true, in, ""); err != nil {
			return err
		}
		_, err = d.waitResult()
		return err
	}},
	{"interrupt", func(d *driver) error {
		if err := d.user("[slow 100] stop me"); err != nil {
			return err
		}
		if _, err := d.waitFor("stream_event/content_block_delta"); err != nil {
			return err
		}
		if _, err := d.control(map[string]any{"subtype": "interrupt"}); err != nil {
			return err
		}
		_, err := d.waitResult()
		return err
	}},
	{"queued", func(d *driver) error {
		for _, t := range []string{"[slow 5] first", "second", "third"} {
			if err := d.user(t); err != nil {
				return err
			}
		}
		for range 2 { // the CLI may merge queued messages into one turn
			if _, err := d.waitResult(); err != nil {
				return err
			}
		}
		return turn(d, "after")
	}},
	{"apierror", func(d *driver) error { return turn(d, "[error 500]") }},
	{"background", func(d *driver) error {
		if err := toolTurn(d, "[bgbash sleep 1; touch bg.txt]", true); err != nil {
			return err
		}
		_, err := d.waitResult() // the turn the task's end starts
		return err
	}},
	{"unknown-control", func(d *driver) error {
		if _, err := d.control(map[string]any{"subtype": "x_clicheck_unknown"}); err != nil {
			return err
		}
		if _, err := d.waitFor("control_response/error"); err != nil {
			return err
		}
		return turn(d, "still there?")
	}},
	{"resume", func(d *driver) error {
		if err := turn(d, "remember the word fig"); err != nil {
			return err
		}
		d.stop()
		if err := d.spawn("--resume", d.sessionID()); err != nil {
			return err
		}
		return turn(d, "[echo-history]")
	}},
	{"crash-resume", func(d *driver) error { return crashMidTurn(d, false) }},
	{"crash-rerun", func(d *driver) error { return crashMidTurn(d, true) }},
}

// crashMidTurn kills the CLI while it streams a slow reply, then resumes
// the session with the resume reason a failover would give
// (CLAUDE_CODE_RESUME_REASON) and, with rerun, asks the CLI to re-run the
// interrupted turn (CLAUDE_CODE_RESUME_INTERRUPTED_TURN): does it stamp
// resume_reason on any frame?
func crashMidTurn(d *driver, rerun bool) error {
	// A finished turn first: a process killed before it saved anything
	// leaves no session to resume ("No conversation found").
	if err := turn(d, "remember the word plum"); err != nil {
		return err
	}
	if err := d.user("[slow 100] interrupted by a crash"); err != nil {
		return err
	}
	if _, err := d.waitFor("stream_event/content_block_delta"); err != nil {
		return err
	}
	// Kill only once the CLI has saved the prompt: before that, the resumed
	// session has no interrupted turn (a race that made captures differ).
	if err := d.waitSaved("interrupted by a crash"); err != nil {
		return err
	}
	_ = d.cmd.Process.Kill()
	d.stop()
	d.extraEnv = []string{"CLAUDE_CODE_RESUME_REASON=failover"}
	if rerun {
		d.extraEnv = append(d.extraEnv, "CLAUDE_CODE_RESUME_INTERRUPTED_TURN=1")
	}
	if err := d.spawn("--resume", d.sessionID()); err != nil {
		return err
	}
	return turn(d, "[echo-history]")
}

// waitSaved waits until the session's transcript file (under HOME's
// .claude/projects) contains text, polling with a bound.
func (d *driver) waitSaved(text string) error {
	deadline := time.Now().Add(waitTimeout)
	for time.Now().Before(deadline) {
		files, _ := filepath.Glob(filepath.Join(d.home, ".claude", "projects", "*", d.sid+".jsonl"))
		for _, f := range files {
			if b, err := os.ReadFile(f); err == nil && strings.Contains(string(b), text) {
				return nil
			}
		}
		time.Sleep(20 * time.Millisecond) // polling a file the CLI writes: no event to wait on
	}
	return fmt.Errorf("the CLI did not save %q in its session file within %v", text, waitTimeout)
}

func toolTurn(d *driver, text string, allow bool) error {
	if err := d.user(text); err != nil {
		return err
	}
	req, err := d.waitFor("control_request/can_use_tool")
	if err != nil {
		return err
	}
	if err := d.answer(req, allow, nil, "not now"); err != nil {
		return err
	}
	_, err = d.waitResult()
	return err
}

// sessionID is the id given at the first spawn.
func (d *driver) sessionID() string { return d.sid }

// Capture runs every scenario (or those named in only) with the CLI bin
// against a fake model at baseURL-env, writing transcript-<name>.jsonl into
// out. Scenarios run one after another.
func Capture(ctx context.Context, bin string, env []string, fakeURL, out string, only map[string]bool) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("capture: %w", err)
	}
	var failed []string
	for _, sc := range scenarios {
		if len(only) > 0 && !only[sc.name] {
			continue
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err := captureOne(bin, env, fakeURL, out, sc); err != nil {
			fmt.Fprintf(os.Stderr, "clicheck: scenario %s: %v\n", sc.name, err)
			failed = append(failed, sc.name)
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("capture: scenarios failed: %s", strings.Join(failed, ", "))
	}
	return nil
}

func captureOne(bin string, env []string, fakeURL, out string, sc scenario) error {
	root, err := os.MkdirTemp("", "clicheck-")
	if err != nil {
		return fmt.Errorf("temp dir: %w", err)
	}
	defer os.RemoveAll(root)
	d := &driver{bin: bin, env: env, home: filepath.Join(root, "home"), work: filepath.Join(root, "work"),
		tmp: filepath.Join(root, "tmp"), start: time.Now(), sid: uuid.NewString()}
	for _, p := range []string{d.home, d.work, d.tmp} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			return fmt.Errorf("mkdir: %w", err)
		}
	}
	d.rewrite = strings.NewReplacer(d.work, "/srv/project", d.home, "/home/agent", d.tmp, "$TMPDIR", fakeURL, "http://127.0.0.1:PORT")
	if err := d.spawn("--session-id", d.sid); err != nil {
		return err
	}
	runErr := sc.run(d)
	d.stop()
	var b strings.Builder
	for _, l := range d.out {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(filepath.Join(out, "transcript-"+sc.name+".jsonl"), []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("write transcript: %w", err)
	}
	return runErr
}
