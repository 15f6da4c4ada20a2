package whatsapp

import (
	"database/sql"
	"os"
	"path/filepath"
	"testing"
)

// The device store is created (with its directory) and upgraded on a new
// file, opens again without changes, keeps a saved device, and has foreign
// keys on (whatsmeow's upgrades need them).
func TestDeviceStoreOpensAndUpgrades(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data", "whatsapp-phone.db")
	c, err := OpenDeviceStore(t.Context(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	dev, err := c.GetFirstDevice(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if dev.ID != nil {
		t.Fatalf("a new store has a linked device %v", dev.ID)
	}
	saveLinked(t, c, dev, "15551234567")
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Dir(path)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("store directory: %v %v, want mode 0700", fi, err)
	}

	db, err := sql.Open("sqlite3", deviceStoreDSN(path))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var version, fk int
	if err := db.QueryRow(`SELECT version FROM whatsmeow_version`).Scan(&version); err != nil || version < 1 {
		t.Fatalf("schema version %d, %v: the store was not upgraded", version, err)
	}
	if err := db.QueryRow(`PRAGMA foreign_keys`).Scan(&fk); err != nil || fk != 1 {
		t.Errorf("foreign_keys = %d, %v, want 1", fk, err)
	}

	again, err := OpenDeviceStore(t.Context(), path, nil) // an upgraded store opens as is
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	dev, err = again.GetFirstDevice(t.Context())
	if err != nil || dev.ID == nil || dev.ID.User != "15551234567" {
		t.Fatalf("stored device = %v, %v", dev.ID, err)
	}
}

func TestDeviceStoreUnwritable(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenDeviceStore(t.Context(), filepath.Join(file, "wa.db"), nil); err == nil {
		t.Fatal("a store under a regular file opened")
	}
}
