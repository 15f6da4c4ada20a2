package config

import (
	"cmp"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/agentbridge/agentbridge/config/decode"
)

// Store drivers (yaml store.driver).
const (
	StoreSQLite   = "sqlite"   // the default: one file, data_dir/bridge.db
	StorePostgres = "postgres" // a PostgreSQL database named by store.dsn
)

// Store selects the bridge database (yaml store). The zero value, and an
// absent key, is SQLite in data_dir — the embedded default.
type Store struct {
	// Driver is StoreSQLite (default) or StorePostgres.
	Driver string
	// DSN is the PostgreSQL connection string (yaml dsn, usually
	// "${DATABASE_URL}"): a postgres:// URL or libpq key=value pairs.
	// Required with postgres, refused with sqlite. It is a secret (it may
	// hold a password): it formats as "<redacted>" everywhere.
	DSN string
}

// storeSection decodes the top-level store mapping.
func (d *decoder) storeSection(dst *Store) decode.Field {
	return func(v *yaml.Node, p string) {
		d.Fields(v, p, map[string]decode.Field{
			"driver": d.Str(&dst.Driver),
			"dsn":    d.Str(&dst.DSN),
		})
	}
}

// finishStore applies the default driver and checks the pair. Messages
// never show the DSN: it may hold a password.
func (d *decoder) finishStore(c *Config) {
	s := &c.Store
	s.Driver = cmp.Or(s.Driver, StoreSQLite)
	if !d.OneOf("store.driver", s.Driver, "store driver", StoreSQLite, StorePostgres) || d.IsBad("store.dsn") {
		return
	}
	switch {
	case s.Driver == StorePostgres && s.DSN == "":
		d.Addf(d.LineOf("store.dsn"), "store.dsn", `required with driver postgres (e.g. dsn: "${DATABASE_URL}")`)
	case s.Driver == StoreSQLite && s.DSN != "":
		d.Addf(d.LineOf("store.dsn"), "store.dsn", "only for driver postgres (sqlite keeps its database in data_dir)")
	case s.Driver == StorePostgres && !looksLikeDSN(s.DSN):
		d.Addf(d.LineOf("store.dsn"), "store.dsn", "not a PostgreSQL connection string (want postgres://user@host/db or key=value pairs such as host=… dbname=…)")
	}
}

// looksLikeDSN reports whether dsn has one of the two forms pgx parses: a
// postgres:// (or postgresql://) URL or libpq key=value pairs. pgx itself
// checks the rest when the bridge connects.
func looksLikeDSN(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") || strings.Contains(dsn, "=")
}

// String implements fmt.Stringer with the DSN redacted.
func (s Store) String() string {
	if s.Driver == StorePostgres || s.DSN != "" {
		return fmt.Sprintf("store{driver:%s dsn:%s}", s.Driver, Redact(s.DSN))
	}
	return fmt.Sprintf("store{driver:%s}", s.Driver)
}

// GoString implements fmt.GoStringer (%#v) like String.
func (s Store) GoString() string { return "config." + s.String() }

// LogValue implements slog.LogValuer with the DSN redacted.
func (s Store) LogValue() slog.Value {
	return slog.GroupValue(slog.String("driver", s.Driver), slog.String("dsn", Redact(s.DSN)))
}

// MarshalJSON implements json.Marshaler with the DSN redacted.
func (s Store) MarshalJSON() ([]byte, error) {
	type plain Store
	if s.DSN != "" {
		s.DSN = redactedText
	}
	return json.Marshal(plain(s))
}

// storeString formats the store for the summary: nothing for the default
// (the data_dir line names the file), the driver and a redacted DSN else.
func storeString(s Store) string {
	if s.Driver == StoreSQLite || s.Driver == "" {
		return ""
	}
	return fmt.Sprintf("store: %s dsn=%s\n", s.Driver, Redact(s.DSN))
}
