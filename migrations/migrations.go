package migrations

import (
	"embed"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// FS holds the embedded SQLite migration files. Treat it as read-only.
//
//go:embed *.sql
var FS embed.FS

// PostgresFS holds the embedded PostgreSQL migration files, under
// postgres/: the same versions and names as FS, in PostgreSQL's dialect.
// Treat it as read-only.
//
//go:embed postgres/*.sql
var PostgresFS embed.FS

// Migration is one numbered schema step.
type Migration struct {
	Version int    // from the NNNN file name prefix, starting at 1
	Name    string // the file name, e.g. "0001_init.sql"
	SQL     string // the file content, header comment included
}

var nameRE = regexp.MustCompile(`^([0-9]{4})_([a-z0-9]+(?:_[a-z0-9]+)*)\.sql$`)

// List returns the embedded migrations ordered by version. It fails if the
// embedded set is malformed (see Load), which a test in this package rules out.
func List() ([]Migration, error) {
	return Load(FS)
}

// ListPostgres returns the embedded PostgreSQL migrations ordered by
// version (see List).
func ListPostgres() ([]Migration, error) {
	sub, err := fs.Sub(PostgresFS, "postgres")
	if err != nil {
		return nil, fmt.Errorf("postgres migrations: %w", err)
	}
	ms, err := Load(sub)
	if err != nil {
		return nil, fmt.Errorf("postgres migrations: %w", err)
	}
	return ms, nil
}

// Load reads every *.sql file at the root of fsys and returns them ordered by
// version. It rejects file names not of the form NNNN_description.sql, a set
// whose versions do not run 1, 2, 3, … without gaps or duplicates, and files
// that do not start with a "--" header comment. Other files are ignored.
func Load(fsys fs.FS) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("read migrations dir: %w", err)
	}
	var out []Migration
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		m := nameRE.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, fmt.Errorf("migration %q: name must look like 0001_description.sql", e.Name())
		}
		version, err := strconv.Atoi(m[1])
		if err != nil {
			return nil, fmt.Errorf("migration %q: bad version: %w", e.Name(), err)
		}
		body, err := fs.ReadFile(fsys, e.Name())
		if err != nil {
			return nil, fmt.Errorf("read migration %q: %w", e.Name(), err)
		}
		if !strings.HasPrefix(strings.TrimLeft(string(body), " \t\r\n"), "--") {
			return nil, fmt.Errorf("migration %q: must start with a -- header comment", e.Name())
		}
		out = append(out, Migration{Version: version, Name: e.Name(), SQL: string(body)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	for i, m := range out {
		if m.Version != i+1 {
			return nil, fmt.Errorf("migration %q: expected version %04d (versions must start at 1 without gaps or duplicates)", m.Name, i+1)
		}
	}
	return out, nil
}

// Latest returns the highest version in ms, or 0 for an empty list.
func Latest(ms []Migration) int {
	if len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].Version
}
