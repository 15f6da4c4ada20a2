package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/internal/testkit"
	"go.yaml.in/yaml/v3"
)

// envRef is a ${NAME} reference in a config file.
var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// dummyEnv returns a lookupEnv that answers a dummy value for every
// variable text references (and nothing else): the shapes the loader
// checks (Slack's token prefixes, a PostgreSQL URL), made up.
func dummyEnv(text string) func(string) (string, bool) {
	env := map[string]string{}
	for _, m := range envRef.FindAllStringSubmatch(text, -1) {
		name := m[1]
		switch {
		case name == "DATABASE_URL":
			env[name] = "postgres://bridge:dummy@db.invalid:5432/bridge?sslmode=disable"
		case strings.Contains(name, "SLACK_BOT"):
			env[name] = "xoxb-dummy-0123456789"
		case strings.Contains(name, "SLACK_APP"):
			env[name] = "xapp-dummy-0123456789"
		default:
			env[name] = "dummy-" + strings.ToLower(name) + "-0123456789abcdef"
		}
	}
	return func(k string) (string, bool) { v, ok := env[k]; return v, ok }
}

// checkDeployConfig runs `bridge check-config` on text (a bridge.yaml
// shipped with the deployment files) with the variables it references set
// to dummies, and fails on any problem the loader reports.
func checkDeployConfig(t *testing.T, name, text string) {
	t.Helper()
	if !envRef.MatchString(text) {
		t.Errorf("%s references no ${…} variable: its secrets would be in the file", name)
	}
	path := filepath.Join(t.TempDir(), "bridge.yaml")
	testkit.WriteFile(t, path, text)
	var stdout, stderr bytes.Buffer
	if code := run(t.Context(), []string{"check-config", "-config", path}, &stdout, &stderr, dummyEnv(text)); code != exitOK {
		t.Errorf("check-config of %s: exit %d\n%s", name, code, stderr.String())
		return
	}
	if !strings.HasPrefix(stdout.String(), "config ok") {
		t.Errorf("check-config of %s: %s", name, stdout.String())
	}
}

// TestDeployConfigsCheck: the bridge.yaml of the Kubernetes ConfigMap and
// every config of the compose profiles pass the real config loader (as
// `bridge check-config` runs it), with the variables they reference set.
func TestDeployConfigsCheck(t *testing.T) {
	root := filepath.Join("..", "..", "deploy")
	b, err := os.ReadFile(filepath.Join(root, "kubernetes", "configmap.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cm struct {
		Data map[string]string `yaml:"data"`
	}
	if err := yaml.Unmarshal(b, &cm); err != nil {
		t.Fatalf("configmap.yaml: %v", err)
	}
	if cm.Data["bridge.yaml"] == "" {
		t.Fatal("configmap.yaml has no bridge.yaml")
	}
	checkDeployConfig(t, "deploy/kubernetes/configmap.yaml", cm.Data["bridge.yaml"])

	files, err := filepath.Glob(filepath.Join(root, "compose", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no compose configs: %v", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		checkDeployConfig(t, "deploy/compose/"+filepath.Base(f), string(b))
	}
}
