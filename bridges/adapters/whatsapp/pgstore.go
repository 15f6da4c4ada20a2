package whatsapp

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"regexp"
	"strings"

	"github.com/agentbridge/agentbridge/config"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"go.mau.fi/whatsmeow/store/sqlstore"
)

// PGDevices is a bot's device store in PostgreSQL: with store.driver:
// postgres the device lives in the bridge's database, so that whichever
// replica holds the bot's connection (bridges/features/replica/connlease) finds it. Each
// bot has a schema of its own there (whatsmeow's tables hold one device
// per bot; several bots would mix up which device is whose). The zero
// value means the device store is the bot's SQLite file.
type PGDevices struct {
	DSN    string // the bridge's database (config store.dsn): a secret, never shown
	Schema string // the bot's schema (DeviceSchema)
}

// PGDevicesOf is where bot's device store lives in cfg's PostgreSQL
// store; zero when the store is SQLite.
func PGDevicesOf(cfg *config.Config, bot string) PGDevices {
	if cfg == nil || cfg.Store.Driver != config.StorePostgres {
		return PGDevices{}
	}
	return PGDevices{DSN: cfg.Store.DSN, Schema: DeviceSchema(bot)}
}

// String names the store for messages (the schema, never the DSN).
func (p PGDevices) String() string { return "PostgreSQL schema " + p.Schema }

// plainName is a bot name usable as a schema name as it is.
var plainName = regexp.MustCompile(`^[a-z0-9_]{1,40}$`)

// DeviceSchema is bot's schema in PostgreSQL: "whatsapp_" and the bot's
// name, or, when the name has other characters than lower-case letters,
// digits and "_" (or is long), its letters and digits and a short hash of
// the whole name, so that two bots never share a schema.
func DeviceSchema(bot string) string {
	if plainName.MatchString(bot) {
		return "whatsapp_" + bot
	}
	var b strings.Builder
	for _, r := range strings.ToLower(bot) {
		if b.Len() < 32 && (r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			b.WriteRune(r)
		}
	}
	sum := sha256.Sum256([]byte(bot))
	return "whatsapp_" + b.String() + "_" + hex.EncodeToString(sum[:4])
}

// openPGDevices opens (creating its schema and tables if needed) the
// device store p and upgrades it to the library's schema. Replicas that
// open it at the same time take turns (an advisory lock per schema). The
// caller closes the container, which closes its connections.
func openPGDevices(ctx context.Context, p PGDevices, log *slog.Logger) (*sqlstore.Container, error) {
	pc, err := pgx.ParseConfig(p.DSN)
	if err != nil {
		return nil, fmt.Errorf("whatsapp device store (%s): store.dsn: %w", p, errors.New("cannot be parsed"))
	}
	// Every unqualified table whatsmeow names is the bot's own.
	pc.RuntimeParams["search_path"] = p.Schema
	db := stdlib.OpenDB(*pc)
	if err := prepareSchema(ctx, db, p.Schema); err != nil {
		return nil, errors.Join(fmt.Errorf("whatsapp device store (%s): %w", p, err), db.Close())
	}
	c := sqlstore.NewWithDB(db, "postgres", Logger(log, "Database"))
	if err := c.Upgrade(ctx); err != nil {
		return nil, errors.Join(fmt.Errorf("whatsapp device store (%s): upgrade: %w", p, err), c.Close())
	}
	return c, nil
}

// prepareSchema creates the bot's schema and whatsmeow's version table in
// it, under an advisory lock. The table is made here because the
// library's upgrade looks for it by name in every schema of the database
// (information_schema, not the search path): a second bot's upgrade would
// find the first bot's table and never create its own.
func prepareSchema(ctx context.Context, db *sql.DB, schema string) (err error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer func() { err = errors.Join(err, conn.Close()) }()
	h := fnv.New64a()
	h.Write([]byte("agentbridge whatsapp device store " + schema))
	key := int64(h.Sum64())
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, key); err != nil {
		return fmt.Errorf("lock the schema: %w", err)
	}
	defer func() {
		_, uerr := conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, key)
		err = errors.Join(err, uerr)
	}()
	for _, q := range []string{
		`CREATE SCHEMA IF NOT EXISTS ` + pgx.Identifier{schema}.Sanitize(),
		`CREATE TABLE IF NOT EXISTS ` + pgx.Identifier{schema, "whatsmeow_version"}.Sanitize() + ` (version INTEGER, compat INTEGER)`,
	} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("create the schema: %w", err)
		}
	}
	return nil
}
