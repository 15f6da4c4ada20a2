package fakemodel

import (
	"io"
	"log/slog"
	"strings"
	"testing"
)

func TestStartWithPlannerAndForget(t *testing.T) {
	tests := []struct {
		name     string
		forget   bool
		wantKept int
	}{
		{"recording", false, 2},
		{"forgetting", true, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var seen []string
			srv, err := StartWith(Options{
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
				Forget: tc.forget,
				Plan: func(req Request, newToolID func() string) Reply {
					seen = append(seen, LastUserText(req)) // requests below are sequential
					return textReply("custom", "custom: "+LastUserText(req))
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			c := closingClient(t)
			for _, text := range []string{"one", "two"} {
				resp := postAPI(t, c, srv.URL()+"/v1/messages", msgs(`[{"role":"user","content":"`+text+`"}]`))
				a := assemble(t, parseSSE(t, resp.Body))
				resp.Body.Close()
				if len(a.Blocks) != 1 || a.Blocks[0]["text"] != "custom: "+text {
					t.Errorf("answer to %q: %+v, want the planner's", text, a.Blocks)
				}
			}
			if strings.Join(seen, ",") != "one,two" {
				t.Errorf("planner saw %v", seen)
			}
			if n := len(srv.Requests()); n != tc.wantKept {
				t.Errorf("%d requests kept, want %d", n, tc.wantKept)
			}
		})
	}
}

func TestStartWithNeedsLogger(t *testing.T) {
	if srv, err := StartWith(Options{}); err == nil {
		srv.Close()
		t.Fatal("StartWith without a logger succeeded")
	}
}
