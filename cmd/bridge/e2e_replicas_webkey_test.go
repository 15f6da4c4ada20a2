package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	ab, dsn := startWebReplica(t)
	a := ab.bridge
	ana := webSignIn(t, "http://"+a.addr+"/signin#token="+anaWebToken)
	ana.on("http://" + a.addr)
	b := ab.replica(t)
	ana.on("http://" + b.addr)
	ana.on("http://" + a.addr)
	bob := webSignIn(t, "http://"+b.addr+"/signin#token="+bobWebToken)
	bob.on("http://" + a.addr)

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
