package core

import (
	"testing"

	"github.com/agentbridge/agentbridge/agent"
)

func TestAuthFailed(t *testing.T) {
	for _, tc := range []struct {
		r    agent.Result
		want bool
	}{
		{agent.Result{IsError: true, APIErrorStatus: 401, Text: "API Error: 401"}, true},
		{agent.Result{IsError: true, Text: "Not logged in · Please run /login"}, true},
		{agent.Result{IsError: true, Text: "Invalid API key · Fix external API key"}, true},
		{agent.Result{IsError: true, APIErrorStatus: 500, Text: "API Error: 500 overloaded"}, false},
		{agent.Result{IsError: true, Subtype: "error_max_turns"}, false},
		{agent.Result{Text: "I am not logged in to GitHub"}, false}, // not an error: the model's own words
	} {
		if got := authFailed(tc.r); got != tc.want {
			t.Errorf("authFailed(%+v) = %v, want %v", tc.r, got, tc.want)
		}
	}
}
