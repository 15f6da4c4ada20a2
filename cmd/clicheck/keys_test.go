package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func shapeOf(t *testing.T, lines ...string) Shape {
	t.Helper()
	s := Shape{}
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		s.Add(m)
	}
	return s
}

// TestDiffBothWays: a frame kind, a field and a value type that only one
// side has are each reported, on the right side.
func TestDiffBothWays(t *testing.T) {
	a := shapeOf(t,
		`{"type":"system","subtype":"init","cwd":"/","gone":1}`,
		`{"type":"result","subtype":"success","result":"x","n":1}`,
		`{"type":"command_lifecycle","state":"queued"}`)
	b := shapeOf(t,
		`{"type":"system","subtype":"init","cwd":"/","sandbox_enabled":false}`,
		`{"type":"result","subtype":"success","result":"x","n":"1"}`,
		`{"type":"control_request","request_id":"r","request":{"subtype":"x_new","deep":{"k":[{"z":1}]}}}`)
	var out strings.Builder
	if !Diff(&out, "old", a, "new", b) {
		t.Fatal("no difference reported")
	}
	got := out.String()
	for _, want := range []string{
		"frame kinds only in old: 1\n  command_lifecycle\n",
		"frame kinds only in new: 1\n  control_request/x_new\n",
		"fields only in old (frame kinds seen in both):\n  system/init: gone\n",
		"fields only in new (frame kinds seen in both):\n  system/init: sandbox_enabled\n",
		"result/success: n: number → string",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("diff lacks %q:\n%s", want, got)
		}
	}
	out.Reset()
	if Diff(&out, "a", a, "b", a) {
		t.Errorf("a shape differs from itself:\n%s", out.String())
	}
	if p := b["control_request/x_new"]; p["request.deep.k[].z"] == nil {
		t.Errorf("nested paths not recorded: %v", p)
	}
}
