package agenttools

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/agentbridge/agentbridge/internal/testkit"
)

// TestReadWorkdirFile: send_file reads only regular files inside the
// workdir, also through symbolic links, never the bridge's own files
// (even inside the workdir), and never more than the cap.
func TestReadWorkdirFile(t *testing.T) {
	outside := t.TempDir()
	secretOutside := filepath.Join(outside, "secret.txt")
	testkit.WriteFile(t, secretOutside, "top secret")
	wd := t.TempDir()
	testkit.WriteFile(t, filepath.Join(wd, "report.txt"), "all green")
	testkit.WriteFile(t, filepath.Join(wd, "sub", "deep.md"), "# deep")
	testkit.WriteFile(t, filepath.Join(wd, "big.bin"), strings.Repeat("x", 101))
	dataDir := filepath.Join(wd, "data") // data_dir inside the workdir (workdir: ".")
	testkit.WriteFile(t, filepath.Join(dataDir, "bridge.db"), "SQLite format 3")
	cfgFile := filepath.Join(wd, "bridge.yaml")
	testkit.WriteFile(t, cfgFile, "bots: []")
	symlink(t, secretOutside, filepath.Join(wd, "escape.txt"))
	symlink(t, outside, filepath.Join(wd, "outdir"))
	symlink(t, "data/bridge.db", filepath.Join(wd, "db-link"))
	symlink(t, "data", filepath.Join(wd, "data-link"))
	symlink(t, "../report.txt", filepath.Join(wd, "sub", "back.txt"))
	symlink(t, filepath.Join(wd, "report.txt"), filepath.Join(wd, "abs-link")) // absolute targets are refused, even inside
	if err := syscall.Mkfifo(filepath.Join(wd, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	hidden := []string{dataDir, cfgFile}

	tests := []struct {
		path    string
		name    string // file name returned; "" = refused
		content string
		why     string // fragment of the refusal
	}{
		{path: "report.txt", name: "report.txt", content: "all green"},
		{path: filepath.Join(wd, "report.txt"), name: "report.txt", content: "all green"},
		{path: "./sub/../report.txt", name: "report.txt", content: "all green"},
		{path: "sub/deep.md", name: "deep.md", content: "# deep"},
		{path: "sub/back.txt", name: "report.txt", content: "all green"}, // a relative link inside the workdir is fine
		{path: "abs-link", why: "it must be a file inside the working directory"},
		{path: "../" + filepath.Base(outside) + "/secret.txt", why: "outside the working directory"},
		{path: secretOutside, why: "outside the working directory"},
		{path: "/etc/passwd", why: "outside the working directory"},
		{path: "escape.txt", why: "it must be a file inside the working directory"},
		{path: "outdir/secret.txt", why: "it must be a file inside the working directory"},
		{path: "data/bridge.db", why: "belongs to the bridge itself"},
		{path: "db-link", why: "belongs to the bridge itself"},
		{path: "data-link/bridge.db", why: "belongs to the bridge itself"},
		{path: "bridge.yaml", why: "belongs to the bridge itself"},
		{path: "big.bin", why: "over the 100 B limit"},
		{path: "fifo", why: "not a regular file"},
		{path: "sub", why: "not a regular file"},
		{path: "missing.txt", why: "no such file"},
		{path: "", why: "no path given"},
		{path: ".", why: "outside the working directory"},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			name, data, err := readWorkdirFile(wd, tc.path, hidden, 100)
			if tc.name == "" {
				if err == nil || !errors.Is(err, errFileRefused) || !strings.Contains(err.Error(), tc.why) {
					t.Fatalf("err = %v, want a refusal containing %q (read %q %q)", err, tc.why, name, data)
				}
				return
			}
			if err != nil || name != tc.name || string(data) != tc.content {
				t.Fatalf("got %q %q %v, want %q %q", name, data, err, tc.name, tc.content)
			}
		})
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// TestAgentToolsMoveTo: send_file follows the agent into a worktree under
// data_dir (worktree.New moves it there): it reads the worktree's files,
// and still refuses the config file and the rest of data_dir.
func TestAgentToolsMoveTo(t *testing.T) {
	data := t.TempDir()
	wt := filepath.Join(data, "worktrees", "coder", "s1")
	cfgFile := filepath.Join(t.TempDir(), "bridge.yaml")
	if err := os.MkdirAll(wt, 0o700); err != nil {
		t.Fatal(err)
	}
	for p, content := range map[string]string{filepath.Join(wt, "report.txt"): "made by the agent", cfgFile: "secret",
		filepath.Join(data, "bridge.db"): "db"} {
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tools := &Server{workdir: t.TempDir(), hidden: []string{data, cfgFile}}
	tools.MoveTo(wt, wt)
	if tools.workdir != wt || !slices.Equal(tools.hidden, []string{cfgFile}) {
		t.Errorf("tools: workdir %s hidden %v, want the worktree and the config file only", tools.workdir, tools.hidden)
	}
	if _, got, err := readWorkdirFile(tools.workdir, "report.txt", tools.hidden, 1<<20); err != nil || string(got) != "made by the agent" {
		t.Errorf("send_file of a worktree file: %q, %v", got, err)
	}
	if _, _, err := readWorkdirFile(tools.workdir, filepath.Join(data, "bridge.db"), tools.hidden, 1<<20); !errors.Is(err, errFileRefused) {
		t.Errorf("send_file of data_dir/bridge.db: err = %v, want refused", err)
	}
	if _, _, err := readWorkdirFile(tools.workdir, cfgFile, tools.hidden, 1<<20); err == nil {
		t.Error("send_file of the config file outside the worktree: no error")
	}
}
