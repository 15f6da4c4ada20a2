// Package pgtest runs a throwaway PostgreSQL server for tests: Debian's
// postgresql package (or any install whose initdb and pg_ctl it finds),
// initialised into a temporary directory and listening on a Unix socket
// only — no network, no containers, no system service. Run one Server per
// test process (Shared starts it for the first test that needs it; TestMain
// stops it), hand each test a fresh database with NewDatabase, and Stop the
// server at the end.
//
// Start needs the PostgreSQL server binaries: $PG_BIN, else `pg_config
// --bindir`, else the newest /usr/lib/postgresql/*/bin. As root it runs
// them as the "postgres" user (initdb refuses root). Without them Start
// returns an error wrapping ErrNoPostgres: the caller skips its PostgreSQL
// tests, or fails them under CI (see Require).
package pgtest

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/internal/testkit"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
)

// ErrNoPostgres: the PostgreSQL server binaries are not installed.
var ErrNoPostgres = errors.New("PostgreSQL server binaries not found (install Debian's postgresql package, or set PG_BIN)")

// User is the superuser of the test server; connections need no password.
const User = "bridge"

// Options tune a test server.
type Options struct {
	// Durable keeps PostgreSQL's default fsync on every commit. Off by
	// default: tests need no crash safety, and creating a database per
	// test is much faster without. Benchmarks that compare with SQLite's
	// synchronous=FULL turn it on.
	Durable bool
}

// Server is a running test server. Its methods are safe for concurrent use.
type Server struct {
	dir   string   // socket directory; the cluster is in dir/data
	bin   string   // directory of initdb and pg_ctl
	runAs []string // "runuser -u postgres --" as root, else empty
	admin *sql.DB  // connection to the "postgres" database
	n     atomic.Int64
}

// Start initialises and starts a server in a new temporary directory. The
// caller must Stop it.
func Start(ctx context.Context, opt Options) (*Server, error) {
	bin, err := findBin()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	s := &Server{dir: dir, bin: bin}
	if os.Geteuid() == 0 {
		if err := s.giveToPostgres(); err != nil {
			return nil, errors.Join(err, os.RemoveAll(dir))
		}
	}
	if err := s.run(ctx, "initdb", "-D", s.data(), "-A", "trust", "-U", User, "-E", "UTF8", "--locale=C", "--no-sync"); err != nil {
		return nil, errors.Join(err, os.RemoveAll(dir))
	}
	conf := "-k " + dir + " -h '' -c max_connections=200"
	if !opt.Durable {
		conf += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
	}
	if err := s.run(ctx, "pg_ctl", "-D", s.data(), "-o", conf, "-l", filepath.Join(dir, "log"), "-w", "-t", "60", "start"); err != nil {
		logTail := s.logTail()
		return nil, errors.Join(fmt.Errorf("%w\n%s", err, logTail), os.RemoveAll(dir))
	}
	s.admin, err = sql.Open("pgx", s.DSN("postgres"))
	if err == nil {
		err = s.admin.PingContext(ctx)
	}
	if err != nil {
		return nil, errors.Join(fmt.Errorf("pgtest: connect: %w", err), s.Stop())
	}
	return s, nil
}

// DSN returns the connection string of database name on the server.
func (s *Server) DSN(name string) string {
	return fmt.Sprintf("host=%s user=%s dbname=%s sslmode=disable", s.dir, User, name)
}

// URL returns database name on the server as a postgres:// URL (the form
// `bridge migrate-store` takes), with the socket directory as its host.
func (s *Server) URL(name string) string {
	return "postgres://" + User + "@/" + url.PathEscape(name) + "?host=" + url.QueryEscape(s.dir) + "&sslmode=disable"
}

// CreateDatabase creates database name as a copy of template (“” = an
// empty database). template must have no open connections.
func (s *Server) CreateDatabase(ctx context.Context, name, template string) error {
	q := "CREATE DATABASE " + quote(name)
	if template != "" {
		// FILE_COPY copies the template's files at once: twice as fast as
		// PostgreSQL 15's default (WAL_LOG) for a small database.
		q += " TEMPLATE " + quote(template) + " STRATEGY = FILE_COPY"
	}
	if _, err := s.admin.ExecContext(ctx, q); err != nil {
		return fmt.Errorf("pgtest: create database %s: %w", name, err)
	}
	return nil
}

// NewDatabase creates a database for tb (a copy of template, or empty when
// template is ""), drops it when tb ends, and returns its DSN.
func (s *Server) NewDatabase(tb testing.TB, template string) string {
	tb.Helper()
	return s.DSN(s.NewDatabaseName(tb, template))
}

// NewDatabaseName is NewDatabase returning the database's name.
func (s *Server) NewDatabaseName(tb testing.TB, template string) string {
	tb.Helper()
	name := fmt.Sprintf("t%d", s.n.Add(1))
	if err := s.CreateDatabase(context.Background(), name, template); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if _, err := s.admin.Exec("DROP DATABASE IF EXISTS " + quote(name) + " WITH (FORCE)"); err != nil {
			tb.Errorf("pgtest: drop database %s: %v", name, err)
		}
	})
	return name
}

// Stop stops the server and removes its directory.
func (s *Server) Stop() error {
	var errs []error
	if s.admin != nil {
		errs = append(errs, s.admin.Close())
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	errs = append(errs, s.run(ctx, "pg_ctl", "-D", s.data(), "-m", "fast", "-w", "stop"), os.RemoveAll(s.dir))
	return errors.Join(errs...)
}

// Require returns srv, or ends tb: failed when CI is set (CI=true, 1 or
// yes: PostgreSQL must be installed there), skipped otherwise. err is what Start returned.
func Require(tb testing.TB, srv *Server, err error) *Server {
	tb.Helper()
	if srv != nil {
		return srv
	}
	testkit.SkipOrFail(tb, "no PostgreSQL: %v", err)
	return nil
}

// StartFor starts a server for tb alone, stopped when the test ends;
// without PostgreSQL tb is skipped, or failed under CI (see Require). The
// tests of a package that need it more than once share one (Shared).
func StartFor(tb testing.TB) *Server {
	tb.Helper()
	srv, err := Start(context.Background(), Options{})
	srv = Require(tb, srv, err)
	tb.Cleanup(func() {
		if err := srv.Stop(); err != nil {
			tb.Errorf("stop PostgreSQL: %v", err)
		}
	})
	return srv
}

func (s *Server) data() string { return filepath.Join(s.dir, "data") }

// run runs one of the server's programs (as the postgres user when root).
func (s *Server) run(ctx context.Context, prog string, args ...string) error {
	argv := append(slices.Clone(s.runAs), filepath.Join(s.bin, prog))
	argv = append(argv, args...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Dir = s.dir
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("pgtest: %s: %w: %s", prog, err, strings.TrimSpace(out.String()))
	}
	return nil
}

// giveToPostgres hands the directory to the postgres user and runs the
// programs as that user: initdb cannot run as root.
func (s *Server) giveToPostgres() error {
	u, err := user.Lookup("postgres")
	if err != nil {
		return fmt.Errorf("pgtest: running as root needs a postgres user: %w", err)
	}
	uid, err1 := strconv.Atoi(u.Uid)
	gid, err2 := strconv.Atoi(u.Gid)
	if err := errors.Join(err1, err2); err != nil {
		return fmt.Errorf("pgtest: postgres user: %w", err)
	}
	if err := os.Chown(s.dir, uid, gid); err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	runuser, err := exec.LookPath("runuser")
	if err != nil {
		return fmt.Errorf("pgtest: running as root needs runuser: %w", err)
	}
	s.runAs = []string{runuser, "-u", "postgres", "--"}
	return nil
}

func (s *Server) logTail() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "log"))
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// findBin returns the directory of initdb and pg_ctl.
func findBin() (string, error) {
	if d := os.Getenv("PG_BIN"); d != "" {
		return d, nil
	}
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		d := strings.TrimSpace(string(out))
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int { return version(b) - version(a) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", ErrNoPostgres
}

// version is the major version in a /usr/lib/postgresql/N/bin path.
func version(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

func quote(ident string) string { return `"` + strings.ReplaceAll(ident, `"`, `""`) + `"` }
