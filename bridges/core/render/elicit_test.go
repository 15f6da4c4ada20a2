package render_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges/core/render"
)

// An elicitation's flat schema becomes one question per field, in the
// CLI's order; answers come back typed by the schema, and a required
// field without an answer is named.
func TestParseElicitation(t *testing.T) {
	schema := `{"properties":{
		"env":{"type":"string","title":"Environment","enum":["staging","production"]},
		"confirm":{"type":"boolean","title":"Run the migrations too","description":"also\nthe seeds"},
		"count":{"type":"integer"}},
		"required":["env"]}`
	_, _, err := render.ParseElicitation(streamjson.Elicitation{Schema: json.RawMessage(schema)})
	if err == nil {
		t.Fatal("an integer field beside others parsed; want refused (it needs typed text)")
	}
	schema = `{"properties":{
		"env":{"type":"string","title":"Environment","enum":["staging","production"]},
		"confirm":{"type":"boolean","title":"Run the migrations too","description":"also\nthe seeds"}},
		"required":["env"]}`
	form, qs, err := render.ParseElicitation(streamjson.Elicitation{Schema: json.RawMessage(schema), PropertyOrder: []string{"confirm", "env"}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, q := range qs {
		got = append(got, q.Question)
	}
	if want := []string{"Run the migrations too — also the seeds", "Environment"}; !reflect.DeepEqual(got, want) {
		t.Errorf("questions %q, want %q", got, want)
	}
	if m := form.Missing(map[string]string{"Run the migrations too — also the seeds": "Yes"}); m != "`Environment`" {
		t.Errorf("missing %q, want the required Environment", m)
	}
	content, err := form.Content(map[string]string{"Run the migrations too — also the seeds": "Yes", "Environment": "STAGING"})
	if err != nil || !reflect.DeepEqual(content, map[string]any{"confirm": true, "env": "staging"}) {
		t.Errorf("content %v, %v; want confirm true and env staging", content, err)
	}
	if _, err := form.Content(map[string]string{"Environment": "qa"}); err == nil {
		t.Error("a value outside the enum was accepted")
	}
	for _, bad := range []streamjson.Elicitation{
		{Mode: "url", URL: "https://example.com"},
		{Schema: json.RawMessage(`{"properties":{}}`)},
		{Schema: json.RawMessage(`{"properties":{"o":{"type":"object"}}}`)},
	} {
		if _, _, err := render.ParseElicitation(bad); err == nil {
			t.Errorf("%+v parsed; want refused", bad)
		}
	}
}
