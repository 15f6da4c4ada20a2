package config

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// FuzzParse: no input makes Parse panic; it returns either a usable config
// or a *ValidationError with at least one problem; and a value that came
// from the environment never appears in a problem.
func FuzzParse(f *testing.F) {
	f.Add(Example())
	f.Add(minimal)
	f.Add([]byte("agents: {a: &x {rules: [{tool: B, match: \"[a-\", action: deny}]}, b: *x}\nbots: [{name: n, platform: slack, agent: a, slack: {bot_token: \"${S}\"}}]\n"))
	f.Add([]byte("bots:\n  - name: ${X:-y}\n    platform: discord\n    discord: {token: $$}\n---\n"))
	f.Add([]byte("a: &a [*a]\n"))
	f.Add([]byte("<<: {bots: []}\n"))
	const secret = "s3cr3t"
	env := func(k string) (string, bool) {
		if strings.HasPrefix(k, "U") {
			return "", false
		}
		return secret + "-" + k, true
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data, "fuzz.yaml", env, testPlatforms)
		if err == nil {
			if c == nil || len(c.Bots) == 0 {
				t.Fatalf("valid config without bots: %v", c)
			}
			for _, b := range c.Bots {
				if b == nil || c.Agents[b.Agent] == nil {
					t.Fatalf("valid config with a dangling bot: %v", b)
				}
			}
			_ = c.Summary()
			return
		}
		var ve *ValidationError
		if !errors.As(err, &ve) || len(ve.Problems) == 0 {
			t.Fatalf("error %T without problems: %v", err, err)
		}
		if !bytes.Contains(data, []byte(secret)) && strings.Contains(err.Error(), secret) {
			t.Fatalf("problem leaks an env value: %v", err)
		}
	})
}
