package agent

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/agent/acp"
	"github.com/agentbridge/agentbridge/agent/agenttest"
	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// whoami asks the fake ACP agent for its mode and model.
func whoami(t *testing.T, s *Session, rec *agenttest.Recorder) string {
	t.Helper()
	agenttest.Send(t, s, "whoami")
	return agenttest.NextResult(t, rec).Text
}

// TestACPModesAndModels: the modes and models an ACP agent offers for its
// session (as "modes"/"models" with session/set_mode and set_model, or as
// config options with session/set_config_option) are what SetPermissionMode
// and SetModel switch among; "default" is the agent's own choice; a choice
// it does not offer and one it refuses are a *ControlError; the
// conversation's choices (Options.PermissionMode, Model) are asked for at
// the start of a session, also a resumed one.
func TestACPModesAndModels(t *testing.T) {
	bin := testkit.BuildFakeACP(t)
	for _, shape := range []string{"modes", "configOptions"} {
		t.Run(shape, func(t *testing.T) {
			opts := acpOpts(t, bin)
			if shape == "configOptions" {
				opts.Env["FAKEACP_CONFIG_OPTIONS"] = "1"
			}
			s, rec := startACP(t, opts)
			ctx := context.Background()
			if err := s.Initialize(ctx); err != nil {
				t.Fatal(err)
			}
			o, initial, ok := s.Offered(acp.KindMode)
			if !ok || o.Current != "ask" || initial != "ask" || len(o.Available) != 5 || !o.Has("plan") {
				t.Fatalf("modes offered: %+v %q %v", o, initial, ok)
			}
			if o, _, _ := s.Offered(acp.KindModel); o.Current != "fake-small" || len(o.Available) != 2 {
				t.Fatalf("models offered: %+v", o)
			}
			if err := s.SetPermissionMode(ctx, "plan"); err != nil {
				t.Fatalf("SetPermissionMode(plan): %v", err)
			}
			if err := s.SetModel(ctx, "fake-large"); err != nil {
				t.Fatalf("SetModel(fake-large): %v", err)
			}
			if got := whoami(t, s, rec); got != "mode plan, model fake-large" {
				t.Errorf("after the switches the agent says %q", got)
			}
			if o, _, _ := s.Offered(acp.KindMode); o.Current != "plan" {
				t.Errorf("current mode %q, want plan", o.Current)
			}
			var ce *ControlError
			if err := s.SetPermissionMode(ctx, "acceptEdits"); !errors.As(err, &ce) || !errors.Is(err, err) || !strings.Contains(ce.Message, "not one of") {
				t.Errorf("a mode the agent does not offer: %v", err)
			}
			if err := s.SetPermissionMode(ctx, "locked"); !errors.As(err, &ce) || !strings.Contains(ce.Message, "not available here") {
				t.Errorf("a mode the agent refuses: %v", err)
			}
			if err := s.SetModel(ctx, "default"); err != nil {
				t.Fatalf("SetModel(default): %v", err)
			}
			if got := whoami(t, s, rec); got != "mode plan, model fake-small" {
				t.Errorf("after the model's default the agent says %q", got)
			}
			if err := s.Close(ctx); err != nil {
				t.Fatal(err)
			}
			rec.WaitClosed(t)

			// The conversation's choices, asked for at the start of the
			// resumed session (and of a fresh one).
			opts.Resume, opts.PermissionMode, opts.Model = true, "code", "fake-large"
			s2, rec2 := startACP(t, opts)
			if got := whoami(t, s2, rec2); got != "mode code, model fake-large" {
				t.Errorf("resumed with mode code and fake-large, the agent says %q", got)
			}
			opts2 := acpOpts(t, bin)
			opts2.Env = opts.Env
			opts2.PermissionMode, opts2.Model = "plan", "fake-large"
			s3, rec3 := startACP(t, opts2)
			if got := whoami(t, s3, rec3); got != "mode plan, model fake-large" {
				t.Errorf("fresh with mode plan and fake-large, the agent says %q", got)
			}
		})
	}
}

// TestACPNoChoices: an agent that offers no modes or models refuses
// SetPermissionMode and SetModel with a *ControlError that says so, and a
// conversation's stored choice it cannot apply is said at the start.
func TestACPNoChoices(t *testing.T) {
	bin := testkit.BuildFakeACP(t)
	opts := acpOpts(t, bin)
	opts.Env["FAKEACP_NO_CHOICES"] = "1"
	opts.PermissionMode = "plan"
	s, rec := startACP(t, opts)
	ctx := context.Background()
	if err := s.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	n := nextOf[streamjson.Notice](t, rec, "the stored mode's notice", nil)
	if !strings.Contains(n.Text, `mode "plan" could not be applied`) {
		t.Errorf("notice %+v", n)
	}
	var ce *ControlError
	if err := s.SetPermissionMode(ctx, "plan"); !errors.As(err, &ce) || !strings.Contains(ce.Message, "offers no mode") {
		t.Errorf("SetPermissionMode on an agent without modes: %v", err)
	}
	if err := s.SetModel(ctx, "x"); !errors.As(err, &ce) || !strings.Contains(ce.Message, "offers no model") {
		t.Errorf("SetModel on an agent without models: %v", err)
	}
	if o, _, ok := s.Offered(acp.KindMode); !ok || len(o.Available) != 0 {
		t.Errorf("offered %+v %v", o, ok)
	}
}

// TestACPUsage: an agent's cumulative cost (usage_update) becomes each
// turn's CostUSD, its tokens (the prompt result's usage) the turn's Usage,
// and a resumed session counts only what it adds; an agent that reports
// no cost ends its turns with NoCost.
func TestACPUsage(t *testing.T) {
	bin := testkit.BuildFakeACP(t)
	opts := acpOpts(t, bin)
	opts.Env["FAKEACP_COST"] = "1"
	s, rec := startACP(t, opts)
	for i := range 2 {
		agenttest.Send(t, s, "hello")
		r := agenttest.NextResult(t, rec)
		if r.NoCost || r.CostUSD != 0.25 || r.Usage.InputTokens != 120 || r.Usage.OutputTokens != 30 {
			t.Errorf("turn %d: cost %v (NoCost %v), usage %+v; want $0.25, 120 in, 30 out", i+1, r.CostUSD, r.NoCost, r.Usage)
		}
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	rec.WaitClosed(t)
	opts.Resume = true
	s2, rec2 := startACP(t, opts)
	agenttest.Send(t, s2, "hello")
	if r := agenttest.NextResult(t, rec2); r.CostUSD != 0.25 {
		t.Errorf("the resumed session's turn cost %v, want 0.25 (not the session's whole $0.75)", r.CostUSD)
	}

	plain := acpOpts(t, bin)
	s3, rec3 := startACP(t, plain)
	agenttest.Send(t, s3, "hello")
	if r := agenttest.NextResult(t, rec3); !r.NoCost || r.CostUSD != 0 {
		t.Errorf("an agent without a cost: NoCost %v, cost %v", r.NoCost, r.CostUSD)
	}
}
