package config

import (
	"strings"
	"testing"
	"time"
)

const pgStore = `store: {driver: postgres, dsn: "host=/run/postgresql dbname=bridge"}`

func TestReplicasValues(t *testing.T) {
	cases := []struct {
		name  string
		lines []string
		want  Replicas
	}{
		{"absent: one process", nil, Replicas{Lease: DefaultReplicaLease}},
		{"postgres without replicas", []string{pgStore}, Replicas{Lease: DefaultReplicaLease}},
		{"enabled", []string{pgStore, "replicas: {enabled: true}"}, Replicas{Enabled: true, Lease: DefaultReplicaLease}},
		{"short lease", []string{pgStore, "replicas: {enabled: true, lease: 3s}"}, Replicas{Enabled: true, Lease: 3 * time.Second}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if c := mustParse(t, withRetention(tc.lines...), nil); c.Replicas != tc.want {
				t.Errorf("Replicas = %+v, want %+v", c.Replicas, tc.want)
			}
		})
	}
}

func TestReplicasProblems(t *testing.T) {
	cases := []struct {
		name  string
		lines []string
		line  int
		path  string
		msg   string
	}{
		{"on sqlite", []string{"replicas:", "  enabled: true"}, 6, "replicas.enabled", "need store.driver: postgres"},
		{"lease too short", []string{pgStore, "replicas:", "  enabled: true", "  lease: 500ms"}, 8, "replicas.lease", "outside 1s to 10m0s"},
		{"lease too long", []string{pgStore, "replicas: {lease: 1h}"}, 6, "replicas.lease", "outside"},
		{"not a duration", []string{pgStore, "replicas: {lease: soon}"}, 6, "replicas.lease", ""},
		{"unknown key", []string{pgStore, "replicas: {count: 3}"}, 6, "replicas.count", "unknown"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := problemsOf(t, withRetention(tc.lines...), nil)
			if len(got) != 1 {
				t.Fatalf("got %d problems, want 1:\n%s", len(got), fmtProblems(got))
			}
			if p := got[0]; p.Line != tc.line || p.Path != tc.path || !strings.Contains(p.Msg, tc.msg) {
				t.Errorf("problem = %s; want line %d, path %s, message containing %q", p, tc.line, tc.path, tc.msg)
			}
		})
	}
}

func TestReplicasNeedRestart(t *testing.T) {
	old := mustParse(t, withRetention(pgStore), nil)
	new := mustParse(t, withRetention(pgStore, "replicas: {enabled: true}"), nil)
	if d := Compare(old, new); len(d.Restart) != 1 || d.Restart[0] != "replicas" {
		t.Errorf("Compare = %+v, want replicas to need a restart", d)
	}
}
