package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/bridges/adapters/web/webtest"
	"github.com/agentbridge/agentbridge/store"
)

// TestWebReplicasShareSigningKey: two replicas with data_dirs of their
// own and no key file copied between them sign cookies with one key, kept
// in the database. Ana, signed in on A before B started, is signed in on B
// — and still on A: B's start ended none of A's sessions; Bob, signed in
// on B, is signed in on A. Neither replica wrote a key file, and the key
// shows in neither's logs nor /healthz.
func TestWebReplicasShareSigningKey(t *testing.T) {
	t.Parallel()
	ab, dsn := startWebReplica(t, "")
	a := ab.bridge
	ana := webtest.SignIn(t, "http://"+a.addr+"/signin#token="+anaWebToken)
	ana.On("http://" + a.addr)
	b := ab.replica(t)
	ana.On("http://" + b.addr)
	ana.On("http://" + a.addr)
	bob := webtest.SignIn(t, "http://"+b.addr+"/signin#token="+bobWebToken)
	bob.On("http://" + a.addr)

	key := sharedKey(t, dsn)
	encodings := []string{hex.EncodeToString(key), base64.StdEncoding.EncodeToString(key),
		base64.RawStdEncoding.EncodeToString(key), base64.RawURLEncoding.EncodeToString(key), string(key)}
	for name, p := range map[string]*bridgeProc{"A": a, "B": b} {
		if _, err := os.Stat(filepath.Join(p.dir, "data", "web-session.key")); !os.IsNotExist(err) {
			t.Errorf("replica %s wrote a key file into its data_dir (%v)", name, err)
		}
		resp, err := http.Get("http://" + p.addr + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		health, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, enc := range encodings {
			if strings.Contains(p.logs.String(), enc) || strings.Contains(string(health), enc) {
				t.Errorf("replica %s shows the signing key in its logs or /healthz", name)
			}
		}
	}
}

// TestWebReplicasKeyFileSeeds: the upgrade path. Replica A starts with a
// key file in its data_dir (as the docs once said to copy into every
// replica): the replicas share that key, so cookies it signed stay valid,
// and B, started with no file, signs with it too.
func TestWebReplicasKeyFileSeeds(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	file := make([]byte, 32)
	_, _ = rand.Read(file)
	if err := os.WriteFile(filepath.Join(dataDir, "web-session.key"), file, 0o600); err != nil {
		t.Fatal(err)
	}
	ab, dsn := startWebReplica(t, dataDir)
	if !bytes.Equal(sharedKey(t, dsn), file) {
		t.Fatal("the replicas do not share the key of A's key file")
	}
	ana := webtest.SignIn(t, "http://"+ab.bridge.addr+"/signin#token="+anaWebToken)
	cfgB := strings.Replace(ab.cfg, fmt.Sprintf("data_dir: %q", dataDir), `data_dir: "./data"`, 1)
	b := startBridge(t, t.TempDir(), cfgB, ab.env...)
	ana.On("http://" + b.addr)
	if !strings.Contains(ab.bridge.logs.String(), "the session key of web-session.key is now shared by every replica") {
		t.Errorf("replica A does not say its key file's key is shared now:\n%s", ab.bridge.logs)
	}
}

// sharedKey reads the signing key the replicas on dsn share, failing t
// when there is none.
func sharedKey(t *testing.T, dsn string) []byte {
	t.Helper()
	ctx := context.Background()
	st, err := store.OpenPostgres(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	probe := make([]byte, 32)
	_, _ = rand.Read(probe)
	key, stored, err := st.WebSessionKey(ctx, probe)
	if err != nil || stored {
		t.Fatalf("the replicas stored no signing key in the database: stored now %v, %v", stored, err)
	}
	return key
}
