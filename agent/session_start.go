package agent

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"

	"github.com/agentbridge/agentbridge/agent/sandbox"
)

// cliProcess is a started CLI process: the bridge's ends of its stdin
// and stdout pipes, the tail of its stderr, its cgroup, and kill, which
// ends it (the command's context).
type cliProcess struct {
	cmd    *exec.Cmd
	stdin  *os.File
	stdout *os.File
	stderr *tailBuffer
	cg     *sandbox.Cgroup
	kill   context.CancelFunc
}

// startCLI starts the CLI of opts in its own process group, inside its
// own cgroup, with stdin and stdout on pipes. On error nothing it opened
// is left open and no process runs.
func startCLI(opts Options, tmpDir string, link *egressLink, logger *slog.Logger) (cliProcess, error) {
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return cliProcess{}, fmt.Errorf("stdin pipe: %w", err)
	}
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		stdinR.Close()
		stdinW.Close()
		return cliProcess{}, fmt.Errorf("stdout pipe: %w", err)
	}
	// Resource limits: the process starts inside its own cgroup, made
	// first so that the sandbox can show the agent that cgroup (and no
	// other).
	lim := opts.Limits
	if opts.StartCPU > 0 && lim.CPU > 0 {
		lim.CPU = opts.StartCPU
	}
	cg, err := opts.Cgroups.New(lim)
	var path string
	var args []string
	if err != nil {
		err = fmt.Errorf("spawn %s: %w", opts.Command, err)
	} else if path, args, err = commandLine(opts, tmpDir, link, cg.Views()); err != nil {
		if rerr := cg.Remove(); rerr != nil {
			logger.Warn("agent cgroup not removed", "err", rerr)
		}
	}
	if err != nil {
		stdinR.Close()
		stdinW.Close()
		stdoutR.Close()
		stdoutW.Close()
		return cliProcess{}, err
	}
	killCtx, kill := context.WithCancel(context.Background())
	cmd := exec.CommandContext(killCtx, path, args...)
	cmd.Dir = opts.Workdir
	cmd.Env = networkEnv(cliEnv(opts, tmpDir), link, opts.isACP())
	cmd.Stdin = stdinR
	cmd.Stdout = stdoutW
	stderr := newTailBuffer(stderrTailBytes)
	cmd.Stderr = stderr
	// Own process group: terminal signals to the bridge do not reach the
	// agent, and a kill takes the agent's children (tool commands) along;
	// on Linux the process is also killed when the bridge dies.
	cmd.SysProcAttr = procAttr()
	cmd.Cancel = func() error { return killGroup(cmd) }
	cmd.WaitDelay = waitDelay
	if link != nil { // the launcher's descriptor 3 (network.go)
		cmd.ExtraFiles = []*os.File{link.handOff.Child()}
	}
	placed, err := cg.Place(cmd)
	if err == nil {
		err = cmd.Start()
		placed()
	}
	link.startedCLI(err == nil, opts.Network, opts.SessionID, logger)
	// The child has its own copies now (or failed to start).
	stdinR.Close()
	stdoutW.Close()
	if err != nil {
		if rerr := cg.Remove(); rerr != nil {
			logger.Warn("agent cgroup not removed", "err", rerr)
		}
		kill()
		stdinW.Close()
		stdoutR.Close()
		return cliProcess{}, fmt.Errorf("spawn %s: %w", opts.Command, err)
	}
	return cliProcess{cmd: cmd, stdin: stdinW, stdout: stdoutR, stderr: stderr, cg: cg, kill: kill}, nil
}
