package core_test

import (
	"crypto/sha256"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/store"
)

// settingsFiles hashes every file under roots that the CLI reads
// permission rules from: settings.json, settings.local.json (in any
// .claude directory) and the CLI's state file .claude.json.
func settingsFiles(t *testing.T, roots ...string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	for _, root := range roots {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if os.IsNotExist(err) {
					return nil
				}
				return err
			}
			switch d.Name() {
			case "settings.json", "settings.local.json", ".claude.json":
				b, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				out[p] = sha256.Sum256(b)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestAcceptanceAlwaysAllowStaysInTheBridge: with the real CLI, "Always
// allow" writes no permission rule to disk (no .claude/settings.local.json
// in the workspace, no settings file changed, no rule in the CLI's state
// file); the same request is then allowed without a card in the running
// process (the CLI got the rule for its session) and in a new process,
// where the bridge's grant answers it.
func TestAcceptanceAlwaysAllowStaysInTheBridge(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	l := startLive(t, liveSetup{home: home})
	k := key("grant")
	const cmd = "touch granted.txt"

	// A first turn so the CLI has written whatever state it writes anyway.
	l.send(k, "m0", "bob", "hello")
	l.waitReply(k, "pong: hello")
	l.waitFinal(k)
	before := settingsFiles(t, home, l.workdir)

	l.send(k, "m1", "bob", "["+"bash "+cmd+"]")
	card := l.waitLiveCard(k, cmd)
	if _, err := l.plat.Click(ctxT(t), k, card.CardID, bridges.ChoiceAlways, "carol", "carol"); err != nil {
		t.Fatal(err)
	}
	l.waitFinal(k)
	if _, err := os.Stat(filepath.Join(l.workdir, "granted.txt")); err != nil {
		t.Fatalf("the always-allowed command did not run: %v", err)
	}

	// Same process: the CLI holds the rule for its session.
	if err := os.Remove(filepath.Join(l.workdir, "granted.txt")); err != nil {
		t.Fatal(err)
	}
	l.send(k, "m2", "bob", "["+"bash "+cmd+"]")
	l.waitFinal(k)
	if _, err := os.Stat(filepath.Join(l.workdir, "granted.txt")); err != nil {
		t.Errorf("the second request did not run: %v", err)
	}

	// A new process without the session rule: the bridge's grant answers.
	l.send(k, "c1", "bob", "!new")
	l.waitLive(k, "Started a fresh session")
	l.send(k, "m3", "bob", "["+"bash "+cmd+"]")
	l.waitFinal(k)

	if n := cardsFor(l.harness, k, cmd); n != 1 {
		t.Errorf("%d cards for an always-allowed command, want 1", n)
	}
	conv := l.conversation(k)
	as, err := l.st.ApprovalsForConversation(ctxT(t), conv.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(as) != 2 || as[0].Decision != store.DecisionAlways || as[0].DecidedBy != "carol" ||
		as[1].Decision != store.DecisionGrant || !strings.Contains(as[1].DecidedBy, "grant #1") {
		t.Errorf("audit = %+v", as)
	}
	gs, err := l.st.ActiveGrants(ctxT(t), conv.ID)
	if err != nil || len(gs) != 1 || gs[0].Tool != "Bash" || gs[0].Match != cmd || gs[0].GrantedBy != "carol" {
		t.Errorf("grants = %+v, %v", gs, err)
	}

	// Nothing was written where the CLI keeps permission rules.
	if _, err := os.Stat(filepath.Join(l.workdir, ".claude", "settings.local.json")); !os.IsNotExist(err) {
		t.Errorf("the workspace has .claude/settings.local.json (%v)", err)
	}
	after := settingsFiles(t, home, l.workdir)
	for p, h := range after {
		if filepath.Base(p) == ".claude.json" {
			continue // the CLI's own state changes every run; checked for the rule below
		}
		if old, ok := before[p]; !ok || old != h {
			t.Errorf("settings file %s was created or changed", p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			t.Errorf("settings file %s disappeared", p)
		}
	}
	for p := range after {
		if filepath.Base(p) != ".claude.json" {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), cmd) {
			t.Errorf("%s holds the always-allowed command", p)
		}
	}
}
