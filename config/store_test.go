package config

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

// secretDSN is a DSN whose password must never be printed.
const secretDSN = "postgres://bridge:pw-s3cret@db.internal:5432/bridge"

func TestStoreValues(t *testing.T) {
	cases := []struct {
		name  string
		lines []string // none = key absent
		env   map[string]string
		want  Store
	}{
		{"absent: sqlite", nil, nil, Store{Driver: StoreSQLite}},
		{"section null: sqlite", []string{"store:"}, nil, Store{Driver: StoreSQLite}},
		{"sqlite", []string{"store: {driver: sqlite}"}, nil, Store{Driver: StoreSQLite}},
		{"postgres from the environment", []string{`store: {driver: postgres, dsn: "${DATABASE_URL}"}`},
			map[string]string{"DATABASE_URL": secretDSN}, Store{Driver: StorePostgres, DSN: secretDSN}},
		{"postgres key=value", []string{`store: {driver: postgres, dsn: "host=/run/postgresql dbname=bridge"}`}, nil,
			Store{Driver: StorePostgres, DSN: "host=/run/postgresql dbname=bridge"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := mustParse(t, withRetention(tc.lines...), tc.env)
			if c.Store != tc.want {
				t.Errorf("Store = %#v, want %#v", c.Store, tc.want)
			}
			sum := c.Summary()
			if strings.Contains(sum, "pw-s3cret") {
				t.Errorf("summary shows the password:\n%s", sum)
			}
			if tc.want.Driver == StoreSQLite && (!strings.Contains(sum, "(database "+c.DBPath()+")") || strings.Contains(sum, "store:")) {
				t.Errorf("sqlite summary changed:\n%s", sum)
			}
			if tc.want.Driver == StorePostgres && !strings.Contains(sum, "store: postgres dsn=<redacted>\n") {
				t.Errorf("summary lacks the store line:\n%s", sum)
			}
		})
	}
}

func TestStoreProblems(t *testing.T) {
	cases := []struct{ name, line, path, msg string }{
		{"unknown driver", "store: {driver: mysql}", "store.driver", `store driver "mysql"`},
		{"postgres without dsn", "store: {driver: postgres}", "store.dsn", "required with driver postgres"},
		{"postgres empty dsn", `store: {driver: postgres, dsn: ""}`, "store.dsn", "required with driver postgres"},
		{"sqlite with dsn", `store: {dsn: "host=x"}`, "store.dsn", "only for driver postgres"},
		{"not a dsn", `store: {driver: postgres, dsn: "pw-s3cret"}`, "store.dsn", "not a PostgreSQL connection string"},
		{"unknown key", "store: {path: x.db}", "store.path", "unknown"},
		{"a list", "store: {dsn: [a]}", "store.dsn", "got a list"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := problemsOf(t, withRetention(tc.line), nil)
			if len(got) != 1 {
				t.Fatalf("got %d problems, want 1:\n%s", len(got), fmtProblems(got))
			}
			if p := got[0]; p.Line != 5 || p.Path != tc.path || !strings.Contains(p.Msg, tc.msg) || strings.Contains(p.Msg, "pw-s3cret") {
				t.Errorf("problem = %s; want line 5, path %s, message containing %q and no secret", p, tc.path, tc.msg)
			}
		})
	}
}

// TestStoreDSNRedacted: the DSN is a secret in every output.
func TestStoreDSNRedacted(t *testing.T) {
	c := mustParse(t, withRetention(`store: {driver: postgres, dsn: "${DATABASE_URL}"}`), map[string]string{"DATABASE_URL": secretDSN})
	var logs strings.Builder
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("x", "store", c.Store, "config", c)
	slog.New(slog.NewTextHandler(&logs, nil)).Info("x", "store", c.Store)
	js, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	outs := []string{logs.String(), string(js), c.Summary()}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		outs = append(outs, fmt.Sprintf(verb, c.Store), fmt.Sprintf(verb, *c), fmt.Sprintf(verb, c))
	}
	for _, out := range outs {
		if strings.Contains(out, "pw-s3cret") || strings.Contains(out, "db.internal") {
			t.Errorf("DSN leaks: %s", out)
		}
	}
	if s := fmt.Sprint(c.Store); s != "store{driver:postgres dsn:<redacted>}" {
		t.Errorf("Store formats as %q", s)
	}
}
