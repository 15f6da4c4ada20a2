// Package transcribe turns voice notes into text through an OpenAI-style
// speech-to-text endpoint (POST multipart/form-data with the fields file
// and model to …/v1/audio/transcriptions; the answer is JSON with a text
// field), which hosted services and local whisper servers both speak.
// It is the uploads' Transcriber (uploads.New, the core's Files), wired from
// config transcription in bridges/app.
package transcribe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"
)

// Limits of one request.
const (
	// MaxAudioBytes is the largest audio file sent (the hosted APIs' own
	// limit is 25 MB); larger files are refused before any request.
	MaxAudioBytes = 25 << 20
	// DefaultTimeout bounds one request, upload and answer.
	DefaultTimeout = 2 * time.Minute
	// maxAnswerBytes bounds the answer read: a transcript of 25 MB of
	// speech is far smaller.
	maxAnswerBytes = 1 << 20
)

// ErrTooLarge is returned for audio above MaxAudioBytes.
var ErrTooLarge = errors.New("audio larger than the transcription limit")

// Options configures a Client.
type Options struct {
	URL    string // the endpoint, e.g. https://api.openai.com/v1/audio/transcriptions
	Model  string // the form field model, e.g. whisper-1
	APIKey string // "" = no Authorization header; a secret, never in errors or logs
	// Timeout bounds one request (0 = DefaultTimeout).
	Timeout time.Duration
	// HTTP is the client used (nil = a new one without a global timeout).
	HTTP *http.Client
}

// Client transcribes audio. It is safe for concurrent use.
type Client struct {
	o Options
}

// New returns a Client for o; o.URL and o.Model must be set (config
// validates them).
func New(o Options) (*Client, error) {
	if o.URL == "" || o.Model == "" {
		return nil, errors.New("transcription: url and model are required")
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.HTTP == nil {
		o.HTTP = &http.Client{}
	}
	return &Client{o: o}, nil
}

// Transcribe sends audio (a file named name, of type mimeType; "" =
// application/octet-stream) and returns the transcript, trimmed. It blocks
// for at most the client's timeout. An empty transcript is an error (a
// silent note must not reach the agent as an empty message). Errors name
// the endpoint's status and a short excerpt of its answer, never the key.
func (c *Client) Transcribe(ctx context.Context, audio []byte, name, mimeType string) (string, error) {
	if len(audio) > MaxAudioBytes {
		return "", fmt.Errorf("transcribe %d bytes: %w (%d MB)", len(audio), ErrTooLarge, MaxAudioBytes>>20)
	}
	body, ctype, err := form(audio, name, mimeType, c.o.Model)
	if err != nil {
		return "", fmt.Errorf("transcribe: build request: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, c.o.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.o.URL, body)
	if err != nil {
		return "", fmt.Errorf("transcribe: %w", err)
	}
	req.Header.Set("Content-Type", ctype)
	req.Header.Set("Accept", "application/json")
	if c.o.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.o.APIKey)
	}
	resp, err := c.o.HTTP.Do(req)
	if err != nil {
		return "", fmt.Errorf("transcribe: post audio: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes))
	if err != nil {
		return "", fmt.Errorf("transcribe: read answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("transcribe: endpoint answered %s: %s", resp.Status, excerpt(raw))
	}
	var ans struct {
		Text *string `json:"text"`
	}
	if err := json.Unmarshal(raw, &ans); err != nil || ans.Text == nil {
		return "", fmt.Errorf("transcribe: answer is not JSON with a text field: %s", excerpt(raw))
	}
	text := strings.TrimSpace(*ans.Text)
	if text == "" {
		return "", errors.New("transcribe: the transcript is empty (no speech recognised)")
	}
	return text, nil
}

// form builds the multipart body: file (with its name and type) and model.
func form(audio []byte, name, mimeType, model string) (io.Reader, string, error) {
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	if err := w.WriteField("model", model); err != nil {
		return nil, "", err
	}
	if err := w.WriteField("response_format", "json"); err != nil {
		return nil, "", err
	}
	if mimeType == "" {
		mimeType = "application/octet-stream"
	}
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="file"; filename=%q`, fileName(name)))
	h.Set("Content-Type", mimeType)
	part, err := w.CreatePart(h)
	if err != nil {
		return nil, "", err
	}
	if _, err := part.Write(audio); err != nil {
		return nil, "", err
	}
	if err := w.Close(); err != nil {
		return nil, "", err
	}
	return &b, w.FormDataContentType(), nil
}

// fileName is name's base without quotes or control characters ("audio"
// when nothing is left): servers pick the decoder by its extension.
func fileName(name string) string {
	name = strings.Map(func(r rune) rune {
		if r < 0x20 || r == '"' || r == '\\' || r == 0x7f {
			return -1
		}
		return r
	}, filepath.Base(strings.ReplaceAll(name, "\\", "/")))
	if name == "" || name == "." || name == "/" {
		return "audio"
	}
	return name
}

// excerpt is the start of an error answer, valid UTF-8, on one line.
func excerpt(raw []byte) string {
	s := strings.Join(strings.Fields(string(raw)), " ")
	if len(s) > 200 {
		s = s[:200]
		for !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
		s += "…"
	}
	if s == "" {
		return "(empty answer)"
	}
	return s
}
