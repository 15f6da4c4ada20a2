package whatsapp

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

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
