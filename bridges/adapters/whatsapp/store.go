package whatsapp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"

	_ "github.com/mattn/go-sqlite3" // the device store's driver
	"go.mau.fi/whatsmeow/store/sqlstore"
)

// deviceStoreDSN is the SQLite DSN of a device store file: foreign keys on
// (whatsmeow's upgrades need them), WAL, and a busy timeout.
func deviceStoreDSN(path string) string {
	return "file:" + path + "?_foreign_keys=on&_journal_mode=WAL&_busy_timeout=5000"
}

// OpenDeviceStore opens (creating it and its directory if needed) the
// WhatsApp device store at path, one file per bot (config
// whatsapp.device_store), and upgrades its schema to the library's
// version. The caller closes it.
func OpenDeviceStore(ctx context.Context, path string, log *slog.Logger) (*sqlstore.Container, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("whatsapp device store %s: %w", path, err)
	}
	c, err := sqlstore.New(ctx, "sqlite3", deviceStoreDSN(path), Logger(log, "Database"))
	if err != nil {
		return nil, fmt.Errorf("whatsapp device store %s: %w", path, err)
	}
	return c, nil
}

// ErrDeviceInUse: another process holds the bot's device store (a second
// bridge, or whatsapp-link, on the same file). Two clients on one device
// replace each other's connection ("stream replaced") until WhatsApp logs
// the device out.
var ErrDeviceInUse = errors.New("whatsapp: the device store is in use by another process")

// LockDeviceStore takes an exclusive advisory lock (flock) on path+".lock",
// next to the device store file, for as long as this process uses the
// device: Open holds it until its close function runs, Link while it
// links. It fails at once with ErrDeviceInUse when another process holds
// it. The lock ends with the process, so a crash leaves none behind.
// unlock releases it.
func LockDeviceStore(path string) (unlock func() error, err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("whatsapp device store %s: lock: %w", path, err)
	}
	f, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("whatsapp device store %s: lock: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("whatsapp device store %s: %w (stop the other bridge or whatsapp-link using it; never relink because of this)", path, ErrDeviceInUse)
		}
		return nil, fmt.Errorf("whatsapp device store %s: lock: %w", path, err)
	}
	return f.Close, nil // closing the file releases the lock
}
