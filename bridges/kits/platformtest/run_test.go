package platformtest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// runner is a platform whose Run returns err at once, or when its
// context ends (block), or never returns before release is closed.
type runner struct {
	Quiet
	err     error
	block   bool
	release chan struct{}
}

func (r runner) Run(ctx context.Context, _ bridges.Handler) error {
	switch {
	case r.release != nil:
		<-r.release
		return nil
	case r.block:
		<-ctx.Done()
		return r.err
	}
	return r.err
}

// TestRun: Err takes the error Run ended with by itself (the cleanup then
// checks nothing); the cleanup fails the test when Run, cancelled,
// returns an error or does not return in time.
func TestRun(t *testing.T) {
	errGone := errors.New("token revoked")
	var got error
	if fs := testkit.RunTB(func(tb *testkit.FakeTB) { got = Run(tb, runner{err: errGone}, nil, time.Second).Err(tb) }).Failures(); len(fs) != 0 || got != errGone {
		t.Errorf("Err = %v, failures %q; want the error and no failure", got, fs)
	}
	if fs := testkit.RunTB(func(tb *testkit.FakeTB) { Run(tb, runner{block: true}, nil, time.Second) }).Failures(); len(fs) != 0 {
		t.Errorf("a Run that ends nil when cancelled: failures %q", fs)
	}
	fs := testkit.RunTB(func(tb *testkit.FakeTB) { Run(tb, runner{block: true, err: errGone}, nil, time.Second) }).Failures()
	if len(fs) != 1 || !strings.Contains(fs[0], "token revoked after cancel") {
		t.Errorf("a Run that fails when cancelled: failures %q", fs)
	}
	release := make(chan struct{})
	defer close(release)
	fs = testkit.RunTB(func(tb *testkit.FakeTB) { Run(tb, runner{release: release}, nil, 20*time.Millisecond) }).Failures()
	if len(fs) != 1 || fs[0] != "Run did not return after cancel" {
		t.Errorf("a Run that does not return: failures %q", fs)
	}
	fs = testkit.RunTB(func(tb *testkit.FakeTB) { Run(tb, runner{release: release}, nil, 20*time.Millisecond).Err(tb) }).Failures()
	if len(fs) < 1 || fs[0] != "Run did not return within 20ms" {
		t.Errorf("Err on a Run that does not return: failures %q", fs)
	}
}

// TestWantFailure: a Failure with the remedy whose reason and hint say
// the words passes; another remedy, a missing word or no Failure fails.
func TestWantFailure(t *testing.T) {
	f := fmt.Errorf("bot b: %w", &bridges.Failure{Reason: "token 4004 rejected", Remedy: bridges.RemedyRestart, Hint: "fix the token"})
	if fs := testkit.RunTB(func(tb *testkit.FakeTB) {
		WantFailure(tb, f, bridges.RemedyRestart, []string{"4004"}, []string{"token"})
	}).Failures(); len(fs) != 0 {
		t.Errorf("a matching failure: %q", fs)
	}
	for name, tc := range map[string]struct {
		err          error
		remedy       string
		reason, hint []string
		want         string
	}{
		"remedy":     {f, bridges.RemedyUpgrade, nil, nil, "remedy = "},
		"reason":     {f, bridges.RemedyRestart, []string{"4014"}, nil, `does not mention "4014"`},
		"hint":       {f, bridges.RemedyRestart, nil, []string{"scope"}, `does not mention "scope"`},
		"no failure": {errors.New("plain"), bridges.RemedyRestart, nil, nil, "want a *bridges.Failure"},
	} {
		fs := testkit.RunTB(func(tb *testkit.FakeTB) { WantFailure(tb, tc.err, tc.remedy, tc.reason, tc.hint) }).Failures()
		if len(fs) != 1 || !strings.Contains(fs[0], tc.want) {
			t.Errorf("%s: failures %q, want one saying %q", name, fs, tc.want)
		}
	}
}
