package config

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func TestTranscriptionValues(t *testing.T) {
	c := mustParse(t, withRetention(
		"transcription:",
		"  url: https://stt.example/v1/audio/transcriptions",
		"  model: whisper-1",
		"  api_key: ${STT_KEY}",
	), map[string]string{"STT_KEY": "sk-very-secret"})
	tr := c.Transcription
	if !tr.Enabled() || tr.URL != "https://stt.example/v1/audio/transcriptions" || tr.Model != "whisper-1" || tr.APIKey != "sk-very-secret" {
		t.Fatalf("Transcription = %+v", tr)
	}
	var logged strings.Builder
	slog.New(slog.NewTextHandler(&logged, nil)).Info("cfg", "t", tr)
	for _, out := range []string{c.Summary(), fmt.Sprint(tr), fmt.Sprintf("%#v", tr), fmt.Sprintf("%+v", tr), logged.String()} {
		if strings.Contains(out, "sk-very-secret") {
			t.Errorf("the api key leaks: %s", out)
		}
	}
	if !strings.Contains(c.Summary(), "transcription: url=https://stt.example/v1/audio/transcriptions model=whisper-1 api_key=set\n") {
		t.Errorf("summary lacks the transcription line:\n%s", c.Summary())
	}

	off := mustParse(t, withRetention(), nil)
	if off.Transcription.Enabled() || strings.Contains(off.Summary(), "transcription") {
		t.Errorf("absent transcription: enabled=%v, summary:\n%s", off.Transcription.Enabled(), off.Summary())
	}
	local := mustParse(t, withRetention("transcription: {url: \"http://127.0.0.1:8080/v1/audio/transcriptions\", model: base, api_key: k}"), nil)
	if !local.Transcription.Enabled() {
		t.Error("a loopback http endpoint with a key is refused")
	}
}

func TestTranscriptionProblems(t *testing.T) {
	cases := []struct{ name, line, path, msg string }{
		{"model without url", "transcription: {model: whisper-1}", "transcription.model", "transcription.url is empty"},
		{"key without url", "transcription: {api_key: k}", "transcription.api_key", "transcription.url is empty"},
		{"url without model", "transcription: {url: \"https://stt.example/v1/audio/transcriptions\"}", "transcription.model", "required"},
		{"not http", "transcription: {url: \"ftp://stt.example/x\", model: m}", "transcription.url", "bad transcription url"},
		{"no host", "transcription: {url: \"https:///v1\", model: m}", "transcription.url", "bad transcription url"},
		{"user info", "transcription: {url: \"https://u:p@stt.example/v1\", model: m}", "transcription.url", "bad transcription url"},
		{"key in clear", "transcription: {url: \"http://stt.example/v1/audio/transcriptions\", model: m, api_key: k}", "transcription.url", "sent in clear"},
		{"unknown key", "transcription: {language: de}", "transcription.language", "unknown"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := problemsOf(t, withRetention(tc.line), nil)
			if len(got) != 1 {
				t.Fatalf("got %d problems, want 1:\n%s", len(got), fmtProblems(got))
			}
			if p := got[0]; p.Line != 5 || p.Path != tc.path || !strings.Contains(p.Msg, tc.msg) {
				t.Errorf("problem = %s; want line 5, path %s, message containing %q", p, tc.path, tc.msg)
			}
			if strings.Contains(got[0].Msg, "u:p@") {
				t.Errorf("the url's password is shown: %s", got[0].Msg)
			}
		})
	}
}
