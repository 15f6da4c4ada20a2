package connlease_test

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges/adapters/discord/discordfake"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
)

// helperEnv, in a process's environment, makes it the replica process of
// TestDiscordHolderKilled: "DSN|token|api URL".
const helperEnv = "CONNLEASE_TEST_REPLICA"

// TestReplicaProcess is the killed replica's process (run by
// TestDiscordHolderKilled, skipped otherwise): a replica serving the
// Discord bot until it is killed.
func TestReplicaProcess(t *testing.T) {
	spec := os.Getenv(helperEnv)
	if spec == "" {
		t.Skip("runs as a replica process of TestDiscordHolderKilled only")
	}
	parts := strings.SplitN(spec, "|", 3)
	startDiscordReplicaAt(t, "replica-killed", bridgetest.OpenPostgresStore(t, parts[0]), parts[1], parts[2])
	select {} // until SIGKILL
}

// TestDiscordHolderKilled: the replica holding the Discord gateway is a
// process of its own and is killed (SIGKILL: no release, its connections
// closed by the kernel). The standby replica connects within the lease
// time plus a poll, never while the dead one was connected, and answers
// in the thread the dead one started.
func TestDiscordHolderKilled(t *testing.T) {
	srv := pg.Need(t)
	dsn := srv.NewDatabase(t, "")
	f := discordfake.New(t)

	cmd := exec.Command(os.Args[0], "-test.run=^TestReplicaProcess$", "-test.count=1")
	// Killed, the process cannot remove its t.TempDir: it makes them here.
	cmd.Env = append(os.Environ(), helperEnv+"="+dsn+"|"+f.Token()+"|"+f.URL(), "TMPDIR="+t.TempDir())
	cmd.Stdout, cmd.Stderr = t.Output(), t.Output()
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // never outlives the test
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	waitIdentifies(t, f, 1, 30*time.Second)

	startDiscordReplica(t, "replica-b", bridgetest.OpenPostgresStore(t, dsn), f)
	thread := f.SendMessage(channel, guild, alice, "<@"+f.BotID()+"> first", true)
	answered(t, f, thread, "first")

	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	_ = cmd.Wait()
	took := waitIdentifies(t, f, 2, 3*leaseTime).Sub(killed)
	if limit := leaseTime + leaseTime/5 + time.Second; took > limit {
		t.Errorf("the standby connected %v after the holder was killed, want within %v", took, limit)
	}
	t.Logf("take-over after SIGKILL of the holder: %v (lease %v)", took, leaseTime)
	f.SendMessage(thread, guild, alice, "second", false)
	answered(t, f, thread, "second")
	if st := f.GatewayStats(); st.MaxLive != 1 {
		t.Errorf("gateway had %d live connections at once, want 1: %+v", st.MaxLive, st)
	}
}
