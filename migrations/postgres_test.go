package migrations

import (
	"strings"
	"testing"
)

// TestPostgresMatchesSQLite: the PostgreSQL set is the same history as the
// SQLite set — one file per version, named the same — so that a schema
// change made for one database cannot ship without the other.
func TestPostgresMatchesSQLite(t *testing.T) {
	lite, err := List()
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	pg, err := ListPostgres()
	if err != nil {
		t.Fatalf("ListPostgres: %v", err)
	}
	for i := range max(len(lite), len(pg)) {
		switch {
		case i >= len(pg):
			t.Errorf("%s has no PostgreSQL counterpart postgres/%s", lite[i].Name, lite[i].Name)
		case i >= len(lite):
			t.Errorf("postgres/%s has no SQLite counterpart", pg[i].Name)
		case lite[i].Name != pg[i].Name:
			t.Errorf("version %d: SQLite %s, PostgreSQL %s: want the same name", i+1, lite[i].Name, pg[i].Name)
		}
	}
	for _, m := range pg {
		if !strings.HasPrefix(m.SQL, "-- "+strings.TrimSuffix(m.Name, ".sql")) {
			t.Errorf("postgres/%s: header comment must start with %q", m.Name, "-- "+strings.TrimSuffix(m.Name, ".sql"))
		}
		if txRE.MatchString(m.SQL) {
			t.Errorf("postgres/%s: must not manage its own transaction", m.Name)
		}
		var code strings.Builder // the statements, without comments
		for line := range strings.Lines(m.SQL) {
			line, _, _ = strings.Cut(line, "--")
			code.WriteString(line)
		}
		for _, bad := range []string{"AUTOINCREMENT", "BLOB", " INTEGER ", "json_extract"} {
			if strings.Contains(code.String(), bad) {
				t.Errorf("postgres/%s: contains SQLite's %q", m.Name, strings.TrimSpace(bad))
			}
		}
	}
}
