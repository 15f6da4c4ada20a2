package migrations

import (
	"regexp"
	"strings"
	"testing"
	"testing/fstest"
)

// txRE finds transaction control statements (not a trigger's BEGIN … END),
// which the store owns.
var txRE = regexp.MustCompile(`(?im)^\s*(BEGIN(\s+(DEFERRED|IMMEDIATE|EXCLUSIVE))?(\s+TRANSACTION)?|COMMIT|ROLLBACK)\s*;`)

func TestListEmbedded(t *testing.T) {
	ms, err := List()
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	if len(ms) < 2 {
		t.Fatalf("List returned %d migrations, want at least 2", len(ms))
	}
	for i, m := range ms {
		if m.Version != i+1 {
			t.Errorf("migration %d: version %d, want %d", i, m.Version, i+1)
		}
		if !strings.HasPrefix(m.SQL, "-- "+strings.TrimSuffix(m.Name, ".sql")) {
			t.Errorf("%s: header comment must start with %q", m.Name, "-- "+strings.TrimSuffix(m.Name, ".sql"))
		}
		if txRE.MatchString(m.SQL) {
			t.Errorf("%s: must not manage its own transaction", m.Name)
		}
	}
	if got := Latest(ms); got != len(ms) {
		t.Errorf("Latest = %d, want %d", got, len(ms))
	}
}

func TestLoad(t *testing.T) {
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	tests := []struct {
		name    string
		fs      fstest.MapFS
		want    []string // names in order, if no error
		wantErr string
	}{
		{
			name: "ordered regardless of listing",
			fs: fstest.MapFS{
				"0002_b.sql":   file("-- b\nSELECT 2;"),
				"0001_a.sql":   file("-- a\nSELECT 1;"),
				"README.md":    file("ignored"),
				"0003_c_d.sql": file("\n-- c\nSELECT 3;"),
			},
			want: []string{"0001_a.sql", "0002_b.sql", "0003_c_d.sql"},
		},
		{name: "empty", fs: fstest.MapFS{}, want: nil},
		{
			name:    "gap",
			fs:      fstest.MapFS{"0001_a.sql": file("-- a"), "0003_c.sql": file("-- c")},
			wantErr: "expected version 0002",
		},
		{
			name:    "duplicate version",
			fs:      fstest.MapFS{"0001_a.sql": file("-- a"), "0001_b.sql": file("-- b")},
			wantErr: "expected version 0002",
		},
		{
			name:    "starts at two",
			fs:      fstest.MapFS{"0002_a.sql": file("-- a")},
			wantErr: "expected version 0001",
		},
		{
			name:    "bad name",
			fs:      fstest.MapFS{"1_init.sql": file("-- a")},
			wantErr: "name must look like",
		},
		{
			name:    "upper case description",
			fs:      fstest.MapFS{"0001_Init.sql": file("-- a")},
			wantErr: "name must look like",
		},
		{
			name:    "missing header",
			fs:      fstest.MapFS{"0001_init.sql": file("CREATE TABLE t (x);")},
			wantErr: "header comment",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms, err := Load(tt.fs)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Load error = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			var names []string
			for _, m := range ms {
				names = append(names, m.Name)
			}
			if strings.Join(names, ",") != strings.Join(tt.want, ",") {
				t.Fatalf("names = %v, want %v", names, tt.want)
			}
		})
	}
}
