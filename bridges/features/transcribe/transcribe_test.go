package transcribe_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges/features/transcribe"
	"github.com/agentbridge/agentbridge/bridges/features/transcribe/transcribetest"
)

func TestTranscribeSendsTheMultipartForm(t *testing.T) {
	for _, tc := range []struct {
		name, file, mime string
		audio            []byte
	}{
		{"wav", "note.wav", "audio/wav", transcribetest.WAV(300)},
		{"ogg opus", "voice-message.ogg", "audio/ogg", transcribetest.OggOpus()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := transcribetest.NewServer(t, "sk-secret", "  deploy the staging branch  ")
			c, err := transcribe.New(transcribe.Options{URL: srv.URL, Model: "whisper-1", APIKey: "sk-secret"})
			if err != nil {
				t.Fatal(err)
			}
			text, err := c.Transcribe(context.Background(), tc.audio, tc.file, tc.mime)
			if err != nil {
				t.Fatal(err)
			}
			if text != "deploy the staging branch" {
				t.Errorf("text = %q", text)
			}
			reqs := srv.Requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests", len(reqs))
			}
			r := reqs[0]
			if r.Model != "whisper-1" || r.FileName != tc.file || r.FileType != tc.mime || !bytes.Equal(r.Audio, tc.audio) || r.Auth != "Bearer sk-secret" {
				t.Errorf("request = model %q file %q type %q auth %q, %d bytes", r.Model, r.FileName, r.FileType, r.Auth, len(r.Audio))
			}
		})
	}
}

func TestTranscribeErrors(t *testing.T) {
	answer := func(status int, body string) string {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(status)
			_, _ = w.Write([]byte(body))
		}))
		t.Cleanup(s.Close)
		return s.URL
	}
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // then the server notices the client leaving
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	t.Cleanup(slow.Close)
	cases := []struct {
		name, url string
		audio     []byte
		timeout   time.Duration
		want      string
	}{
		{"refused", answer(401, `{"error":{"message":"Incorrect API key"}}`), transcribetest.WAV(10), 0, "answered 401 Unauthorized: {\"error\":{\"message\":\"Incorrect API key\"}}"},
		{"server error", answer(500, ""), transcribetest.WAV(10), 0, "answered 500 Internal Server Error: (empty answer)"},
		{"not json", answer(200, "<html>hi</html>"), transcribetest.WAV(10), 0, "not JSON with a text field"},
		{"no text field", answer(200, `{"txt":"x"}`), transcribetest.WAV(10), 0, "not JSON with a text field"},
		{"silence", answer(200, `{"text":"   "}`), transcribetest.WAV(10), 0, "transcript is empty"},
		{"timeout", slow.URL, transcribetest.WAV(10), 100 * time.Millisecond, "context deadline exceeded"},
		{"too large", answer(200, `{"text":"x"}`), make([]byte, transcribe.MaxAudioBytes+1), 0, "larger than the transcription limit"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := transcribe.New(transcribe.Options{URL: tc.url, Model: "m", APIKey: "sk-secret", Timeout: tc.timeout})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Transcribe(context.Background(), tc.audio, "a.wav", "audio/wav")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "sk-secret") {
				t.Errorf("the key leaks into the error: %v", err)
			}
			if tc.name == "too large" && !errors.Is(err, transcribe.ErrTooLarge) {
				t.Errorf("err = %v, want ErrTooLarge", err)
			}
		})
	}
}

func TestTestAudioIsReal(t *testing.T) {
	if !transcribetest.IsWAV(transcribetest.WAV(100)) || !transcribetest.IsOggOpus(transcribetest.OggOpus()) {
		t.Fatal("generated audio does not parse")
	}
	bad := transcribetest.OggOpus()
	bad[30] ^= 1 // inside OpusHead: the page checksum no longer matches
	if transcribetest.IsOggOpus(bad) {
		t.Error("a corrupted Ogg page passes the checksum")
	}
}
