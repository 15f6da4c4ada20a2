package sandbox

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/internal/testkit"
)

// fakeInfo is an os.FileInfo for a fake filesystem.
type fakeInfo struct {
	name string
	mode fs.FileMode
}

func (f fakeInfo) Name() string       { return f.name }
func (f fakeInfo) Size() int64        { return 0 }
func (f fakeInfo) Mode() fs.FileMode  { return f.mode }
func (f fakeInfo) ModTime() time.Time { return time.Time{} }
func (f fakeInfo) IsDir() bool        { return f.mode.IsDir() }
func (f fakeInfo) Sys() any           { return nil }

// fakeFS answers lstat/readlink for a merged-/usr system plus the given
// extra directories and files.
func fakeFS(dirs, files []string) (func(string) (os.FileInfo, error), func(string) (string, error)) {
	links := map[string]string{"/bin": "usr/bin", "/lib": "usr/lib", "/lib64": "usr/lib64", "/sbin": "usr/sbin"}
	lstat := func(p string) (os.FileInfo, error) {
		if _, ok := links[p]; ok {
			return fakeInfo{p, fs.ModeSymlink}, nil
		}
		if slices.Contains([]string{"/usr", "/etc", "/sys"}, p) || slices.Contains(dirs, p) {
			return fakeInfo{p, fs.ModeDir}, nil
		}
		if slices.Contains(files, p) {
			return fakeInfo{p, 0}, nil
		}
		return nil, fs.ErrNotExist
	}
	readlink := func(p string) (string, error) {
		if t, ok := links[p]; ok {
			return t, nil
		}
		return "", fs.ErrInvalid
	}
	return lstat, readlink
}

// TestBwrapArgs checks the mount plan: what is visible, in which order.
func TestBwrapArgs(t *testing.T) {
	lstat, readlink := fakeFS(
		[]string{"/srv/cfg", "/srv/cfg/data", "/srv/cfg/work", "/srv/cfg/data/sessions/s1", "/opt/tools", "/home/bridge", "/srv/secret"},
		[]string{"/srv/cfg/bridge.yaml", "/srv/cfg/work/bridge.yaml"},
	)
	tests := []struct {
		name string
		spec Spec
		want []string // these argument runs must appear, in this order
		not  []string // none of these runs may appear
	}{{
		name: "system read-only, merged /usr links, private tmp, namespaces, no caps",
		spec: Spec{Argv: []string{"/opt/tools/claude", "-p"}, Dir: "/srv/cfg/work"},
		want: []string{
			"--die-with-parent --new-session --unshare-pid --unshare-ipc",
			"--cap-drop ALL",
			"--ro-bind /usr /usr --symlink usr/bin /bin",
			"--ro-bind /etc /etc",
			"--proc /proc --dev /dev --tmpfs /tmp",
			"--bind /srv/cfg/work /srv/cfg/work",
			"--chdir /srv/cfg/work -- /opt/tools/claude -p",
		},
		not: []string{"--unshare-net", "--bind / ", "--ro-bind / /"},
	}, {
		name: "data_dir inside the workdir is hidden, the session's own state shows through, remount last",
		spec: Spec{Argv: []string{"/x/claude"}, Dir: "/srv/cfg", Private: []string{"/srv/cfg/data/sessions/s1"},
			Hide: []string{"/srv/cfg/data", "/srv/cfg/bridge.yaml"}},
		want: []string{
			"--bind /srv/cfg /srv/cfg",
			"--tmpfs /srv/cfg/data",
			"--ro-bind /dev/null /srv/cfg/bridge.yaml",
			"--bind /srv/cfg/data/sessions/s1 /srv/cfg/data/sessions/s1",
			"--remount-ro /srv/cfg/data --chdir",
		},
	}, {
		name: "hidden paths that are not visible anyway are left alone",
		spec: Spec{Argv: []string{"/x/claude"}, Dir: "/srv/cfg/work", Hide: []string{"/srv/cfg/data", "/srv/cfg/bridge.yaml"}},
		not:  []string{"--tmpfs /srv/cfg/data", "/dev/null /srv/cfg/bridge.yaml", "--remount-ro"},
	}, {
		name: "unshared home: an empty private directory, then the workdir inside it",
		spec: Spec{Argv: []string{"/x/claude"}, Dir: "/home/bridge/work", Home: "/home/bridge"},
		want: []string{"--tmpfs /home/bridge", "--bind /home/bridge/work /home/bridge/work"},
		not:  []string{"--bind /home/bridge /home/bridge"},
	}, {
		name: "shared home is writable; protect and binds",
		spec: Spec{Argv: []string{"/x/claude"}, Dir: "/srv/cfg/work", Home: "/home/bridge", SharedHome: true,
			Protect: []string{"/srv/cfg/work/.claude"}, ReadOnly: []string{"/x"},
			Binds: []Bind{{Path: "/srv/ref"}, {Path: "/srv/out", Writable: true}}},
		want: []string{
			"--ro-bind /srv/ref /srv/ref",
			"--bind /home/bridge /home/bridge",
			"--bind /srv/out /srv/out",
			"--bind /srv/cfg/work /srv/cfg/work",
			"--ro-bind /srv/cfg/work/.claude /srv/cfg/work/.claude",
		},
	}, {
		name: "a config file inside the workdir is hidden; data_dir wins over a bind of it",
		spec: Spec{Argv: []string{"/x/claude"}, Dir: "/srv/cfg/work", Binds: []Bind{{Path: "/srv/secret"}},
			Hide: []string{"/srv/cfg/work/bridge.yaml", "/srv/secret"}},
		want: []string{"--ro-bind /srv/secret /srv/secret --tmpfs /srv/secret",
			"--bind /srv/cfg/work /srv/cfg/work --ro-bind /dev/null /srv/cfg/work/bridge.yaml"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := " " + strings.Join(bwrapArgs(tc.spec, lstat, readlink), " ") + " "
			at := 0
			for _, w := range tc.want {
				i := strings.Index(got[at:], " "+w+" ")
				if i < 0 {
					t.Fatalf("missing (or out of order) %q in\n%s", w, got)
				}
				at += i + 1
			}
			for _, n := range tc.not {
				if strings.Contains(got, " "+n) {
					t.Errorf("unexpected %q in\n%s", n, got)
				}
			}
		})
	}
}

func TestSpecValidation(t *testing.T) {
	for _, spec := range []Spec{
		{},
		{Argv: []string{"claude"}, Dir: "/w"},
		{Argv: []string{"/c"}, Dir: "w"},
		{Argv: []string{"/c"}, Dir: "/w", Home: "h"},
		{Argv: []string{"/c"}, Dir: "/w", Private: []string{"s"}},
		{Argv: []string{"/c"}, Dir: "/w", Hide: []string{"data"}},
		{Argv: []string{"/c"}, Dir: "/w", Binds: []Bind{{Path: "rel"}}},
	} {
		if _, _, err := (None{}).Command(spec); err == nil {
			t.Errorf("None.Command(%+v) accepted an incomplete spec", spec)
		}
		if _, _, err := (&Bwrap{Path: "/bin/true"}).Command(spec); err == nil {
			t.Errorf("Bwrap.Command(%+v) accepted an incomplete spec", spec)
		}
	}
	path, args, err := (None{}).Command(Spec{Argv: []string{"/c", "-p"}, Dir: "/w"})
	if err != nil || path != "/c" || !slices.Equal(args, []string{"-p"}) {
		t.Errorf("None.Command = %q %q %v", path, args, err)
	}
}

func TestNew(t *testing.T) {
	for name, want := range map[string]string{NameBwrap: NameBwrap, NameNone: NameNone} {
		sb, err := New(name, "")
		if err != nil || sb.Name() != want {
			t.Errorf("New(%q) = %v, %v", name, sb, err)
		}
	}
	if _, err := New("docker", ""); err == nil {
		t.Error("New accepted an unknown sandbox")
	}
}

// TestMissingBwrap: a missing bwrap is a clear error naming the package and
// the opt-out, at Check and at Command.
func TestMissingBwrap(t *testing.T) {
	b := &Bwrap{Path: "/nonexistent/bwrap"}
	err := b.Check(context.Background())
	if !errors.Is(err, ErrBwrapMissing) || !strings.Contains(err.Error(), `"bubblewrap"`) || !strings.Contains(err.Error(), "sandbox: none") {
		t.Errorf("Check: %v", err)
	}
	if _, _, err := b.Command(Spec{Argv: []string{"/c"}, Dir: "/w"}); !errors.Is(err, ErrBwrapMissing) {
		t.Errorf("Command: %v", err)
	}
}

// TestBwrapCheck runs the real bwrap where it is installed (required under
// CI=true).
func TestBwrapCheck(t *testing.T) {
	if _, err := (&Bwrap{}).binary(); err != nil {
		testkit.SkipOrFail(t, "bwrap missing: %v", err)
	}
	if err := (&Bwrap{}).Check(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := (&Bwrap{}).CheckNetwork(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestUnshareNet: bwrap gets --unshare-net only when asked; None refuses.
func TestUnshareNet(t *testing.T) {
	spec := Spec{Argv: []string{"/bin/true"}, Dir: "/w"}
	has := func(args []string) bool { return slices.Contains(args, "--unshare-net") }
	if has(bwrapArgs(spec, os.Lstat, os.Readlink)) {
		t.Error("--unshare-net without UnshareNet")
	}
	spec.UnshareNet = true
	if !has(bwrapArgs(spec, os.Lstat, os.Readlink)) {
		t.Error("no --unshare-net with UnshareNet")
	}
	if _, _, err := (None{}).Command(spec); err == nil {
		t.Error("None accepted UnshareNet")
	}
}

// TestBwrapCheckAppArmor: when bwrap cannot start and AppArmor restricts
// unprivileged user namespaces (the sysctl file is 1, as on Ubuntu 24.04),
// the error says so and gives both supported fixes; otherwise it does not
// mention AppArmor's sysctl.
func TestBwrapCheckAppArmor(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "bwrap")
	script := "#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	sysctl := filepath.Join(dir, "apparmor_restrict_unprivileged_userns")
	for _, tc := range []struct {
		name, value string // value "" = no file
		apparmor    bool
	}{
		{"restricted", "1\n", true},
		{"not restricted", "0\n", false},
		{"no AppArmor", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(sysctl)
			if tc.value != "" {
				if err := os.WriteFile(sysctl, []byte(tc.value), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			err := (&Bwrap{Path: fake, AppArmorSysctl: sysctl}).Check(context.Background())
			if err == nil {
				t.Fatal("Check passed with a failing bwrap")
			}
			msg := err.Error()
			if !strings.Contains(msg, "uid map: Permission denied") || !strings.Contains(msg, "sandbox: none") {
				t.Errorf("error lacks bwrap's reason or the opt-out: %v", err)
			}
			for _, want := range []string{"AppArmor restricts", "/etc/apparmor.d/bwrap", "userns,", "kernel.apparmor_restrict_unprivileged_userns=0"} {
				if got := strings.Contains(msg, want); got != tc.apparmor {
					t.Errorf("mentions %q = %v, want %v: %v", want, got, tc.apparmor, err)
				}
			}
			if !tc.apparmor && !strings.Contains(msg, "unprivileged_userns_clone=1") {
				t.Errorf("error lacks the Debian sysctl: %v", err)
			}
		})
	}
}
