package ci

import "testing"

func TestTruthy(t *testing.T) {
	for v, want := range map[string]bool{
		"1": true, "true": true, "TRUE": true, "True": true, "yes": true, "YES": true, " true\n": true,
		"": false, "0": false, "false": false, "no": false, "off": false, "y": false, "truthy": false, "2": false,
	} {
		if got := truthy(v); got != want {
			t.Errorf("truthy(%q) = %v, want %v", v, got, want)
		}
	}
}

func TestStrict(t *testing.T) {
	t.Setenv("CI", "Yes")
	if !Strict() {
		t.Fatal("Strict() = false with CI=Yes")
	}
	t.Setenv("CI", "")
	if Strict() {
		t.Fatal("Strict() = true with CI empty")
	}
}
