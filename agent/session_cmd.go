package agent

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/agentbridge/agentbridge/agent/sandbox"
	"github.com/agentbridge/agentbridge/agent/streamjson"
)

// Defaults for Options fields left zero.
const (
	DefaultCommand        = "claude"
	DefaultControlTimeout = 10 * time.Second
	DefaultCloseGrace     = 10 * time.Second
	defaultLang           = "C.UTF-8"
	defaultPath           = "/usr/local/bin:/usr/bin:/bin"
)

// Normalized returns opts with defaults filled in and paths made absolute,
// or an error for options the CLI would reject.
func (opts Options) Normalized() (Options, error) {
	switch opts.Kind {
	case "", KindClaude:
		opts.Kind = KindClaude
		if opts.Command == "" {
			opts.Command = DefaultCommand
		}
	case KindACP:
		if opts.Command == "" {
			return opts, fmt.Errorf("agent options: an agent of kind acp needs a Command")
		}
	default:
		return opts, fmt.Errorf("agent options: unknown kind %q (want claude or acp)", opts.Kind)
	}
	if opts.ControlTimeout <= 0 {
		opts.ControlTimeout = DefaultControlTimeout
	}
	if opts.CloseGrace <= 0 {
		opts.CloseGrace = DefaultCloseGrace
	}
	if opts.MaxLineBytes <= 0 {
		opts.MaxLineBytes = streamjson.DefaultMaxLineBytes
	}
	if opts.MCPTimeout <= 0 {
		opts.MCPTimeout = DefaultMCPTimeout
	}
	if opts.Workdir == "" {
		return opts, fmt.Errorf("agent options: Workdir is required")
	}
	abs, err := filepath.Abs(opts.Workdir)
	if err != nil {
		return opts, fmt.Errorf("agent options: workdir %s: %w", opts.Workdir, err)
	}
	opts.Workdir = abs
	if opts.Home != "" {
		if opts.Home, err = filepath.Abs(opts.Home); err != nil {
			return opts, fmt.Errorf("agent options: home: %w", err)
		}
	}
	if opts.StateDir != "" {
		if opts.StateDir, err = filepath.Abs(opts.StateDir); err != nil {
			return opts, fmt.Errorf("agent options: state dir: %w", err)
		}
	}
	if opts.MCPRelay != "" && !filepath.IsAbs(opts.MCPRelay) {
		return opts, fmt.Errorf("agent options: the MCP relay %q is not an absolute path", opts.MCPRelay)
	}
	if opts.Sandbox == nil {
		opts.Sandbox = sandbox.None{}
	}
	switch {
	case opts.Resume && opts.SessionID == "":
		return opts, fmt.Errorf("agent options: Resume needs a SessionID")
	case !opts.Resume && opts.SessionID == "":
		opts.SessionID = uuid.NewString()
	case !opts.Resume:
		if _, err := uuid.Parse(opts.SessionID); err != nil {
			return opts, fmt.Errorf("agent options: session id %q is not a UUID (--session-id needs one): %w", opts.SessionID, err)
		}
	}
	if opts.MaxTurns < 0 {
		return opts, fmt.Errorf("agent options: MaxTurns %d is negative", opts.MaxTurns)
	}
	if !opts.isACP() && opts.PermissionMode == "bypassPermissions" && os.Geteuid() == 0 && opts.Env["IS_SANDBOX"] == "" {
		return opts, fmt.Errorf("agent options: the CLI refuses bypassPermissions as root unless IS_SANDBOX=1 is in the agent env")
	}
	return opts, nil
}

// cliArgs returns the CLI arguments for opts (normalized).
func cliArgs(opts Options) []string {
	if opts.isACP() {
		return append([]string(nil), opts.Args...) // the agent's own command line
	}
	args := []string{
		"-p",
		"--output-format", "stream-json",
		"--input-format", "stream-json",
		"--verbose",
		"--permission-prompt-tool", "stdio",
		"--include-partial-messages",
		// Only the workdir's .claude settings (read-only in the sandbox):
		// never user settings, which live in places the agent can write
		// (its config dir, a shared HOME) and could allow tools or add
		// hooks for its own next start behind the bridge's back.
		"--setting-sources", "project,local",
		// No MCP servers from files: the CLI starts a workdir .mcp.json's
		// servers without asking, so an agent allowed to edit files could
		// run any command at its next start. Servers come only from flags.
		"--strict-mcp-config",
	}
	if opts.Resume {
		args = append(args, "--resume", opts.SessionID)
	} else {
		args = append(args, "--session-id", opts.SessionID)
	}
	if opts.Model != "" {
		args = append(args, "--model", opts.Model)
	}
	if opts.PermissionMode != "" {
		args = append(args, "--permission-mode", opts.PermissionMode)
	}
	// One "--flag=value" per tool: the flags are variadic, and the "="
	// form cannot swallow a following argument. Repeats accumulate.
	for _, t := range opts.AllowedTools {
		args = append(args, "--allowed-tools="+t)
	}
	for _, t := range opts.DisallowedTools {
		args = append(args, "--disallowed-tools="+t)
	}
	if opts.AppendSystemPrompt != "" {
		args = append(args, "--append-system-prompt", opts.AppendSystemPrompt)
	}
	if opts.MaxTurns > 0 {
		args = append(args, "--max-turns", strconv.Itoa(opts.MaxTurns))
	}
	if names := mcpServerNames(opts); len(names) > 0 || len(opts.StdioMCPServers) > 0 {
		cfg, _ := mcpConfigArg(names, opts.StdioMCPServers) // marshalling strings cannot fail
		args = append(args, "--mcp-config", cfg)
	}
	return append(args, opts.Args...)
}

// cliEnv returns the agent's complete environment: PATH, HOME, LANG and
// TMPDIR from the bridge (or defaults), then opts.Env on top. Sorted, so it
// is deterministic.
func cliEnv(opts Options, tmpDir string) []string {
	env := map[string]string{
		"PATH":   os.Getenv("PATH"),
		"HOME":   opts.Home,
		"LANG":   os.Getenv("LANG"),
		"TMPDIR": tmpDir,
	}
	if env["PATH"] == "" {
		env["PATH"] = defaultPath
	}
	if env["HOME"] == "" {
		env["HOME"], _ = os.UserHomeDir()
	}
	if env["LANG"] == "" {
		env["LANG"] = defaultLang
	}
	for k, v := range opts.Env {
		env[k] = v
	}
	switch {
	case opts.StateDir != "" && opts.isACP():
		if opts.Home == "" { // the agent's own state lives under HOME: keep it with the session
			env["HOME"] = acpHome(opts)
		}
	case opts.StateDir != "":
		// After Env: the private state dir is not the profile's to change.
		env["CLAUDE_CONFIG_DIR"] = cliConfigDir(opts)
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		if v != "" {
			out = append(out, k+"="+v)
		}
	}
	sort.Strings(out)
	return out
}

// cliConfigDir is the CLI's config dir inside the session's state dir.
func cliConfigDir(opts Options) string { return filepath.Join(opts.StateDir, "claude") }

// prepareDirs creates the directories a spawn needs: the workdir, Home,
// the state dir with the CLI's config dir (private: 0700) and the
// workdir's settings directories (protectedDirs: read-only in the sandbox).
func prepareDirs(opts Options) error {
	if err := os.MkdirAll(opts.Workdir, 0o755); err != nil {
		return fmt.Errorf("create workdir: %w", err)
	}
	if opts.Home != "" {
		if err := os.MkdirAll(opts.Home, 0o700); err != nil {
			return fmt.Errorf("create home: %w", err)
		}
	}
	if opts.StateDir != "" {
		dirs := []string{cliConfigDir(opts)}
		if opts.isACP() {
			dirs = []string{acpDir(opts), acpHome(opts)}
		}
		for _, d := range dirs {
			if err := os.MkdirAll(d, 0o700); err != nil {
				return fmt.Errorf("create state dir: %w", err)
			}
		}
		if err := os.Chmod(opts.StateDir, 0o700); err != nil {
			return fmt.Errorf("state dir permissions: %w", err)
		}
	}
	if _, ok := opts.Sandbox.(sandbox.None); !ok {
		for _, d := range protectedDirs(opts) {
			if err := os.MkdirAll(filepath.Join(opts.Workdir, d), 0o755); err != nil {
				return fmt.Errorf("create workdir %s: %w", d, err)
			}
		}
	}
	return nil
}

// protectedDirs are the workdir's directories (relative names) that the
// sandbox shows read-only because the agent reads its settings from them:
// .claude for the Claude Code CLI; for an ACP agent also Gemini CLI's
// .gemini and Codex's .codex. An agent that could write them could allow
// itself every tool, or add a hook or server that runs unasked, at its own
// next start. OpenCode's .opencode is not among them: OpenCode writes into
// every .opencode it reads (a .gitignore, at 1.18.33) and stops
// when it cannot; its workdir config is turned off by the profile instead
// (OPENCODE_DISABLE_PROJECT_CONFIG, docs/agents.md).
func protectedDirs(opts Options) []string {
	if opts.isACP() {
		return []string{".claude", ".gemini", ".codex"}
	}
	return []string{".claude"}
}

// commandLine returns the program and arguments that run the CLI for opts
// (normalized) inside its sandbox. The executable is resolved in the
// bridge's PATH with symbolic links followed, so that the sandbox shows
// only its directory. link is the process's egress gate (nil = none);
// cgroup are the process's own cgroup directories as the sandbox shows
// them (sandbox.Cgroup.Views).
func commandLine(opts Options, tmpDir string, link *egressLink, cgroup []sandbox.CgroupView) (string, []string, error) {
	exe, err := exec.LookPath(opts.Command)
	if err != nil {
		return "", nil, fmt.Errorf("find the CLI %q: %w", opts.Command, err)
	}
	if exe, err = filepath.Abs(exe); err != nil {
		return "", nil, fmt.Errorf("find the CLI %q: %w", opts.Command, err)
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	spec := sandbox.Spec{
		Argv:       append([]string{exe}, cliArgs(opts)...),
		Dir:        opts.Workdir,
		Home:       opts.Home,
		SharedHome: opts.Home != "",
		ReadOnly:   []string{filepath.Dir(exe)},
		Binds:      opts.Binds,
		Hide:       opts.Hide,
		Cgroup:     cgroup,
	}
	for _, d := range protectedDirs(opts) {
		spec.Protect = append(spec.Protect, filepath.Join(opts.Workdir, d))
	}
	if spec.Home == "" {
		spec.Home, _ = os.UserHomeDir()
	}
	if opts.StateDir != "" {
		spec.Private = append(spec.Private, opts.StateDir)
		if opts.isACP() {
			// The bridge's record of the agent's session id: read-only.
			spec.Protect = append(spec.Protect, acpDir(opts))
			if opts.Home == "" {
				spec.Home, spec.SharedHome = acpHome(opts), true
			}
			if opts.MCPRelay != "" { // the relay the agent starts for the bridge's tools (acp_tools.go)
				spec.ReadOnly = append(spec.ReadOnly, opts.MCPRelay)
			}
		}
	}
	if tmpDir != "" {
		spec.Private = append(spec.Private, tmpDir)
	} else if t := opts.Env["TMPDIR"]; filepath.IsAbs(t) {
		spec.Private = append(spec.Private, t)
	}
	spec = networkSpec(opts, link, spec) // network.go
	path, args, err := opts.Sandbox.Command(spec)
	if err != nil {
		return "", nil, fmt.Errorf("sandbox %s: %w", opts.Sandbox.Name(), err)
	}
	return path, args, nil
}
