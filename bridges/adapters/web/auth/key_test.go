package auth

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/store"
)

// keyStore opens a store (the same code on PostgreSQL, tested there in
// store/webstore) closed when t ends.
func keyStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "bridge.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// writeKey writes key as dir's key file (0600).
func writeKey(t *testing.T, dir string, key []byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, SessionKeyFile), key, 0o600); err != nil {
		t.Fatal(err)
	}
}

// noKeyIn fails t when text shows key, raw or encoded.
func noKeyIn(t *testing.T, what, text string, key []byte) {
	t.Helper()
	for _, enc := range []string{string(key), hex.EncodeToString(key), base64.StdEncoding.EncodeToString(key),
		base64.RawURLEncoding.EncodeToString(key), base64.RawStdEncoding.EncodeToString(key)} {
		if strings.Contains(text, enc) {
			t.Errorf("%s shows the session key:\n%s", what, text)
		}
	}
}

// TestLoadSessionKeyOneBridge: one bridge keeps its key in data_dir
// (0600, 32 bytes, the same on the next start) and leaves the store's
// shared key alone.
func TestLoadSessionKeyOneBridge(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	log := slog.New(slog.DiscardHandler)
	key, err := LoadSessionKey(ctx, dir, nil, log)
	if err != nil || len(key) != SessionKeyLen {
		t.Fatalf("LoadSessionKey = %d bytes, %v", len(key), err)
	}
	fi, err := os.Stat(filepath.Join(dir, SessionKeyFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v, %v; want mode 0600", fi, err)
	}
	again, err := LoadSessionKey(ctx, dir, nil, log)
	if err != nil || !bytes.Equal(again, key) {
		t.Fatalf("second start: same key %v, %v", bytes.Equal(again, key), err)
	}
}

// TestLoadSessionKeyReplicas: replicas with data_dirs of their own and no
// key file get one key from the store — a cookie signed on one is valid on
// the other — and write no key file; the key is not logged.
func TestLoadSessionKeyReplicas(t *testing.T) {
	ctx := context.Background()
	st := keyStore(t)
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	dirA, dirB := t.TempDir(), t.TempDir()
	keyA, err := LoadSessionKey(ctx, dirA, st, log)
	if err != nil || len(keyA) != SessionKeyLen {
		t.Fatalf("replica A: %d bytes, %v", len(keyA), err)
	}
	keyB, err := LoadSessionKey(ctx, dirB, st, log)
	if err != nil || !bytes.Equal(keyA, keyB) {
		t.Fatalf("replica B: the same key as A %v, %v", bytes.Equal(keyA, keyB), err)
	}
	for _, dir := range []string{dirA, dirB} {
		if _, err := os.Stat(filepath.Join(dir, SessionKeyFile)); !os.IsNotExist(err) {
			t.Errorf("a replica wrote a key file into its data_dir: %v", err)
		}
	}
	us, _, err := NewUsers([]config.WebUser{{Name: "ana", Role: config.RoleAdmin, Token: anaToken}}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	now := func() time.Time { return time.Now() }
	cookie, err := NewSessions(keyA, us, st, log, now).Issue(ctx, us.ByName("ana"))
	if err != nil {
		t.Fatal(err)
	}
	if NewSessions(keyB, us, st, log, now).Check(ctx, cookie) == nil {
		t.Error("a cookie signed on replica A is refused on replica B")
	}
	if !strings.Contains(logs.String(), "a new session key is shared by every replica") {
		t.Errorf("the logs do not say a shared key was made:\n%s", logs.String())
	}
	noKeyIn(t, "the logs", logs.String(), keyA)
}

// TestLoadSessionKeyUpgrade: replicas an operator gave one key file (as
// the docs said before the key moved into the store) keep their sessions:
// the first to start stores its file's key, the others find the same. A
// replica started later with another key file gets the stored key, and a
// warning that names the file but not the key.
func TestLoadSessionKeyUpgrade(t *testing.T) {
	ctx := context.Background()
	st := keyStore(t)
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	old := bytes.Repeat([]byte{0x5a}, 32)
	us, _, err := NewUsers([]config.WebUser{{Name: "ana", Role: config.RoleAdmin, Token: anaToken}}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	now := func() time.Time { return time.Now() }
	cookie, err := NewSessions(old, us, st, log, now).Issue(ctx, us.ByName("ana")) // signed in before the upgrade
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"A", "B"} {
		dir := t.TempDir()
		writeKey(t, dir, old)
		key, err := LoadSessionKey(ctx, dir, st, log)
		if err != nil || !bytes.Equal(key, old) {
			t.Fatalf("replica %s: the key of its file %v, %v", name, bytes.Equal(key, old), err)
		}
		if NewSessions(key, us, st, log, now).Check(ctx, cookie) == nil {
			t.Errorf("replica %s signed ana out on the upgrade", name)
		}
	}
	if !strings.Contains(logs.String(), "the session key of web-session.key is now shared") {
		t.Errorf("the logs do not say the file's key is shared now:\n%s", logs.String())
	}

	dirC, other := t.TempDir(), bytes.Repeat([]byte{0x33}, 32)
	writeKey(t, dirC, other)
	key, err := LoadSessionKey(ctx, dirC, st, log)
	if err != nil || !bytes.Equal(key, old) {
		t.Fatalf("replica C with another key file: the stored key %v, %v", bytes.Equal(key, old), err)
	}
	if !strings.Contains(logs.String(), "differs from the session key the replicas share") {
		t.Errorf("no warning about C's key file:\n%s", logs.String())
	}
	noKeyIn(t, "the logs", logs.String(), old)
	noKeyIn(t, "the logs", logs.String(), other)
}

// TestLoadSessionKeyFailsClosed: with replicas, a key file readable by
// others or too short is an error (as for one bridge), which shows no key,
// and nothing is stored.
func TestLoadSessionKeyFailsClosed(t *testing.T) {
	ctx := context.Background()
	st := keyStore(t)
	log := slog.New(slog.DiscardHandler)
	open := t.TempDir()
	secret := bytes.Repeat([]byte{'k'}, 40)
	if err := os.WriteFile(filepath.Join(open, SessionKeyFile), secret, 0o644); err != nil {
		t.Fatal(err)
	}
	short := t.TempDir()
	writeKey(t, short, []byte("kkkkkkkk"))
	for name, dir := range map[string]string{"readable by others": open, "too short": short} {
		for _, shared := range []KeyStore{nil, st} {
			_, err := LoadSessionKey(ctx, dir, shared, log)
			if err == nil {
				t.Errorf("%s (shared %v): no error", name, shared != nil)
				continue
			}
			noKeyIn(t, "the error", err.Error(), secret)
		}
	}
	if _, stored, err := st.WebSessionKey(ctx, bytes.Repeat([]byte{1}, 32)); err != nil || !stored {
		t.Errorf("a refused key file was stored: stored %v, %v", stored, err)
	}
}
