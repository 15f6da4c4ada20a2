package slackfake

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"
)

// maxUploadBytes caps what the fake accepts in one upload.
const maxUploadBytes = 64 << 20

// Upload is a file shared with files.completeUploadExternal after
// files.getUploadURLExternal and the upload POST, as Slack's external
// upload flow (slack-go's UploadFile) does it.
type Upload struct {
	FileID   string
	Name     string // filename given to getUploadURLExternal
	Title    string
	Channel  string // channel_id it was shared to
	ThreadTS string // thread_ts, "" at top level
	Comment  string // initial_comment (mrkdwn)
	Content  []byte
	TS       string // ts of the message that carries it
	At       time.Time
}

// pendingUpload is a file between getUploadURLExternal and completion.
type pendingUpload struct {
	name    string
	length  int
	content []byte
	done    bool // bytes received
}

// Uploads returns every completed upload, in order.
func (s *Server) Uploads() []Upload {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.uploads)
}

// WaitForUpload waits until a completed upload satisfies pred.
func (s *Server) WaitForUpload(pred func(Upload) bool, timeout time.Duration) (Upload, error) {
	var found Upload
	err := s.WaitFor(func() bool {
		for _, u := range s.Uploads() {
			if pred(u) {
				found = u
				return true
			}
		}
		return false
	}, timeout)
	return found, err
}

// getUploadURLLocked answers files.getUploadURLExternal: a file id and an
// upload URL on the fake (Slack's is on files.slack.com).
func (s *Server) getUploadURLLocked(p url.Values, r *http.Request) apiResult {
	name := p.Get("filename")
	length, err := strconv.Atoi(p.Get("length"))
	switch {
	case name == "":
		return fail("invalid_arguments")
	case err != nil || length <= 0:
		return fail("invalid_length")
	case length > maxUploadBytes:
		return fail("file_too_large")
	}
	id := s.nextID("F")
	s.pendingUploads[id] = &pendingUpload{name: name, length: length}
	return ok(map[string]any{"upload_url": "http://" + r.Host + "/upload/" + id, "file_id": id})
}

// serveUpload receives the bytes of a pending upload: a multipart POST
// with a "file" part, like Slack's upload URL. It answers "OK - <size>".
func (s *Server) serveUpload(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	status, body := http.StatusOK, ""
	var content []byte
	f, _, err := r.FormFile("file")
	if err == nil {
		content, err = io.ReadAll(io.LimitReader(f, maxUploadBytes+1))
		f.Close()
	}
	s.mu.Lock()
	pu := s.pendingUploads[id]
	switch {
	case r.Method != http.MethodPost:
		status = http.StatusMethodNotAllowed
	case pu == nil:
		status = http.StatusNotFound
	case err != nil:
		status, body = http.StatusBadRequest, err.Error()
	case len(content) != pu.length:
		status, body = http.StatusBadRequest, fmt.Sprintf("got %d bytes, announced %d", len(content), pu.length)
	default:
		pu.content, pu.done = content, true
		body = fmt.Sprintf("OK - %d", len(content))
	}
	s.calls = append(s.calls, Call{Method: "files.upload_url", Params: url.Values{"id": {id}}, Status: status, At: time.Now()})
	s.notify()
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

// completeUploadLocked answers files.completeUploadExternal: it shares the
// uploaded files into channel_id (and thread_ts) as one message whose text
// is initial_comment, and records each as an Upload.
func (s *Server) completeUploadLocked(p url.Values) apiResult {
	var files []struct {
		ID    string `json:"id"`
		Title string `json:"title"`
	}
	if err := json.Unmarshal([]byte(p.Get("files")), &files); err != nil || len(files) == 0 {
		return fail("invalid_arguments")
	}
	for _, f := range files {
		if pu := s.pendingUploads[f.ID]; pu == nil || !pu.done {
			return fail("file_not_found")
		}
	}
	ch := p.Get("channel_id")
	if ch == "" {
		return fail("channel_not_found")
	}
	m := Message{Channel: ch, TS: s.nextTS(), ThreadTS: p.Get("thread_ts"), Text: p.Get("initial_comment"), At: time.Now()}
	var summaries, shared []map[string]any
	for _, f := range files {
		pu := s.pendingUploads[f.ID]
		delete(s.pendingUploads, f.ID)
		title := f.Title
		if title == "" {
			title = pu.name
		}
		s.uploads = append(s.uploads, Upload{FileID: f.ID, Name: pu.name, Title: title, Channel: ch, ThreadTS: m.ThreadTS,
			Comment: m.Text, Content: pu.content, TS: m.TS, At: m.At})
		summaries = append(summaries, map[string]any{"id": f.ID, "title": title})
		shared = append(shared, map[string]any{"id": f.ID, "name": pu.name, "title": title, "size": len(pu.content)})
		m.Files = append(m.Files, pu.name)
	}
	s.messages[ch+"/"+m.TS] = &m
	s.posts = append(s.posts, m)
	out := ok(map[string]any{"files": summaries})
	if s.echo {
		out.after = func() {
			ev := botMessage(m)
			ev["subtype"] = "file_share"
			ev["files"] = shared
			ev["channel"] = ch
			ev["channel_type"] = channelType(ch)
			ev["event_ts"] = m.TS
			s.eventLocked(ev, m.TS)
		}
	}
	return out
}
