package deploy

import (
	"bytes"
	"maps"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// composeFile is the part of the compose specification compose.yaml uses
// (https://github.com/compose-spec/compose-spec); a key outside it fails
// the decoding, as a typo would be ignored or refused by compose.
type composeFile struct {
	Services map[string]composeService `yaml:"services"`
	Volumes  map[string]*struct{}      `yaml:"volumes"`
}

type composeService struct {
	Build           string                      `yaml:"build"`
	Image           string                      `yaml:"image"`
	Profiles        []string                    `yaml:"profiles"`
	Restart         string                      `yaml:"restart"`
	StopGracePeriod string                      `yaml:"stop_grace_period"`
	DependsOn       map[string]composeDependsOn `yaml:"depends_on"`
	SecurityOpt     []string                    `yaml:"security_opt"`
	Environment     map[string]string           `yaml:"environment"`
	Volumes         []string                    `yaml:"volumes"`
	Ports           []string                    `yaml:"ports"`
	Healthcheck     *struct {
		Test     []string `yaml:"test"`
		Interval string   `yaml:"interval"`
		Timeout  string   `yaml:"timeout"`
		Retries  int      `yaml:"retries"`
	} `yaml:"healthcheck"`
}

type composeDependsOn struct {
	Condition string `yaml:"condition"`
}

func readCompose(t *testing.T) composeFile {
	t.Helper()
	dec := yaml.NewDecoder(bytes.NewReader(readManifest(t, "../compose.yaml")))
	dec.KnownFields(true)
	var f composeFile
	if err := dec.Decode(&f); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	return f
}

// TestComposeProfiles: the default service is the single SQLite bridge,
// in no profile (`docker compose up` starts it alone); the "replicas"
// profile has PostgreSQL and two bridge replicas that wait for it, reach
// it by DATABASE_URL, read the replicas config, keep their own data_dir
// and publish different ports; every named volume is declared.
func TestComposeProfiles(t *testing.T) {
	f := readCompose(t)
	if b := f.Services["bridge"]; len(b.Profiles) != 0 || b.Image != "agentbridge" || !slices.Contains(b.Volumes, "bridge-data:/data") {
		t.Errorf("the default bridge service changed: %+v", b)
	}
	var inProfile []string
	for name, s := range f.Services {
		if slices.Contains(s.Profiles, "replicas") {
			inProfile = append(inProfile, name)
		}
	}
	slices.Sort(inProfile)
	if want := []string{"postgres", "replica-1", "replica-2"}; !slices.Equal(inProfile, want) {
		t.Fatalf("profile replicas has %v, want %v", inProfile, want)
	}
	pg := f.Services["postgres"]
	if pg.Healthcheck == nil || !slices.Contains(pg.Healthcheck.Test, "pg_isready") || pg.Environment["POSTGRES_DB"] != "bridge" {
		t.Errorf("postgres service %+v: want a pg_isready health check and database bridge", pg)
	}
	ports := map[string]string{}
	for _, name := range []string{"replica-1", "replica-2"} {
		s := f.Services[name]
		if s.DependsOn["postgres"].Condition != "service_healthy" {
			t.Errorf("%s does not wait for a healthy postgres: %+v", name, s.DependsOn)
		}
		if dsn := s.Environment["DATABASE_URL"]; !strings.HasPrefix(dsn, "postgres://bridge:") || !strings.Contains(dsn, "@postgres:5432/bridge") {
			t.Errorf("%s DATABASE_URL %q", name, dsn)
		}
		if !slices.Contains(s.Volumes, "./deploy/compose/bridge.replicas.yaml:/etc/bridge.yaml:ro") ||
			!slices.Contains(s.Volumes, name+"-data:/data") {
			t.Errorf("%s volumes %v: want the replicas config and a data_dir of its own", name, s.Volumes)
		}
		if s.StopGracePeriod != "40s" || !slices.Equal(s.SecurityOpt, f.Services["bridge"].SecurityOpt) {
			t.Errorf("%s: stop grace %q, security_opt %v: want those of bridge", name, s.StopGracePeriod, s.SecurityOpt)
		}
		for _, p := range s.Ports {
			host := p[:strings.LastIndex(p, ":")]
			if other, ok := ports[host]; ok {
				t.Errorf("%s and %s both publish %s", other, name, host)
			}
			ports[host] = name
		}
	}
	for _, s := range f.Services {
		for _, v := range s.Volumes {
			if name, _, _ := strings.Cut(v, ":"); !strings.HasPrefix(name, ".") && !strings.HasPrefix(name, "/") {
				if _, ok := f.Volumes[name]; !ok {
					t.Errorf("volume %s is not declared (have %v)", name, slices.Sorted(maps.Keys(f.Volumes)))
				}
			}
		}
	}
	cfg := string(readManifest(t, "compose/bridge.replicas.yaml"))
	for _, want := range []string{"driver: postgres", `dsn: "${DATABASE_URL}"`, "enabled: true", `listen: "0.0.0.0:9464"`} {
		if !strings.Contains(cfg, want) {
			t.Errorf("bridge.replicas.yaml lacks %q", want)
		}
	}
}
