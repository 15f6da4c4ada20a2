package slack

import (
	"fmt"
	"os"
	"slices"
	"sort"
	"sync"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/agentbridge/agentbridge/bridges/adapters/slack/slackfake"
)

// calledScopes collects, across every test of the package, the scope each
// Web API call the adapter made to a fake needs (method → scope). It is
// the only package-level state of the tests: TestMain reads it after the
// tests ran.
var calledScopes = struct {
	mu sync.Mutex
	m  map[string]string // "method scope" → first test that needed it
}{m: map[string]string{}}

// newFake starts a fake Slack (as slackfake.New) whose calls count for
// the manifest check of TestMain.
func newFake(t testing.TB, opts ...slackfake.Option) *slackfake.Server {
	t.Helper()
	f := slackfake.New(t, opts...)
	t.Cleanup(func() { recordScopes(t.Name(), f) })
	return f
}

func recordScopes(test string, f *slackfake.Server) {
	calledScopes.mu.Lock()
	defer calledScopes.mu.Unlock()
	for _, c := range f.Calls() {
		ch := c.Params.Get("channel")
		if ch == "" {
			ch = c.Params.Get("channel_id")
		}
		if need := slackfake.RequiredScope(c.Method, ch); need != "" {
			key := c.Method + " " + need
			if _, seen := calledScopes.m[key]; !seen {
				calledScopes.m[key] = test
			}
		}
	}
}

// manifestScopes reads the bot scopes of manifest.yaml.
func manifestScopes() ([]string, error) {
	data, err := os.ReadFile("manifest.yaml")
	if err != nil {
		return nil, fmt.Errorf("read manifest: %w", err)
	}
	var m struct {
		OAuth struct {
			Scopes struct {
				Bot []string `yaml:"bot"`
			} `yaml:"scopes"`
		} `yaml:"oauth_config"`
	}
	if err := yaml.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("parse manifest: %w", err)
	}
	return m.OAuth.Scopes.Bot, nil
}

// missingFromManifest returns, sorted, each "method scope (test)" whose
// scope the manifest lacks.
func missingFromManifest(called map[string]string, manifest []string) []string {
	var missing []string
	for key, test := range called {
		var method, scope string
		fmt.Sscan(key, &method, &scope)
		if !slices.Contains(manifest, scope) {
			missing = append(missing, fmt.Sprintf("%s needs %s (called in %s)", method, scope, test))
		}
	}
	sort.Strings(missing)
	return missing
}

// scopeCheckingM runs the tests, then fails the run when the adapter
// called a method whose scope manifest.yaml does not grant: the list of
// scopes is derived from the calls the tests made, not written by hand.
type scopeCheckingM struct{ m *testing.M }

func (s scopeCheckingM) Run() int {
	code := s.m.Run()
	if code != 0 {
		return code
	}
	manifest, err := manifestScopes()
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAIL: manifest scope check:", err)
		return 1
	}
	calledScopes.mu.Lock()
	missing := missingFromManifest(calledScopes.m, manifest)
	calledScopes.mu.Unlock()
	if len(missing) > 0 {
		fmt.Fprintln(os.Stderr, "FAIL: manifest.yaml lacks scopes the adapter uses:")
		for _, m := range missing {
			fmt.Fprintln(os.Stderr, "  "+m)
		}
		return 1
	}
	return 0
}

// The check of TestMain reports a scope the manifest lacks, and every
// method the fake serves for the adapter has a scope the manifest grants.
func TestManifestScopeCheck(t *testing.T) {
	manifest, err := manifestScopes()
	if err != nil {
		t.Fatal(err)
	}
	called := map[string]string{"files.completeUploadExternal files:write": "TestX"}
	if got := missingFromManifest(called, manifest); len(got) != 0 {
		t.Errorf("missing = %v, want none", got)
	}
	without := slices.DeleteFunc(slices.Clone(manifest), func(s string) bool { return s == "files:write" })
	if got := missingFromManifest(called, without); len(got) != 1 {
		t.Errorf("missing without files:write = %v, want one entry", got)
	}
}
