package render

import (
	"testing"

	"github.com/agentbridge/agentbridge/agent/streamjson"
)

func TestAuthFailed(t *testing.T) {
	for _, tc := range []struct {
		r    streamjson.Result
		want bool
	}{
		{streamjson.Result{IsError: true, APIErrorStatus: 401, Text: "API Error: 401"}, true},
		{streamjson.Result{IsError: true, Text: "Not logged in · Please run /login"}, true},
		{streamjson.Result{IsError: true, Text: "Invalid API key · Fix external API key"}, true},
		{streamjson.Result{IsError: true, APIErrorStatus: 500, Text: "API Error: 500 overloaded"}, false},
		{streamjson.Result{IsError: true, Subtype: "error_max_turns"}, false},
		{streamjson.Result{Text: "I am not logged in to GitHub"}, false}, // not an error: the model's own words
	} {
		if got := AuthFailed(tc.r); got != tc.want {
			t.Errorf("AuthFailed(%+v) = %v, want %v", tc.r, got, tc.want)
		}
	}
}
