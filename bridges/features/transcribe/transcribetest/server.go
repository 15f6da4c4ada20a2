package transcribetest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Request is what the fake server received in one valid request.
type Request struct {
	Model    string
	FileName string
	FileType string // the file part's Content-Type
	Audio    []byte
	Auth     string // the Authorization header
}

// Server is a fake OpenAI-style /v1/audio/transcriptions endpoint. It
// checks each request (POST, multipart/form-data, a model field, a file
// part holding a WAV or Ogg Opus file, the expected key) and answers
// {"text": Text}; a request that fails a check gets 400 and fails the test.
type Server struct {
	URL  string // the endpoint to configure: <base>/v1/audio/transcriptions
	Key  string // the Bearer key required ("" = none)
	Text string // the transcript answered

	t    testing.TB
	mu   sync.Mutex
	reqs []Request
}

// NewServer starts a fake endpoint answering text, closed with the test.
func NewServer(t testing.TB, key, text string) *Server {
	s := &Server{Key: key, Text: text, t: t}
	hs := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(hs.Close)
	s.URL = hs.URL + "/v1/audio/transcriptions"
	return s
}

// Requests returns the valid requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	req, err := s.check(r)
	if err != nil {
		s.t.Errorf("transcription request refused: %v", err)
		http.Error(w, `{"error":{"message":"`+err.Error()+`"}}`, http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"text": s.Text})
}

func (s *Server) check(r *http.Request) (Request, error) {
	var req Request
	if r.Method != http.MethodPost || r.URL.Path != "/v1/audio/transcriptions" {
		return req, fmt.Errorf("%s %s, want POST /v1/audio/transcriptions", r.Method, r.URL.Path)
	}
	req.Auth = r.Header.Get("Authorization")
	if want := "Bearer " + s.Key; s.Key != "" && req.Auth != want {
		return req, fmt.Errorf("authorization header %q is not the key", req.Auth)
	}
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" {
		return req, fmt.Errorf("content type %q, want multipart/form-data", r.Header.Get("Content-Type"))
	}
	mr := multipart.NewReader(r.Body, params["boundary"])
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return req, fmt.Errorf("multipart body: %w", err)
		}
		data, err := io.ReadAll(p)
		if err != nil {
			return req, fmt.Errorf("read part %s: %w", p.FormName(), err)
		}
		switch p.FormName() {
		case "model":
			req.Model = string(data)
		case "file":
			req.FileName, req.FileType, req.Audio = p.FileName(), p.Header.Get("Content-Type"), data
		}
	}
	switch {
	case req.Model == "":
		return req, fmt.Errorf("no model field")
	case req.FileName == "":
		return req, fmt.Errorf("no file part with a file name")
	case !IsWAV(req.Audio) && !IsOggOpus(req.Audio):
		return req, fmt.Errorf("file %s (%d bytes, starts %q) is neither WAV nor Ogg Opus", req.FileName, len(req.Audio), bytes.ToValidUTF8(req.Audio[:min(12, len(req.Audio))], nil))
	}
	return req, nil
}
